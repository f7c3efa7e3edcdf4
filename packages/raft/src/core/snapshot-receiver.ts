// A follower's half-received InstallSnapshot: chunks accepted strictly in offset order, so that
// a lost or duplicated chunk is answered with the offset to resume from (the leader resends from
// there) instead of corrupting the image.

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
    this.chunks.push(chunk);
    this.receivedBytes += chunk.byteLength;
    return true;
  }

  /** The whole image (call once the chunk marked `done` was accepted). */
  assemble(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0]!;
    const out = new Uint8Array(this.receivedBytes);
    let at = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  }
}
