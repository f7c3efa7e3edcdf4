// The accounts service members serve next to the member protocol, defined by hand with
// pass-through serializers (gRPC only moves bytes):
//   Watch (bidirectional): the member sends the whole AuthTable (auth-table.ts) when the stream
//     opens and again whenever the metadata's accounts, keys or plans change, and an empty frame
//     (a heartbeat) every WATCH_HEARTBEAT_MS while its metadata replica follows a leader; the
//     gateway sends back `{"ack": version}` once it has installed a table, so an admin call can
//     wait until every gateway holds its change, and moves to another member when a stream stays
//     silent for WATCH_SILENCE_MS (its member may be cut off and hold stale keys).
//   Call (unary): a member forwards an admin step to another member: an AdminCall in, an
//     AdminAnswer out (protobuf, proto/member.proto; codecs and the step table: admin-steps.ts).

import { Buffer } from 'node:buffer';
import type { ServiceDefinition } from '@grpc/grpc-js';

export const ACCOUNTS_WATCH_PATH = '/mq.member.Accounts/Watch';
export const ACCOUNTS_CALL_PATH = '/mq.member.Accounts/Call';
/** How often a member whose metadata is current tells its watchers so. */
export const WATCH_HEARTBEAT_MS = 250;
/** A watch stream silent this long is dropped for another member's. */
export const WATCH_SILENCE_MS = 1_000;
/** Largest Call request or answer (a payload fetch answer, the largest, stays under half). */
export const ACCOUNTS_CALL_BYTES_MAX = 1024 * 1024;

const toBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const passThrough = (bytes: Buffer): Buffer => bytes;

export const ACCOUNTS_SERVICE: ServiceDefinition = {
  watch: {
    path: ACCOUNTS_WATCH_PATH,
    requestStream: true,
    responseStream: true,
    requestSerialize: toBuffer,
    requestDeserialize: passThrough,
    responseSerialize: toBuffer,
    responseDeserialize: passThrough,
    originalName: 'watch',
  },
  call: {
    path: ACCOUNTS_CALL_PATH,
    requestStream: false,
    responseStream: false,
    requestSerialize: toBuffer,
    requestDeserialize: passThrough,
    responseSerialize: toBuffer,
    responseDeserialize: passThrough,
    originalName: 'call',
  },
};

/** The gateway's acknowledgement of an installed table. */
export function encodeAck(version: number): Uint8Array {
  return Buffer.from(JSON.stringify({ ack: version }));
}

/** The version an ack names, or null for anything else. */
export function decodeAck(bytes: Uint8Array): number | null {
  try {
    const value = JSON.parse(Buffer.from(bytes).toString('utf8')) as { ack?: unknown };
    const ack = value?.ack;
    return typeof ack === 'number' && Number.isSafeInteger(ack) && ack >= 0 ? ack : null;
  } catch {
    return null;
  }
}
