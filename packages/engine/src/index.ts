export * from './errors.js';
export * from './service.js';
export { AssertionError, assert } from './assert.js';
export { type Plan, DEFAULT_PLAN, resolvePlan } from './plan.js';
export {
  type Settings,
  defaultSettings,
  resolveSettings,
  patchSettings,
  effectiveRetentionSeconds,
  settingsView,
} from './settings.js';
export { Message, Where, messageIdOf, seqOfMessageId, MESSAGE_ID_LENGTH } from './message.js';
export type { Queue } from './queue.js';
export * from './commands.js';
export { encodeCommand, decodeCommand } from './command-codec.js';
export { ByteReader, ByteWriter, ChunkReader, CodecError } from './bytes.js';
export { type BatchedFrame, TurnBatcher, type TurnBatcherOptions } from './turn-batcher.js';
export {
  WIRE_I32,
  WIRE_I64,
  WIRE_LEN,
  WIRE_VARINT,
  WireReader,
  WireWriter,
  VARINT_BYTES_MAX,
  putVarint,
  varintLength,
} from './wire.js';
export { decodeSnapshot } from './snapshot.js';
export {
  SnapshotWriter,
  encodeReplicatedState,
  encodeSnapshot,
  type SnapshotSlice,
} from './snapshot-writer.js';
export { DEDUP_KEY_BYTES, dedupKeyString } from './dedup-table.js';
export { RATE_LIMITED, type ReceiveOutcome } from './primary.js';
export type { HandedOffLease } from './hand-off.js';
export type { QueueSelection, QueuePage, MessageSelection, MessagePage } from './reads.js';
export { SpoolState } from './spool-state.js';
export { type MessageCursor, SpoolEngine } from './engine.js';
export { TokenBucket } from './token-bucket.js';
export { type PayloadStore, PayloadError, PAYLOAD_MISSING } from './payload-store.js';
export { MemoryPayloadStore } from './memory-payloads.js';
