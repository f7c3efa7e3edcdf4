// The gRPC method Raft traffic uses, defined by hand with pass-through serializers: frames are
// encoded by message-codec.ts (from proto/raft.proto), so gRPC only moves bytes.
// Must match `service Raft { rpc Stream(stream Frame) returns (Ack); }` in proto/raft.proto.

import { Buffer } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';

export const RAFT_STREAM_PATH = '/mq.raft.Raft/Stream';

const EMPTY = Buffer.alloc(0);

/** A frame as gRPC wants it: a Buffer over the same bytes (no copy). */
export function frameBuffer(frame: Uint8Array): Buffer {
  if (Buffer.isBuffer(frame)) return frame;
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
}

export const RAFT_SERVICE: ServiceDefinition = {
  stream: {
    path: RAFT_STREAM_PATH,
    requestStream: true,
    responseStream: false,
    requestSerialize: frameBuffer,
    requestDeserialize: (bytes: Buffer) => bytes,
    // Ack is an empty message: zero bytes either way.
    responseSerialize: () => EMPTY,
    responseDeserialize: () => ({}),
    originalName: 'stream',
  },
};
