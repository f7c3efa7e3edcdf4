// The gRPC method of the member protocol, defined by hand with pass-through serializers: frames
// are encoded by call-codec.ts and answer-codec.ts (from proto/member.proto), so gRPC only moves
// bytes. Must match `service Member { rpc Calls(stream ClientFrame) returns (stream
// ServerFrame); }` in proto/member.proto.

import { Buffer } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';

export const MEMBER_CALLS_PATH = '/mq.member.Member/Calls';

/** A frame as gRPC wants it: a Buffer over the same bytes (no copy). */
export function frameBuffer(frame: Uint8Array): Buffer {
  if (Buffer.isBuffer(frame)) return frame;
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
}

const passThrough = (bytes: Buffer): Buffer => bytes;

export const MEMBER_SERVICE: ServiceDefinition = {
  calls: {
    path: MEMBER_CALLS_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: frameBuffer,
    requestDeserialize: passThrough,
    responseSerialize: frameBuffer,
    responseDeserialize: passThrough,
    originalName: 'calls',
  },
};
