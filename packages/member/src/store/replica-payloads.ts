// What a spool replica needs of its payload store beyond what the engine uses: checkpoints that
// tie space reclaim to saved snapshots, a sync before a snapshot is saved, and the clean-up after
// a restore. The segment store implements it on disk; the memory variant serves members whose
// Raft storage is in memory (tests).

import { MemoryPayloadStore, type PayloadStore } from '@spoolmq/engine';

/**
 * Told of each verified record of a wanted payload the store still holds: the caller gives its
 * message the payload (engine.fillPayload), whose append then reuses the record in place.
 * Returns whether the message took it.
 */
export type HeldPayloadTaker = (seq: number, payload: Uint8Array) => boolean;

/**
 * A scan of a store for the payloads it still holds (recoverHeld), run a bounded step at a time:
 * a scan of gigabytes in one go held the member's event loop for seconds (issue 13), long enough
 * for its Raft groups to lose their leaders.
 */
export interface HeldScan {
  /**
   * Scans on, reading about `bytesMax` bytes (a record larger than that whole): each intact record
   * of a wanted seq goes to `take`. Returns true once the scan is done (everything read, nothing
   * wanted any more, or the store closed). Between steps the store may be used as ever: a
   * segment deleted meanwhile is not read, and its payloads stay wanted.
   */
  step(bytesMax: number): boolean;
}

export interface ReplicaPayloadStore extends PayloadStore {
  /**
   * Marks the state as it is now, for a snapshot of it; returns the checkpoint number (ever
   * increasing). Space released before it is reclaimed once that snapshot is saved.
   */
  checkpoint(): number;
  /** The snapshot of `checkpoint` is saved durably: what no saved snapshot needs may go. */
  saved(checkpoint: number): void;
  /**
   * The state was replaced by another replica's snapshot: nothing held is referenced now. What
   * is held stays readable (recoverHeld) until a snapshot begun after this is saved.
   */
  retireAll(): void;
  /**
   * Looks for the payloads `wanted` (seq -> byte length) among everything this store still
   * holds, retired or not, by seq: each record that holds that seq with that length and passes
   * its checksum goes to `take`, and the append it leads to reuses the record (no copy). Used
   * after a snapshot whose locations mean nothing here (another replica's, or one saved before
   * its payloads were fetched), so only what this replica really lacks is fetched from peers.
   * Reads every stored byte at most once, as the returned scan is stepped; memory beyond
   * `wanted` stays bounded. Nothing is read until the first step.
   */
  recoverHeld(wanted: ReadonlyMap<number, number>, take: HeldPayloadTaker): HeldScan;
  /**
   * Reads the record of `seq` at `location` from the medium (never from a cache) and checks it:
   * null when intact, else why not (a scrub finds latent bad bytes this way).
   */
  verify(seq: number, location: number, byteLength: number): string | null;
  /** At start, after the saved snapshot was restored: drops what it does not reference. */
  sweep(): void;
  /**
   * Whether appends and reads go through the member's payload cache (default yes). Only the
   * spool's primary serves reads: a follower caching every payload it applies would hold the
   * cache's whole budget of copies nobody asks for. Turning it off drops what is cached.
   */
  setCaching(on: boolean): void;
  /**
   * Writes the appends buffered so far (the replica calls it after each run of applied
   * entries). Throws StorageError `io` on a failed write.
   */
  flush(): void;
  /** Makes every appended payload durable. Rejects on an I/O failure. */
  sync(): Promise<void>;
  close(): Promise<void>;
  /** Removes everything stored (the replica left the spool). */
  destroy(): Promise<void>;
}

/**
 * The in-memory replica store: payloads by seq, nothing to sync or reclaim by segment. Retired
 * payloads stay readable for recoverHeld until a later snapshot is saved, as the segment
 * store's retired segments do.
 */
export class MemoryReplicaPayloads extends MemoryPayloadStore implements ReplicaPayloadStore {
  private checkpoints = 0;
  /** Payloads retired (newest first) with the checkpoint count at which each was retired. */
  private retired: { readonly store: MemoryPayloadStore; readonly at: number }[] = [];
  /** The held-payload scan under way (see SegmentStore's). */
  private scanning: HeldScan | null = null;

  checkpoint(): number {
    return ++this.checkpoints;
  }

  saved(checkpoint: number): void {
    if (this.scanning !== null) return; // as the segment store: kept until the scan is done
    this.retired = this.retired.filter((retired) => retired.at >= checkpoint);
  }

  retireAll(): void {
    if (this.count > 0) this.retired.unshift({ store: this.clone(), at: this.checkpoints });
    this.clear();
  }

  recoverHeld(wanted: ReadonlyMap<number, number>, take: HeldPayloadTaker): HeldScan {
    const open = [...wanted];
    let next = 0;
    const scan: HeldScan = {
      step: (bytesMax) => {
        if (this.scanning !== scan) return true;
        let bytes = 0;
        while (next < open.length && bytes < bytesMax) {
          const [seq, byteLength] = open[next++]!;
          bytes += byteLength;
          for (const store of [this, ...this.retired.map((retired) => retired.store)]) {
            const payload = heldPayload(store, seq, byteLength);
            if (payload === null) continue;
            take(seq, payload);
            break;
          }
        }
        if (next < open.length) return false;
        this.scanning = null;
        return true;
      },
    };
    this.scanning = scan;
    return scan;
  }

  verify(seq: number, location: number, byteLength: number): string | null {
    try {
      this.read(seq, location, byteLength);
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }

  sweep(): void {}

  /** Payloads are in memory here already: nothing to cache. */
  setCaching(): void {}

  /** Appends are stored as they come: nothing waits to be written. */
  flush(): void {}

  async sync(): Promise<void> {}

  async close(): Promise<void> {}

  async destroy(): Promise<void> {
    this.clear();
    this.retired = [];
  }
}

/** The payload of `seq` in a memory store if it holds one of `byteLength` bytes, else null. */
function heldPayload(
  store: MemoryPayloadStore,
  seq: number,
  byteLength: number,
): Uint8Array | null {
  try {
    return store.read(seq, seq, byteLength);
  } catch {
    return null;
  }
}
