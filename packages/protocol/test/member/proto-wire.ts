// protobufjs loading proto/member.proto itself: the reference the hand-written codec is checked
// against (field numbers, wire types, names).

import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

export const MEMBER_PROTO_PATH = fileURLToPath(new URL('../../../../proto/member.proto', import.meta.url));

export const memberProto = protobuf.loadSync(MEMBER_PROTO_PATH);
export const ClientFrameType = memberProto.lookupType('mq.member.ClientFrame');
export const ServerFrameType = memberProto.lookupType('mq.member.ServerFrame');

const OBJECT_OPTIONS: protobuf.IConversionOptions = { longs: Number, enums: String, oneofs: true };

/** Decodes `bytes` as `type` with protobufjs into a plain object (numbers, enum names). */
export function referenceDecode(type: protobuf.Type, bytes: Uint8Array): Record<string, unknown> {
  return type.toObject(type.decode(bytes), OBJECT_OPTIONS) as Record<string, unknown>;
}

/** Re-encodes a plain object with protobufjs. */
export function referenceEncode(type: protobuf.Type, object: Record<string, unknown>): Uint8Array {
  return type.encode(type.fromObject(object)).finish();
}
