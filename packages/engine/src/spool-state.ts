// The whole state of one spool: queues (by name, by generation, and names in byte order), the
// seq and queue-generation counters, spool totals and counters, and the primary-local deadline
// hint the host uses to arm its single timer.

import { assert } from './assert.js';
import { Counters } from './counters.js';
import { MemoryPayloadStore } from './memory-payloads.js';
import type { Message } from './message.js';
import type { PayloadStore } from './payload-store.js';
import type { Plan } from './plan.js';
import type { Queue } from './queue.js';

/** Told before a replicated command changes or removes a stored message (snapshot-writer.ts). */
export interface MessageGuard {
  beforeChange(queue: Queue, message: Message): void;
}

export class SpoolState {
  /** Replaced only by an applied setPlan command (or a snapshot). */
  plan: Plan;
  /** The metadata version of `plan` (0: the initial plan). */
  planVersion = 0;
  readonly queues = new Map<string, Queue>();
  readonly queuesByGen = new Map<number, Queue>();
  /** Queue names in byte order (names are ASCII, so UTF-16 order is byte order). */
  readonly names: string[] = [];

  /** Seq of the next appended message; starts at 1. */
  nextSeq = 1;
  /** Generation of the next created queue; starts at 1. */
  nextQueueGen = 1;
  /** Latest apply time; apply times are clamped to never go below it. */
  lastAppliedAtMs = 0;

  /** Stored messages and payload bytes across queues (in-flight sends excluded). */
  messageCount = 0;
  byteCount = 0;
  /** Dedup keys held across queues. */
  dedupKeyCount = 0;
  /** The spool's own cumulative counters: they keep counting deleted queues. */
  readonly counters = new Counters();
  /** Where this replica keeps the payloads (replica-local, like every message's location). */
  readonly payloads: PayloadStore;
  /** Stored messages whose payload this replica has not fetched yet (PAYLOAD_MISSING). */
  missingPayloads = 0;
  /** A snapshot writer at work on this state, or null. */
  snapshotGuard: MessageGuard | null = null;

  // Primary-local.
  /** When the primary opened the spool (counters started). */
  startedAtMs = 0;
  inflightCount = 0;
  inflightBytes = 0;
  /**
   * Lower bound of the earliest deadline (lease timeout, delay elapsing, retention) created since
   * the last `nextDeadlineMs`: every operation that creates a deadline lowers it, so a host can
   * compare one number after each call to decide whether to re-arm its timer earlier.
   */
  deadlineHintMs = Infinity;

  constructor(plan: Plan, payloads: PayloadStore = new MemoryPayloadStore()) {
    this.plan = plan;
    this.payloads = payloads;
  }

  /** Clamps an apply time so apply times never decrease; returns the time to apply at. */
  advanceTime(atMs: number): number {
    assert(Number.isFinite(atMs), 'apply time must be finite');
    if (atMs > this.lastAppliedAtMs) this.lastAppliedAtMs = atMs;
    return this.lastAppliedAtMs;
  }

  /** A read or primary-local time, never before the last apply. */
  readTime(nowMs: number): number {
    return nowMs > this.lastAppliedAtMs ? nowMs : this.lastAppliedAtMs;
  }

  noteDeadline(atMs: number): void {
    if (atMs < this.deadlineHintMs) this.deadlineHintMs = atMs;
  }

  addQueue(queue: Queue): void {
    assert(!this.queues.has(queue.name), 'queue name taken');
    this.queues.set(queue.name, queue);
    this.queuesByGen.set(queue.gen, queue);
    this.names.splice(lowerBoundName(this.names, queue.name), 0, queue.name);
  }

  removeQueue(queue: Queue): void {
    assert(this.queues.get(queue.name) === queue, 'removing an unknown queue');
    this.queues.delete(queue.name);
    this.queuesByGen.delete(queue.gen);
    const index = lowerBoundName(this.names, queue.name);
    assert(this.names[index] === queue.name, 'queue name index out of sync');
    this.names.splice(index, 1);
  }
}

/** Index of the first name >= `name` in the sorted `names`. */
export function lowerBoundName(names: readonly string[], name: string): number {
  let lo = 0;
  let hi = names.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (names[mid]! < name) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
