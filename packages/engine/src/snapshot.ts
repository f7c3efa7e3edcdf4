// Decoding of a spool snapshot (the format is in snapshot-format.ts, the encoder in
// snapshot-writer.ts).

import { ByteReader, CodecError } from './bytes.js';
import { readPlan, readSettings } from './command-codec.js';
import { DEDUP_KEY_BYTES, dedupKeyString } from './dedup-table.js';
import { Message, Where } from './message.js';
import type { Plan } from './plan.js';
import { rebuildQueue } from './primary.js';
import { Queue } from './queue.js';
import { effectiveRetentionSeconds } from './settings.js';
import {
  END,
  FLAG_FAILED,
  MAGIC,
  QUEUE_STATES,
  SNAPSHOT_VERSION,
  SNAPSHOT_VERSION_NO_PLAN,
  SNAPSHOT_VERSION_PLAN,
} from './snapshot-format.js';
import { SpoolState } from './spool-state.js';

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
