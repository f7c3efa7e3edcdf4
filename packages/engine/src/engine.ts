// The queue engine of one spool: a facade over the spool state and its pure transitions.
//
// Two kinds of calls, kept apart:
//   - `apply(command, atMs)`: replicated. Every replica applies the same commands with the same
//     entry times and reaches the same state (`encodeSnapshot` bytes are equal).
//   - everything else: primary-local (receive, leases, rate limits, in-flight appends, deciding
//     timeouts and expiry) or reads. Replicas never call these.
// No clock, timers, randomness or I/O: every time is an argument (epoch ms).

import type { ApplyResult, Command } from './commands.js';
import type { GoneReason, MqError } from './errors.js';
import * as handOff from './hand-off.js';
import { type Message, Where } from './message.js';
import { dropLocation, restoreLocation } from './moves.js';
import { PAYLOAD_MISSING, type PayloadStore } from './payload-store.js';
import { DEFAULT_PLAN, type Plan } from './plan.js';
import * as primary from './primary.js';
import type { Queue } from './queue.js';
import * as reads from './reads.js';
import type { Counts, MessageState, MessageView, QueueView, SpoolView } from './service.js';
import { decodeSnapshot } from './snapshot.js';
import { SnapshotWriter, encodeReplicatedState, encodeSnapshot } from './snapshot-writer.js';
import { SpoolState } from './spool-state.js';
import { applyCommand } from './transitions.js';

/**
 * Where a walk over a spool's live messages stands: the last message visited, by queue
 * generation and seq ({ queueGen: 0, seq: 0 }: before the first). The walk moves it.
 */
export interface MessageCursor {
  queueGen: number;
  seq: number;
}

/** Set by SpoolEngine's static block: the one way to its state outside the class. */
let stateOfEngine: (engine: SpoolEngine) => SpoolState;

/**
 * The mutable state behind `engine`, for the engine's own tests. Not exported by index.ts: the
 * host reads and changes a spool through the engine's methods only, so the state's invariants
 * have one keeper.
 */
export function internalState(engine: SpoolEngine): SpoolState {
  return stateOfEngine(engine);
}

export class SpoolEngine {
  private readonly state: SpoolState;

  static {
    stateOfEngine = (engine) => engine.state;
  }

  constructor(plan: Plan = DEFAULT_PLAN, state?: SpoolState) {
    this.state = state ?? new SpoolState(plan);
  }

  /** An empty engine keeping its payloads in `payloads`. */
  static over(payloads: PayloadStore, plan: Plan = DEFAULT_PLAN): SpoolEngine {
    return new SpoolEngine(plan, new SpoolState(plan, payloads));
  }

  /**
   * Rebuilds an engine from `encodeSnapshot` bytes, or their chunks in order (no primary-local
   * state) over `payloads` (default: a new in-memory store; see decodeSnapshot for locations).
   * Throws CodecError.
   */
  static fromSnapshot(
    bytes: Uint8Array | Iterable<Uint8Array>,
    plan: Plan = DEFAULT_PLAN,
    payloads?: PayloadStore,
  ): SpoolEngine {
    return new SpoolEngine(plan, decodeSnapshot(bytes, plan, payloads));
  }

  get plan(): Plan {
    return this.state.plan;
  }

  /** Encodes the replicated state (see snapshot-format.ts). */
  snapshot(): Uint8Array {
    return encodeSnapshot(this.state);
  }

  /**
   * The replicated state alone, without this replica's payload locations: equal on every
   * replica that applied the same log (see encodeReplicatedState). Not for restoring.
   */
  replicatedState(): Uint8Array {
    return encodeReplicatedState(this.state);
  }

  /**
   * Begins a snapshot of the replicated state as it is now, encoded by `step` calls while
   * commands go on applying (see snapshot-writer.ts). One at a time: finish or cancel it first.
   */
  beginSnapshot(): SnapshotWriter {
    return new SnapshotWriter(this.state, true);
  }

  // ---- Replicated ----------------------------------------------------------------------------

  /** Applies a logged command at its entry time (see transitions.ts for each command's results). */
  apply(command: Command, atMs: number): ApplyResult {
    return applyCommand(this.state, command, atMs);
  }

  queue(name: string): Queue | undefined {
    return this.state.queues.get(name);
  }

  queueByGen(gen: number): Queue | undefined {
    return this.state.queuesByGen.get(gen);
  }

  /** The queues of the spool now (a copy: the caller may create or delete queues meanwhile). */
  queues(): Queue[] {
    return [...this.state.queues.values()];
  }

  /** How many queues the spool holds. */
  get queueCount(): number {
    return this.state.queues.size;
  }

  /** The metadata version of the spool's plan (0: the initial plan). */
  get planVersion(): number {
    return this.state.planVersion;
  }

  /** The latest apply time (ms): apply times never go below it. */
  get lastAppliedAtMs(): number {
    return this.state.lastAppliedAtMs;
  }

  /** The live message `seq` of `queue` (a handle), or undefined. O(log n). */
  message(queue: Queue, seq: number): Message | undefined {
    return queue.order.find(seq);
  }

  /**
   * Calls `visit` for the live messages of `queue` with seq > `afterSeq` in send order, until it
   * returns false; `visit` may read and drop payloads but not apply commands. Returns the number
   * of slots examined (see SendOrder.scanAfter).
   */
  scanMessages(queue: Queue, afterSeq: number, visit: (message: Message) => boolean): number {
    return queue.order.scanAfter(afterSeq, visit);
  }

  /**
   * Walks the live messages of every queue after `cursor`, queues in generation order and each
   * queue's messages in send order, calling `visit` until it returns false. The cursor moves to
   * each message `visit` accepted, so a later walk resumes after it (a queue created meanwhile
   * has a higher generation: it is walked too). `visit` may read and drop payloads but not apply
   * commands. True when the walk reached the end, false when `visit` stopped it.
   */
  walkMessages(
    cursor: MessageCursor,
    visit: (queue: Queue, message: Message) => boolean,
  ): boolean {
    // Sorted: a restored state holds its queues in name order, and the cursor must only move on.
    const gens = [...this.state.queuesByGen.keys()].sort((a, b) => a - b);
    for (const queueGen of gens) {
      if (queueGen < cursor.queueGen) continue;
      const queue = this.state.queuesByGen.get(queueGen);
      if (queue === undefined) continue;
      const after = queueGen === cursor.queueGen ? cursor.seq : 0;
      let stopped = false;
      queue.order.scanAfter(after, (message) => {
        if (!visit(queue, message)) {
          stopped = true;
          return false;
        }
        cursor.queueGen = queueGen;
        cursor.seq = message.seq;
        return true;
      });
      if (stopped) return false;
    }
    return true;
  }

  /** The live message `seq` of the queue of generation `queueGen`, or undefined. O(log n). */
  messageByGen(queueGen: number, seq: number): Message | undefined {
    return this.state.queuesByGen.get(queueGen)?.order.find(seq);
  }

  /**
   * The live message `seq` of any queue of the spool, or undefined. O(queues x log n): for
   * bookkeeping off the send and receive paths.
   */
  findMessage(seq: number): Message | undefined {
    for (const queue of this.state.queues.values()) {
      const message = queue.order.find(seq);
      if (message !== undefined) return message;
    }
    return undefined;
  }

  /** Stored messages of the spool whose payload this replica lacks. */
  get missingPayloadCount(): number {
    return this.state.missingPayloads;
  }

  /** Live messages the spool holds. */
  get messageCount(): number {
    return this.state.messageCount;
  }

  // ---- Primary-local -------------------------------------------------------------------------

  /** Opens the spool as a new primary at `nowMs` (see primary.openPrimary). */
  openPrimary(nowMs: number): void {
    primary.openPrimary(this.state, this.state.readTime(nowMs));
  }

  /** The leases this primary holds, for a planned hand-off (see hand-off.outstandingLeases). */
  outstandingLeases(): handOff.HandedOffLease[] {
    return handOff.outstandingLeases(this.state);
  }

  /** Takes over a previous primary's leases right after opening (see hand-off.adoptLeases). */
  adoptLeases<L extends handOff.HandedOffLease>(leases: readonly L[], nowMs: number): L[] {
    return handOff.adoptLeases(this.state, leases, this.state.readTime(nowMs));
  }

  /** Leases the first visible message (see primary.receive). */
  receive(queue: Queue, nowMs: number): primary.ReceiveOutcome {
    return primary.receive(this.state, queue, this.state.readTime(nowMs));
  }

  nextReceiveTokenAtMs(queue: Queue, nowMs: number): number {
    return primary.nextReceiveTokenAtMs(queue, this.state.readTime(nowMs));
  }

  resolveLease(
    queueGen: number,
    seq: number,
    gen: number,
    delivery: number,
    nowMs: number,
  ): Message | GoneReason {
    const now = this.state.readTime(nowMs);
    return primary.resolveLease(this.state, queueGen, seq, gen, delivery, now);
  }

  resolveFailureLease(queueGen: number, seq: number, gen: number): Message | GoneReason {
    return primary.resolveFailureLease(this.state, queueGen, seq, gen);
  }

  resolveHandle(
    queueGen: number,
    seq: number,
    gen: number,
    deliveries: number,
    leased: boolean,
  ): Message | GoneReason {
    return primary.resolveHandle(this.state, queueGen, seq, gen, deliveries, leased);
  }

  /** Extends a resolved lease; returns its deadline (Infinity when none). */
  renew(queue: Queue, message: Message, nowMs: number): number {
    return primary.renewLease(this.state, queue, message, this.state.readTime(nowMs));
  }

  /** Release without delay of a resolved lease (no log entry). */
  releaseNow(queue: Queue, message: Message): void {
    primary.releaseNow(this.state, queue, message);
  }

  beginSettle(message: Message): void {
    primary.beginSettle(message);
  }

  endSettle(queue: Queue, message: Message): void {
    primary.endSettle(this.state, queue, message);
  }

  collectTimedOutLeases(queue: Queue, nowMs: number, out: Message[], max: number): void {
    primary.collectTimedOutLeases(queue, this.state.readTime(nowMs), out, max);
  }

  collectExpired(queue: Queue, nowMs: number, seqs: number[], gens: number[], max: number): void {
    primary.collectExpired(queue, this.state.readTime(nowMs), seqs, gens, max);
  }

  reindexExpiry(queue: Queue, message: Message): void {
    primary.reindexExpiry(this.state, queue, message);
  }

  /** Earliest deadline of timer work (ms), Infinity when none; resets `deadlineHintMs`. */
  nextDeadlineMs(): number {
    return primary.nextDeadlineMs(this.state);
  }

  /** Lower bound of deadlines created since the last `nextDeadlineMs` (see SpoolState). */
  get deadlineHintMs(): number {
    return this.state.deadlineHintMs;
  }

  /** Makes elapsed delays of `queue` visible; returns how many became visible. */
  promote(queue: Queue, nowMs: number): number {
    return primary.promote(queue, this.state.readTime(nowMs));
  }

  failureHead(queue: Queue): Message | undefined {
    return primary.failureHead(queue);
  }

  /** The primary's check before logging an append (see primary.precheckAppend). */
  precheckAppend(
    queue: Queue,
    dedupKey: string | null,
    growthBytes: number,
    countsMessage: boolean,
    nowMs: number,
  ): MqError | number | null {
    const now = this.state.readTime(nowMs);
    return primary.precheckAppend(this.state, queue, dedupKey, growthBytes, countsMessage, now);
  }

  beginAppend(queue: Queue, bytes: number, dedupKey: string | null): void {
    primary.beginAppend(this.state, queue, bytes, dedupKey);
  }

  endAppend(queue: Queue, bytes: number, dedupKey: string | null): void {
    primary.endAppend(this.state, queue, bytes, dedupKey);
  }

  /**
   * Stores the payload fetched from another replica for a message this replica lacks (it
   * restored another replica's snapshot, or dropped a copy that failed its checksum). An
   * unavailable message returns to its place by seq among the visible ones. False, changing
   * nothing, when the message is gone, already has its payload, or `payload` is not as long as
   * the message. The caller checked the bytes (the engine knows only their length).
   */
  fillPayload(queueGen: number, seq: number, payload: Uint8Array): boolean {
    const queue = this.state.queuesByGen.get(queueGen);
    const message = queue?.order.find(seq);
    if (message === undefined || message.location !== PAYLOAD_MISSING) return false;
    if (message.byteLength !== payload.byteLength) return false;
    restoreLocation(this.state, queue!, message, this.state.payloads.append(seq, payload));
    return true;
  }

  /**
   * The payload of `message` in `queue` cannot be read here (PayloadError: it failed its
   * checksum or is gone): forget its location so the replica fetches a good copy (see
   * fillPayload). The message keeps its replicated state: a receive reaching it holds it back as
   * unavailable, a failed one reads unavailable and the failure head skips it. Replica-local.
   */
  dropPayload(queue: Queue, message: Message): void {
    if (message.where !== Where.Removed) dropLocation(this.state, queue, message);
  }

  /**
   * A message `receive` just leased has a payload this replica cannot read: withdraws the lease
   * nobody saw and holds the message back as unavailable (see primary.withdrawUnreadable).
   */
  withdrawUnreadable(queue: Queue, message: Message): void {
    primary.withdrawUnreadable(this.state, queue, message);
  }

  /**
   * Moves the payloads whose location `moves` accepts to the store's head (a mostly dead segment
   * is emptied this way, so the store can delete it without rewriting the rest). Replica-local:
   * nothing replicated changes. A payload that cannot be read loses its location (see
   * dropPayload: the replica fetches a good copy). O(messages). Returns how many moved.
   */
  relocatePayloads(moves: (location: number) => boolean): number {
    const payloads = this.state.payloads;
    let moved = 0;
    for (const queue of this.state.queues.values()) {
      queue.order.scanAfter(0, (message) => {
        const from = message.location;
        if (from === PAYLOAD_MISSING || !moves(from)) return true;
        let payload: Uint8Array;
        try {
          payload = payloads.read(message.seq, from, message.byteLength);
        } catch {
          dropLocation(this.state, queue, message);
          return true;
        }
        message.location = payloads.append(message.seq, payload);
        payloads.release(from, message.byteLength);
        moved++;
        return true;
      });
    }
    return moved;
  }

  // ---- Reads ---------------------------------------------------------------------------------

  /**
   * The payload of a stored message, from the payload store (through its cache). Throws
   * PayloadError (503 unavailable) when this replica cannot read it: missing or corrupt (the
   * caller then drops the location, see dropPayload and withdrawUnreadable).
   */
  payloadOf(message: Message): Uint8Array {
    return this.state.payloads.read(message.seq, message.location, message.byteLength);
  }

  queueView(queue: Queue): QueueView {
    return reads.queueView(this.state, queue);
  }

  queueCounts(queue: Queue, nowMs: number): Counts {
    return reads.queueCounts(queue, this.state.readTime(nowMs));
  }

  spoolCounts(nowMs: number): Counts {
    return reads.spoolCounts(this.state, this.state.readTime(nowMs));
  }

  describe(name: string, nowMs: number): SpoolView {
    return reads.spoolView(this.state, name, this.state.readTime(nowMs));
  }

  selectQueues(selection: reads.QueueSelection): reads.QueuePage {
    return reads.selectQueues(this.state, selection);
  }

  selectMessages(
    queue: Queue,
    nowMs: number,
    selection: reads.MessageSelection,
  ): reads.MessagePage {
    return reads.selectMessages(queue, this.state.readTime(nowMs), selection);
  }

  messageView(queue: Queue, message: Message, nowMs: number): MessageView {
    return reads.messageView(queue, message, this.state.readTime(nowMs));
  }

  messageState(message: Message, nowMs: number): MessageState {
    return reads.messageStateOf(message, this.state.readTime(nowMs));
  }
}

