// Encodes a spool snapshot (format in snapshot-format.ts) of the state as it was when the writer
// began, in slices, while later commands go on applying. Encoding a large backlog at once blocks
// for as long as copying every payload takes (100-150 ms for 100,000 messages in a busy member),
// on every replica at about the same index; in slices it costs a few milliseconds a turn.
//
// What is small or immutable is captured when the writer begins: the spool header, the queues
// with their settings (replaced, never changed in place) and dedup entries (immutable records),
// and the seqs of each queue's live messages in send order (8 bytes a message: messages are
// columns, not objects, see send-order.ts). Messages are encoded later, in that order, read from
// the columns by seq. A command that is about to change or remove a message the writer has not
// reached calls `beforeChange` first (through SpoolState.snapshotGuard), and the writer keeps the
// message's replicated fields and payload location as they were. The bytes therefore equal
// those of an encode of the state at the start, which a property test checks.

import { assert } from './assert.js';
import { ByteWriter } from './bytes.js';
import { writePlan, writeSettings } from './command-codec.js';
import { dedupKeyBytes, type DedupEntry } from './dedup-table.js';
import { type Message, Where } from './message.js';
import { PAYLOAD_MISSING } from './payload-store.js';
import type { Queue } from './queue.js';
import type { MessageRecord, SendOrder } from './send-order.js';
import type { QueueState } from './service.js';
import type { Settings } from './settings.js';
import {
  END,
  FLAG_FAILED,
  MAGIC,
  MESSAGE_RECORD_BYTES,
  QUEUE_STATES,
  SNAPSHOT_VERSION,
} from './snapshot-format.js';
import type { MessageGuard, SpoolState } from './spool-state.js';

/** Budget a queue header counts for besides its dedup entries, bytes. */
const QUEUE_HEADER_BYTES = 128;
const DEDUP_RECORD_BYTES = 16 + 8 + 8;

interface CapturedQueue {
  readonly name: string;
  readonly gen: number;
  readonly createdAtMs: number;
  readonly state: QueueState;
  readonly settings: Settings;
  readonly dedup: readonly DedupEntry[];
  readonly order: SendOrder;
  readonly seqs: Float64Array;
}

/** A message's fields as the snapshot encodes them (a Message has them too). */
interface ReplicatedFields {
  readonly seq: number;
  readonly createdAtMs: number;
  readonly byteLength: number;
  readonly visibleAtMs: number;
  readonly retentionStartMs: number;
  readonly retries: number;
  readonly gen: number;
  readonly where: Where;
  readonly location: number;
}

/** Encodes the replicated state of a spool at once. */
export function encodeSnapshot(state: SpoolState): Uint8Array {
  const { chunk, done } = new SnapshotWriter(state, false).step(Infinity);
  assert(done, 'an unbounded step finishes the snapshot');
  return chunk;
}

/**
 * The replicated state alone, without this replica's payload store id and locations: equal on
 * every replica that applied the same log, whatever store it keeps payloads in (tests compare
 * replicas with it). Not for restoring: every payload of it reads as missing.
 */
export function encodeReplicatedState(state: SpoolState): Uint8Array {
  const { chunk, done } = new SnapshotWriter(state, false, false).step(Infinity);
  assert(done, 'an unbounded step finishes the snapshot');
  return chunk;
}

/** What one step of a SnapshotWriter encoded: the next chunk, and whether it was the last. */
export interface SnapshotSlice {
  readonly chunk: Uint8Array;
  readonly done: boolean;
}

/** Bytes a step's buffer starts with beyond its budget (one record more, a queue header). */
const STEP_SLACK_BYTES = 4096;

export class SnapshotWriter implements MessageGuard {
  /** The bytes of the current step only: each step hands its chunk on and starts a new one. */
  private writer: ByteWriter;
  private readonly queues: CapturedQueue[] = [];
  private readonly queueIndex = new Map<Queue, number>();
  /** Where a message read from the columns is copied (one record reused: no allocation). */
  private readonly record: MessageRecord = {
    seq: 0,
    createdAtMs: 0,
    byteLength: 0,
    visibleAtMs: 0,
    retentionStartMs: 0,
    retries: 0,
    gen: 0,
    where: Where.Fresh,
    location: PAYLOAD_MISSING,
  };
  /** Messages changed or removed since the start, as they were then, by seq. */
  private readonly preserved = new Map<number, ReplicatedFields>();
  /** Messages from this seq on were sent after the start: not in the snapshot. */
  private readonly seqEnd: number;
  /** The queue being encoded. */
  private queueAt = 0;
  /** The next message of that queue to encode; -1 while its header is not written. */
  private messageAt = -1;
  private ended = false;

  /**
   * Captures `state` as it is now. `guarded`: the state goes on changing while the writer works
   * (it becomes the state's snapshot guard until it finishes or is cancelled; one at a time).
   */
  constructor(
    private readonly state: SpoolState,
    guarded: boolean,
    private readonly withLocations = true,
  ) {
    // Metadata only: the size never depends on the payload bytes the spool holds. Encoded in
    // steps (guarded), a buffer holds one step's chunk: sized by the budget in `step`.
    this.writer = new ByteWriter(guarded ? 256 : 256 + state.messageCount * MESSAGE_RECORD_BYTES);
    this.seqEnd = state.nextSeq;
    this.writeHeader();
    for (const name of state.names) this.capture(state.queues.get(name)!);
    if (guarded) {
      assert(state.snapshotGuard === null, 'a snapshot writer is already working on this state');
      state.snapshotGuard = this;
    }
  }

  /**
   * Encodes about `budgetBytes` more (at least one record) and returns them: the snapshot is the
   * chunks of every step in order, never joined here. Not to be called after the step that was
   * `done` or after `cancel`.
   */
  step(budgetBytes: number): SnapshotSlice {
    assert(!this.ended, 'snapshot writer already ended');
    assert(budgetBytes > 0, 'snapshot step budget must be positive');
    let spentBytes = 0;
    while (this.queueAt < this.queues.length) {
      const queue = this.queues[this.queueAt]!;
      if (this.messageAt < 0) {
        this.writeQueueHeader(queue);
        this.messageAt = 0;
        spentBytes += QUEUE_HEADER_BYTES + queue.dedup.length * DEDUP_RECORD_BYTES;
      }
      const seqs = queue.seqs;
      while (this.messageAt < seqs.length) {
        if (spentBytes >= budgetBytes) return { chunk: this.takeChunk(budgetBytes), done: false };
        spentBytes += this.writeMessage(queue.order, seqs[this.messageAt++]!);
      }
      this.queueAt++;
      this.messageAt = -1;
    }
    this.writer.u32(END);
    this.end();
    return { chunk: this.writer.finish(), done: true };
  }

  /** The bytes encoded since the last chunk; the next step writes into a new buffer. */
  private takeChunk(budgetBytes: number): Uint8Array {
    const chunk = this.writer.finish();
    this.writer = new ByteWriter(budgetBytes + STEP_SLACK_BYTES);
    return chunk;
  }

  /** Abandons the snapshot: the state no longer reports changes to it. */
  cancel(): void {
    if (!this.ended) this.end();
  }

  /** Keeps what `message` was at the start if the writer has not encoded it yet. */
  beforeChange(queue: Queue, message: Message): void {
    if (message.seq >= this.seqEnd || this.preserved.has(message.seq)) return;
    const index = this.queueIndex.get(queue);
    if (index === undefined || index < this.queueAt) return;
    if (index === this.queueAt && this.messageAt >= 0) {
      const next = this.queues[index]!.seqs[this.messageAt];
      if (next === undefined || message.seq < next) return;
    }
    this.preserved.set(message.seq, {
      seq: message.seq,
      createdAtMs: message.createdAtMs,
      byteLength: message.byteLength,
      visibleAtMs: message.visibleAtMs,
      retentionStartMs: message.retentionStartMs,
      retries: message.retries,
      gen: message.gen,
      where: message.where,
      location: message.location,
    });
  }

  private end(): void {
    this.ended = true;
    if (this.state.snapshotGuard === this) this.state.snapshotGuard = null;
    this.preserved.clear();
  }

  private writeHeader(): void {
    const { writer, state } = this;
    writer.u32(MAGIC);
    writer.u16(SNAPSHOT_VERSION);
    writePlan(writer, state.plan);
    writer.f64(state.planVersion);
    writer.ascii(this.withLocations ? state.payloads.id : '');
    writer.f64(state.lastAppliedAtMs);
    writer.f64(state.nextSeq);
    writer.u32(state.nextQueueGen);
    writer.u32(state.names.length);
  }

  private capture(queue: Queue): void {
    this.queueIndex.set(queue, this.queues.length);
    this.queues.push({
      name: queue.name,
      gen: queue.gen,
      createdAtMs: queue.createdAtMs,
      state: queue.state,
      settings: queue.settings,
      dedup: queue.dedup.entries(),
      order: queue.order,
      seqs: queue.order.liveSeqs(),
    });
  }

  private writeQueueHeader(queue: CapturedQueue): void {
    const writer = this.writer;
    writer.ascii(queue.name);
    writer.u32(queue.gen);
    writer.f64(queue.createdAtMs);
    writer.u8(QUEUE_STATES.indexOf(queue.state));
    writeSettings(writer, queue.settings);
    writer.u32(queue.dedup.length);
    for (const entry of queue.dedup) {
      writer.raw(dedupKeyBytes(entry.key));
      writer.f64(entry.seq);
      writer.f64(entry.expiresAtMs);
    }
    writer.u32(queue.seqs.length);
  }

  /** Writes one message record as it was at the start; returns its size in bytes. */
  private writeMessage(order: SendOrder, seq: number): number {
    const writer = this.writer;
    const kept = this.preserved.get(seq);
    let fields: ReplicatedFields = this.record;
    if (kept !== undefined) {
      this.preserved.delete(seq);
      fields = kept;
    } else {
      const live = order.readRecord(seq, this.record);
      assert(live, 'snapshot: a message vanished unreported');
    }
    writer.f64(fields.seq);
    writer.f64(fields.createdAtMs);
    writer.f64(fields.visibleAtMs);
    writer.f64(fields.retentionStartMs);
    writer.u32(fields.retries);
    writer.u32(fields.gen);
    writer.u8(fields.where === Where.Failed ? FLAG_FAILED : 0);
    writer.u32(fields.byteLength);
    writer.f64(this.withLocations ? fields.location : PAYLOAD_MISSING);
    return MESSAGE_RECORD_BYTES;
  }
}
