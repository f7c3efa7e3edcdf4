// Binary wire encoding of Raft messages, as proto/raft.proto defines it (the .proto stays the
// single source of truth: the tests check this hand-written codec against protobufjs loading the
// .proto in both directions). No JSON on the wire.
// Decoded `data`/`chunk` bytes are views into the received frame, not copies.

import { fileURLToPath } from 'node:url';
import type { FrameBatch } from './frame-batch.js';
import { readFrame } from './frame-reader.js';
import { writeFrame } from './frame-writer.js';

export type { FrameBatch } from './frame-batch.js';

/** proto/raft.proto, found from this file in src/transport/ and in dist/transport/ alike. */
export const RAFT_PROTO_PATH = fileURLToPath(
  new URL('../../../../proto/raft.proto', import.meta.url),
);


/**
 * Encodes batches as one `Frame`. Numbers must be integers in [0, 2^53). Encoding is
 * hand-written (frame-writer.ts): protobufjs would build a wire object per message and split
 * each uint64 into LongBits, on the leader's hot path.
 */
export function encodeFrame(batches: readonly FrameBatch[]): Uint8Array {
  return writeFrame(batches);
}

/**
 * Decodes a `Frame`. Throws on bytes that are not a valid frame, on a message without a body,
 * and on a number past 2^53 (never produced by this code: such a frame is garbage). Decoding is
 * hand-written (frame-reader.ts): protobufjs would allocate a Long per uint64 and a wire object
 * per message and entry, on the follower's hot path.
 */
export function decodeFrame(bytes: Uint8Array): FrameBatch[] {
  return readFrame(bytes);
}
