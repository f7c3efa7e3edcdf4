// A follower's half-received InstallSnapshot: chunks accepted strictly in offset order, so that
// a lost or duplicated chunk is answered with the offset to resume from (the leader resends from
// there) instead of corrupting the image. The chunks are kept as they came, never joined.

import type { SnapshotMeta } from '../types.js';

export class SnapshotReceiver {
  private chunks: Uint8Array[] = [];
  private receivedBytes = 0;

  constructor(readonly meta: SnapshotMeta) {}

  /** Bytes accepted so far: the offset the next chunk must start at. */
  received(): number {
    return this.receivedBytes;
  }

  /** True when this receiver assembles the snapshot described by `meta`. */
  isFor(meta: SnapshotMeta): boolean {
    return meta.index === this.meta.index && meta.term === this.meta.term;
  }

  /** Accepts `chunk` at `offset` if it is the next one; returns true when accepted. */
  accept(offset: number, chunk: Uint8Array): boolean {
    if (offset !== this.receivedBytes) return false;
    if (chunk.byteLength > 0) this.chunks.push(chunk);
    this.receivedBytes += chunk.byteLength;
    return true;
  }

  /** The image's chunks in order (call once the chunk marked `done` was accepted). */
  take(): readonly Uint8Array[] {
    const chunks = this.chunks;
    this.chunks = [];
    return chunks;
  }
}
