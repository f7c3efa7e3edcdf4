// Counters a storage engine exposes for metrics: how many synced batches (fsyncs) it wrote, how
// much went into them, how long they took, and what is still waiting.

import { defined } from '../core/assert.js';

/** Upper bounds (ms, inclusive) of the fsync latency histogram buckets; one more bucket is +Inf. */
export const FSYNC_BUCKET_BOUNDS_MS: readonly number[] = [
  0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024,
];

export interface StorageStats {
  /** Synced batches written (each is one fsync of the log). */
  readonly fsyncs: number;
  /** save/saveSnapshot/compact/destroy calls written (synced or not). */
  readonly callsWritten: number;
  /** Batches written without an fsync: only writes whose loss is harmless (commit index). */
  readonly writesUnsynced: number;
  /** Log entries made durable. */
  readonly entriesWritten: number;
  /** Encoded bytes handed to the store (keys and values). */
  readonly bytesWritten: number;
  /** Calls in the last batch, and the most in any batch. */
  readonly batchCallsLast: number;
  readonly batchCallsMax: number;
  /** Bytes in the last batch, and the most in any batch. */
  readonly batchBytesLast: number;
  readonly batchBytesMax: number;
  /** Latency of writing + syncing one batch, in milliseconds. */
  readonly fsyncMsLast: number;
  readonly fsyncMsMax: number;
  readonly fsyncMsTotal: number;
  /**
   * Batches per latency bucket, not cumulative: index i counts latencies in
   * (FSYNC_BUCKET_BOUNDS_MS[i-1], FSYNC_BUCKET_BOUNDS_MS[i]]; the last index counts the rest.
   */
  readonly fsyncMsHistogram: readonly number[];
  /** Bytes and calls staged but not yet durable (the backpressure bound applies to bytes). */
  readonly pendingBytes: number;
  readonly pendingCalls: number;
  /** Snapshot files written. */
  readonly snapshotsWritten: number;
  /** Snapshot files that failed their checksum on load (dropped, or kept by a sole member). */
  readonly snapshotsCorrupt: number;
  /** Log entries dropped on load because they failed their checksum or broke contiguity. */
  readonly tornEntriesDropped: number;
  /** Hard state records found unreadable on load and restored from their copy. */
  readonly hardStatesRestored: number;
  /** Loads that found the hard state record and its copy both unreadable (the group stays down). */
  readonly hardStatesLost: number;
}

/** Mutable counters behind `StorageStats`; owned by one engine. */
export class StatsRecorder {
  fsyncs = 0;
  callsWritten = 0;
  writesUnsynced = 0;
  entriesWritten = 0;
  bytesWritten = 0;
  batchCallsLast = 0;
  batchCallsMax = 0;
  batchBytesLast = 0;
  batchBytesMax = 0;
  fsyncMsLast = 0;
  fsyncMsMax = 0;
  fsyncMsTotal = 0;
  readonly fsyncMsHistogram: number[] = Array<number>(FSYNC_BUCKET_BOUNDS_MS.length + 1).fill(0);
  snapshotsWritten = 0;
  snapshotsCorrupt = 0;
  tornEntriesDropped = 0;
  hardStatesRestored = 0;
  hardStatesLost = 0;

  /** Records one durable batch of `calls` calls, `entries` entries and `bytes` bytes. */
  recordBatch(calls: number, entries: number, bytes: number, latencyMs: number): void {
    this.fsyncs++;
    this.callsWritten += calls;
    this.entriesWritten += entries;
    this.bytesWritten += bytes;
    this.batchCallsLast = calls;
    this.batchCallsMax = Math.max(this.batchCallsMax, calls);
    this.batchBytesLast = bytes;
    this.batchBytesMax = Math.max(this.batchBytesMax, bytes);
    this.fsyncMsLast = latencyMs;
    this.fsyncMsMax = Math.max(this.fsyncMsMax, latencyMs);
    this.fsyncMsTotal += latencyMs;
    let bucket = 0;
    const bounds = FSYNC_BUCKET_BOUNDS_MS;
    while (bucket < bounds.length && latencyMs > defined(bounds[bucket], 'bound')) bucket++;
    this.fsyncMsHistogram[bucket] = defined(this.fsyncMsHistogram[bucket], 'bucket') + 1;
  }

  /** Records one batch written without an fsync. */
  recordUnsynced(calls: number, bytes: number): void {
    this.writesUnsynced++;
    this.callsWritten += calls;
    this.bytesWritten += bytes;
  }

  snapshot(pendingBytes: number, pendingCalls: number): StorageStats {
    return {
      fsyncs: this.fsyncs,
      callsWritten: this.callsWritten,
      writesUnsynced: this.writesUnsynced,
      entriesWritten: this.entriesWritten,
      bytesWritten: this.bytesWritten,
      batchCallsLast: this.batchCallsLast,
      batchCallsMax: this.batchCallsMax,
      batchBytesLast: this.batchBytesLast,
      batchBytesMax: this.batchBytesMax,
      fsyncMsLast: this.fsyncMsLast,
      fsyncMsMax: this.fsyncMsMax,
      fsyncMsTotal: this.fsyncMsTotal,
      fsyncMsHistogram: [...this.fsyncMsHistogram],
      pendingBytes,
      pendingCalls,
      snapshotsWritten: this.snapshotsWritten,
      snapshotsCorrupt: this.snapshotsCorrupt,
      tornEntriesDropped: this.tornEntriesDropped,
      hardStatesRestored: this.hardStatesRestored,
      hardStatesLost: this.hardStatesLost,
    };
  }
}
