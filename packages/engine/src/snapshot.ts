// Snapshot of a spool's replicated state: a versioned binary format. Only replicated state is
// encoded: a leased message is encoded as what it is in the log (visible), counters and other
// primary-local state are left out, so two replicas that applied the same log produce identical
// bytes. Layout (big-endian):
//   magic "MQSN" | u16 version | plan (version 2 on: 7 x f64, see writePlan) |
//   f64 planVersion (version 3 on) |
//   f64 lastAppliedAtMs | f64 nextSeq | u32 nextQueueGen |
//   u32 queueCount | queues in name order | u32 END
//   queue: ascii name | u32 gen | f64 createdAtMs | u8 state | settings |
//          u32 dedupCount | (16B key, f64 seq, f64 expiresAtMs)* |
//          u32 messageCount | (f64 seq, f64 createdAtMs, f64 visibleAtMs, f64 retentionStartMs,
//                              u32 retries, u32 gen, u8 flags, u32 length, payload)*

import { ByteReader, ByteWriter, CodecError } from './bytes.js';
import { readPlan, readSettings, writePlan, writeSettings } from './command-codec.js';
import { DEDUP_KEY_BYTES, dedupKeyBytes, dedupKeyString } from './dedup-table.js';
import { Message, Where } from './message.js';
import type { Plan } from './plan.js';
import { rebuildQueue } from './primary.js';
import { Queue } from './queue.js';
import type { QueueState } from './service.js';
import { effectiveRetentionSeconds } from './settings.js';
import { SpoolState } from './spool-state.js';

const MAGIC = 0x4d51534e; // "MQSN"
/**
 * Version 3 carries the plan and its version; version 2 the plan only (version 0); version 1
 * neither (the caller's plan).
 */
const SNAPSHOT_VERSION = 3;
const SNAPSHOT_VERSION_PLAN = 2;
const SNAPSHOT_VERSION_NO_PLAN = 1;
const END = 0x454e4421; // "END!"
const FLAG_FAILED = 1;
const QUEUE_STATES: readonly QueueState[] = ['active', 'draining', 'deleting'];

/** Encodes the replicated state of a spool. */
export function encodeSnapshot(state: SpoolState): Uint8Array {
  const writer = new ByteWriter(256 + state.byteCount + state.messageCount * 50);
  writer.u32(MAGIC);
  writer.u16(SNAPSHOT_VERSION);
  writePlan(writer, state.plan);
  writer.f64(state.planVersion);
  writer.f64(state.lastAppliedAtMs);
  writer.f64(state.nextSeq);
  writer.u32(state.nextQueueGen);
  writer.u32(state.names.length);
  for (const name of state.names) writeQueue(writer, state.queues.get(name)!);
  writer.u32(END);
  return writer.finish();
}

function writeQueue(writer: ByteWriter, queue: Queue): void {
  writer.ascii(queue.name);
  writer.u32(queue.gen);
  writer.f64(queue.createdAtMs);
  writer.u8(QUEUE_STATES.indexOf(queue.state));
  writeSettings(writer, queue.settings);
  const dedup = queue.dedup.entries();
  writer.u32(dedup.length);
  for (const entry of dedup) {
    writer.raw(dedupKeyBytes(entry.key));
    writer.f64(entry.seq);
    writer.f64(entry.expiresAtMs);
  }
  const messages = queue.order.liveMessages();
  writer.u32(messages.length);
  for (const message of messages) {
    writer.f64(message.seq);
    writer.f64(message.createdAtMs);
    writer.f64(message.visibleAtMs);
    writer.f64(message.retentionStartMs);
    writer.u32(message.retries);
    writer.u32(message.gen);
    writer.u8(message.where === Where.Failed ? FLAG_FAILED : 0);
    writer.bytes(message.payload);
  }
}

/**
 * Decodes a snapshot into a fresh state with the snapshot's plan (`plan` for a version 1
 * snapshot, which has none), with index structures rebuilt as of the
 * snapshot's last apply time and no primary-local state (call `openPrimary` to serve). Payloads
 * are copied out of `bytes`. Throws `CodecError` on malformed input or a foreign version.
 */
export function decodeSnapshot(bytes: Uint8Array, plan: Plan): SpoolState {
  const reader = new ByteReader(bytes);
  if (reader.u32() !== MAGIC) throw new CodecError('not a spool snapshot');
  const version = reader.u16();
  if (version < SNAPSHOT_VERSION_NO_PLAN || version > SNAPSHOT_VERSION) {
    throw new CodecError(`unsupported snapshot version ${version}`);
  }
  const state = new SpoolState(version >= SNAPSHOT_VERSION_PLAN ? readPlan(reader) : plan);
  if (version === SNAPSHOT_VERSION) state.planVersion = reader.safeInt();
  state.lastAppliedAtMs = reader.f64();
  state.nextSeq = reader.safeInt();
  state.nextQueueGen = reader.u32();
  const queueCount = reader.u32();
  for (let i = 0; i < queueCount; i++) readQueue(reader, state);
  if (reader.u32() !== END) throw new CodecError('missing end marker');
  reader.end();
  return state;
}

function readQueue(reader: ByteReader, state: SpoolState): void {
  const name = reader.ascii();
  const gen = reader.u32();
  const createdAtMs = reader.f64();
  const queueState = QUEUE_STATES[reader.u8()];
  if (queueState === undefined) throw new CodecError('unknown queue state');
  const settings = readSettings(reader);
  if (state.queues.has(name) || state.queuesByGen.has(gen) || gen >= state.nextQueueGen) {
    throw new CodecError('inconsistent queue identity');
  }
  const queue = new Queue(name, gen, createdAtMs, settings);
  queue.state = queueState;
  queue.retentionMs = effectiveRetentionSeconds(settings.retentionSeconds, state.plan) * 1000;
  queue.resetBucket(state.lastAppliedAtMs);
  state.addQueue(queue);
  const dedupCount = reader.u32();
  for (let i = 0; i < dedupCount; i++) {
    const key = dedupKeyString(reader.raw(DEDUP_KEY_BYTES));
    queue.dedup.record(key, reader.safeInt(), reader.f64());
  }
  state.dedupKeyCount += queue.dedup.size;
  const messageCount = reader.u32();
  let previousSeq = 0;
  for (let i = 0; i < messageCount; i++) {
    const message = readMessage(reader);
    if (message.seq <= previousSeq || message.seq >= state.nextSeq) {
      throw new CodecError('message seq out of order');
    }
    previousSeq = message.seq;
    queue.order.append(message);
    queue.total++;
    queue.dataBytes += message.byteLength;
  }
  state.messageCount += queue.total;
  state.byteCount += queue.dataBytes;
  rebuildQueue(state, queue, state.lastAppliedAtMs);
}

function readMessage(reader: ByteReader): Message {
  const seq = reader.safeInt();
  const createdAtMs = reader.f64();
  const visibleAtMs = reader.f64();
  const retentionStartMs = reader.f64();
  const retries = reader.u32();
  const gen = reader.u32();
  const flags = reader.u8();
  if (flags > FLAG_FAILED) throw new CodecError('unknown message flags');
  const payload = reader.bytes().slice();
  const message = new Message(seq, createdAtMs, payload, visibleAtMs);
  message.retentionStartMs = retentionStartMs;
  message.retries = retries;
  message.gen = gen;
  message.where = flags & FLAG_FAILED ? Where.Failed : Where.Fresh;
  return message;
}
