// Test helpers for snapshots held as chunks (types.ts SnapshotChunks).

/** The chunks' bytes in one buffer: test state machines are small. */
export function joinChunks(chunks: Iterable<Uint8Array>): Uint8Array {
  const parts = [...chunks];
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
