// A follower's half-received InstallSnapshot: chunks accepted strictly in offset order, so that
// a lost or duplicated chunk is answered with the offset to resume from (the leader resends from
// there) instead of corrupting the image. The chunks are kept as they came, never joined.

import type { SnapshotChunks, SnapshotMeta } from '../types.js';

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
  take(): SnapshotChunks {
    const chunks = this.chunks;
    this.chunks = [];
    return chunks;
  }
}

/**
 * Bytes `[start, end)` of the data held in `chunks`: a view of one chunk when the range lies in
 * it, otherwise a copy of just the range (an InstallSnapshot chunk: small).
 */
export function sliceChunks(chunks: SnapshotChunks, start: number, end: number): Uint8Array {
  let base = 0;
  let i = 0;
  while (i < chunks.length && base + chunks[i]!.byteLength <= start) {
    base += chunks[i++]!.byteLength;
  }
  if (i === chunks.length || end <= start) return new Uint8Array(0);
  const first = chunks[i]!;
  if (end - base <= first.byteLength) return first.subarray(start - base, end - base);
  const out = new Uint8Array(end - start);
  let at = 0;
  for (; i < chunks.length && at < out.length; base += chunks[i++]!.byteLength) {
    const chunk = chunks[i]!;
    const from = Math.max(0, start - base);
    const to = Math.min(chunk.byteLength, end - base);
    out.set(chunk.subarray(from, to), at);
    at += to - from;
  }
  return at === out.length ? out : out.subarray(0, at); // the range passed the data's end
}
