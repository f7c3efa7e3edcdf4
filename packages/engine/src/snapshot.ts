// Decoding of a spool snapshot (the format is in snapshot-format.ts, the encoder in
// snapshot-writer.ts).

import { ByteReader, ChunkReader, CodecError } from './bytes.js';
import { readPlan, readSettings } from './command-codec.js';
import { DEDUP_KEY_BYTES, dedupKeyString } from './dedup-table.js';
import { type Message, Where } from './message.js';
import { PAYLOAD_MISSING, type PayloadStore } from './payload-store.js';
import type { Plan } from './plan.js';
import { rebuildQueue } from './primary.js';
import { Queue } from './queue.js';
import { MAX_RETRIES_MAX, effectiveRetentionSeconds } from './settings.js';
import {
  END,
  FLAG_FAILED,
  MAGIC,
  QUEUE_STATES,
  SNAPSHOT_VERSION,
  SNAPSHOT_VERSION_NO_PLAN,
  SNAPSHOT_VERSION_PAYLOADS,
  SNAPSHOT_VERSION_PLAN,
} from './snapshot-format.js';
import { SpoolState } from './spool-state.js';

/** How message records are read: with their payloads (versions 1-3) or their locations. */
interface RecordFormat {
  readonly version: number;
  /** Version 4: the locations point into `payloads` (its id is the snapshot's). */
  readonly ownLocations: boolean;
}

/**
 * Decodes a snapshot into a fresh state over `payloads` with the snapshot's plan (`plan` for a
 * version 1 snapshot, which has none), with index structures rebuilt as of the snapshot's last
 * apply time and no primary-local state (call `openPrimary` to serve). A version 4 snapshot
 * written over another store leaves every payload PAYLOAD_MISSING (the replica fetches them);
 * over this store its locations are adopted. Versions 1-3 carry payloads: they are appended to
 * `payloads` (the migration to version 4). `input` is the snapshot's bytes, or its chunks in
 * order (of any sizes: a record may straddle chunks), read as decoding goes, so a snapshot read
 * a chunk at a time never has to be joined. Throws `CodecError` on malformed input or a version
 * this engine does not know (with one sentence naming it).
 */
export function decodeSnapshot(
  input: Uint8Array | Iterable<Uint8Array>,
  plan: Plan,
  payloads?: PayloadStore,
): SpoolState {
  const reader = input instanceof Uint8Array ? new ByteReader(input) : new ChunkReader(input);
  if (reader.u32() !== MAGIC) throw new CodecError('not a spool snapshot');
  const version = reader.u16();
  if (version < SNAPSHOT_VERSION_NO_PLAN || version > SNAPSHOT_VERSION) {
    throw new CodecError(
      `spool snapshot format ${version} is not one this version reads ` +
        `(${SNAPSHOT_VERSION_NO_PLAN} to ${SNAPSHOT_VERSION}); run the release that wrote it`,
    );
  }
  const ownPlan = version >= SNAPSHOT_VERSION_PLAN ? readPlan(reader) : plan;
  const state = new SpoolState(ownPlan, payloads);
  if (version >= SNAPSHOT_VERSION_PAYLOADS) state.planVersion = reader.safeInt();
  const storeId = version === SNAPSHOT_VERSION ? reader.ascii() : null;
  const format = { version, ownLocations: storeId === state.payloads.id };
  state.lastAppliedAtMs = reader.f64();
  state.nextSeq = reader.safeInt();
  state.nextQueueGen = reader.u32();
  const queueCount = reader.u32();
  for (let i = 0; i < queueCount; i++) readQueue(reader, state, format);
  if (reader.u32() !== END) throw new CodecError('missing end marker');
  reader.end();
  return state;
}

function readQueue(reader: ByteReader, state: SpoolState, format: RecordFormat): void {
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
    const message = readMessage(reader, state, queue, previousSeq, format);
    if (message.location === PAYLOAD_MISSING) state.missingPayloads++;
    else state.payloads.adopt(message.location, message.byteLength);
    previousSeq = message.seq;
    queue.total++;
    queue.dataBytes += message.byteLength;
  }
  state.messageCount += queue.total;
  state.byteCount += queue.dataBytes;
  rebuildQueue(state, queue, state.lastAppliedAtMs);
}

/** Reads one message record into `queue`'s columns (its seq must exceed `previousSeq`). */
function readMessage(
  reader: ByteReader,
  state: SpoolState,
  queue: Queue,
  previousSeq: number,
  format: RecordFormat,
): Message {
  const seq = reader.safeInt();
  if (seq <= previousSeq || seq >= state.nextSeq) throw new CodecError('message seq out of order');
  const createdAtMs = reader.f64();
  const visibleAtMs = reader.f64();
  const retentionStartMs = reader.f64();
  const retries = reader.u32();
  if (retries > MAX_RETRIES_MAX) throw new CodecError('message retries out of range');
  const gen = reader.u32();
  const flags = reader.u8();
  if (flags > FLAG_FAILED) throw new CodecError('unknown message flags');
  let location: number;
  let byteLength: number;
  if (format.version === SNAPSHOT_VERSION) {
    byteLength = reader.u32();
    location = reader.safeInt();
    if (!format.ownLocations) location = PAYLOAD_MISSING;
  } else {
    // An earlier format: the payload moves into the store (copied out of the snapshot bytes).
    const payload = reader.bytes().slice();
    byteLength = payload.byteLength;
    location = state.payloads.append(seq, payload);
  }
  if (location < 0 && location !== PAYLOAD_MISSING) throw new CodecError('bad payload location');
  const message = queue.order.appendScratch(seq, createdAtMs, location, byteLength, visibleAtMs);
  if (retentionStartMs !== visibleAtMs) message.retentionStartMs = retentionStartMs;
  const chunk = message.held();
  chunk.retries[message.index] = retries;
  chunk.gen[message.index] = gen;
  if (flags & FLAG_FAILED) chunk.where[message.index] = Where.Failed;
  return message;
}
