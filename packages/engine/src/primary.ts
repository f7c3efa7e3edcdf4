// Primary-local transitions: what the serving member does without a log entry (receive, renew,
// release without delay, lease bookkeeping), what it decides and then logs (lease timeouts,
// retention expiry), and opening the spool as a new primary. Never called on a replica.

import { assert } from './assert.js';
import { type GoneReason, MqError } from './errors.js';
import { type Message, Where } from './message.js';
import { PAYLOAD_MISSING } from './payload-store.js';
import {
  dropLocation,
  failedTop,
  isLiveLeaseEntry,
  placeExpiring,
  placeLeased,
  placeUnavailable,
  promoteDelayed,
  pushExpiry,
  readyTop,
  returnFromLease,
  setLeaseDeadline,
} from './moves.js';
import type { Queue } from './queue.js';
import type { SpoolState } from './spool-state.js';

/** Receive refused by the queue's rate limit (a message was available). */
export const RATE_LIMITED = 'rate_limited';
export type ReceiveOutcome = Message | null | typeof RATE_LIMITED;

/**
 * Opens the spool as a new primary at `nowMs`: no leases (every pending message is visible again,
 * in send order), counters restart from zero (`startedAtMs` = now), rate buckets start full,
 * nothing in flight. Rebuilds every queue's index structures from the replicated state.
 */
export function openPrimary(state: SpoolState, nowMs: number): void {
  state.startedAtMs = nowMs;
  state.counters.reset();
  state.inflightCount = 0;
  state.inflightBytes = 0;
  for (const queue of state.queues.values()) {
    queue.counters.reset();
    queue.startedAtMs = Math.max(queue.createdAtMs, nowMs);
    queue.inflightCount = 0;
    queue.inflightBytes = 0;
    queue.inflightDedup.clear();
    queue.resetBucket(nowMs);
    rebuildQueue(state, queue, nowMs);
  }
  state.deadlineHintMs = -Infinity;
}

/**
 * Rebuilds a queue's structures from its messages' replicated fields: failed stays failed
 * (counted unavailable, out of the failure head, while this replica lacks its payload),
 * everything else is delayed (visibleAtMs > nowMs), unavailable (visible, but this replica holds
 * no payload for it), or fresh in send order; no leases.
 */
export function rebuildQueue(state: SpoolState, queue: Queue, nowMs: number): void {
  queue.ready.clear();
  queue.delayedHeap.clear();
  queue.failedHeap.clear();
  queue.expiry.clear();
  queue.leases.clear();
  queue.visible = 0;
  queue.delayed = 0;
  queue.pending = 0;
  queue.failed = 0;
  queue.unavailable = 0;
  queue.expiring = 0;
  queue.order.clearExpiryIndex();
  queue.order.scanAfter(0, (message) => {
    rebuildMessage(queue, message, nowMs);
    const startMs = message.retentionStartMs;
    const stamp = queue.order.indexExpiry(message, startMs, true);
    if (stamp !== 0) queue.expiry.push(startMs, message.seq, stamp);
    return true;
  });
  queue.order.rewindCursor();
  state.noteDeadline(-Infinity);
}

/** Places one message afresh in a rebuild (see rebuildQueue); columns read directly. */
function rebuildMessage(queue: Queue, message: Message, nowMs: number): void {
  const chunk = message.held();
  const index = message.index;
  const extra = message.extra();
  if (extra !== undefined) {
    extra.settling = false;
    extra.expiryDeferred = false;
    extra.leaseExpiresAtMs = Infinity;
  }
  const heapStamp = (chunk.heapStamp[index]! + 1) >>> 0;
  chunk.heapStamp[index] = heapStamp;
  const missing = chunk.location[index] === PAYLOAD_MISSING;
  const visibleAtMs = chunk.visibleAtMs[index]!;
  if (chunk.where[index] === Where.Failed) {
    // Without its payload here it counts as unavailable and stays out of the failure head.
    if (missing) {
      queue.unavailable++;
    } else {
      queue.failed++;
      queue.failedHeap.push(message.seq, message.seq, heapStamp);
    }
  } else if (visibleAtMs > nowMs) {
    chunk.where[index] = Where.Delayed;
    queue.delayed++;
    queue.delayedHeap.push(visibleAtMs, message.seq, heapStamp);
  } else if (missing) {
    chunk.where[index] = Where.Unavailable;
    queue.unavailable++;
  } else {
    chunk.where[index] = Where.Fresh;
    queue.visible++;
  }
}

function isDue(queue: Queue, message: Message, nowMs: number): boolean {
  return queue.retentionMs > 0 && message.retentionStartMs + queue.retentionMs <= nowMs;
}

/**
 * receive: leases the visible message first in send order at `nowMs` (delays that elapsed count
 * as visible; messages past retention are held back for expiry, never handed out; messages whose
 * payload this replica lacks are held back as unavailable and skipped). Returns the
 * leased message (deliveries and lease deadline set), null when nothing is visible, or
 * RATE_LIMITED when a message is visible but the queue's rate limit has no token (no lease then).
 * The caller checks the queue is not deleting.
 */
export function receive(state: SpoolState, queue: Queue, nowMs: number): ReceiveOutcome {
  if (queue.delayed > 0) promoteDelayed(queue, nowMs);
  // Each pass either returns or moves one message out of the visible structures: bounded.
  for (;;) {
    if (queue.visible - queue.expiring === 0) return null;
    const fresh = queue.order.firstFresh();
    const ready = readyTop(queue);
    const readyFirst = fresh === undefined || (ready !== undefined && ready.seq < fresh.seq);
    const message = readyFirst ? ready : fresh;
    if (message === undefined) return null;
    if (isDue(queue, message, nowMs)) {
      placeExpiring(queue, message);
      continue;
    }
    if (message.location === PAYLOAD_MISSING) {
      placeUnavailable(state, queue, message);
      continue;
    }
    if (queue.bucket !== null && !queue.bucket.tryTake(nowMs)) return RATE_LIMITED;
    placeLeased(state, queue, message, nowMs);
    return message;
  }
}

/** When the next receive of a rate-limited queue could get a token (ms); `nowMs` if unlimited. */
export function nextReceiveTokenAtMs(queue: Queue, nowMs: number): number {
  return queue.bucket === null ? nowMs : queue.bucket.nextTokenAtMs(nowMs);
}

/**
 * Resolves a delivery lease (queue generation, seq, message generation, delivery number) at
 * `nowMs`: the leased message, or why the lease settles nothing: `stale` (queue deleted or
 * recreated), `expired` (its lease timed out, even if the timeout is not processed yet),
 * `settled` (acked, nacked, released, failed, discarded, or its settlement is in the log).
 */
export function resolveLease(
  state: SpoolState,
  queueGen: number,
  seq: number,
  gen: number,
  delivery: number,
  nowMs: number,
): Message | GoneReason {
  const queue = state.queuesByGen.get(queueGen);
  if (queue === undefined) return 'stale';
  const message = queue.order.find(seq);
  if (message === undefined) return 'settled';
  if (message.where === Where.Leased && message.deliveries === delivery && message.gen === gen) {
    if (message.settling) return message.timedOutDelivery === delivery ? 'expired' : 'settled';
    return message.leaseExpiresAtMs <= nowMs ? 'expired' : message;
  }
  return delivery !== 0 && message.timedOutDelivery === delivery ? 'expired' : 'settled';
}

/** Resolves a failure lease: the failed message it names (same generation), or stale/settled. */
export function resolveFailureLease(
  state: SpoolState,
  queueGen: number,
  seq: number,
  gen: number,
): Message | GoneReason {
  const queue = state.queuesByGen.get(queueGen);
  if (queue === undefined) return 'stale';
  const message = queue.order.find(seq);
  if (message === undefined || message.where !== Where.Failed || message.gen !== gen) {
    return 'settled';
  }
  return message;
}

/**
 * Resolves a handle minted at (gen, deliveries, leased): valid while the message has not been
 * delivered again, settled, recovered or discarded since. A handle minted while pending stays
 * valid for that delivery only. Returns the message, or stale/settled.
 */
export function resolveHandle(
  state: SpoolState,
  queueGen: number,
  seq: number,
  gen: number,
  deliveries: number,
  leased: boolean,
): Message | GoneReason {
  const queue = state.queuesByGen.get(queueGen);
  if (queue === undefined) return 'stale';
  const message = queue.order.find(seq);
  if (message === undefined || message.gen !== gen || message.deliveries !== deliveries) {
    return 'settled';
  }
  if ((message.where === Where.Leased) !== leased) return 'settled';
  return message;
}

/**
 * renew: extends a valid lease to `nowMs` + the queue's current lease timeout. On a queue with no
 * lease timeout it changes nothing. Returns the lease deadline (ms), Infinity when it has none.
 */
export function renewLease(
  state: SpoolState,
  queue: Queue,
  message: Message,
  nowMs: number,
): number {
  const timeoutSeconds = queue.settings.leaseTimeoutSeconds;
  if (timeoutSeconds > 0) setLeaseDeadline(state, queue, message, nowMs + timeoutSeconds * 1000);
  return message.leaseExpiresAtMs;
}

/**
 * release without delay: returns a leased message to its place by seq without a log entry and
 * without spending a retry; counts releasedTotal. The caller resolved the lease first.
 */
export function releaseNow(state: SpoolState, queue: Queue, message: Message): void {
  returnFromLease(state, queue, message);
  queue.counters.released++;
  state.counters.released++;
}

/**
 * A receive leased `message` but its payload turned out unreadable here (the host's read failed
 * its checksum): the lease is withdrawn before anyone saw it, the payload's location is dropped
 * (the replica fetches a good copy), and the message is held back as unavailable. No retry is
 * spent and nothing is counted as released or nacked. The caller only passes a lease it has
 * not handed out.
 */
export function withdrawUnreadable(state: SpoolState, queue: Queue, message: Message): void {
  assert(message.where === Where.Leased && !message.settling, 'withdrawing a settled lease');
  dropLocation(state, queue, message);
  placeUnavailable(state, queue, message);
  // No token names this delivery: undoing its number keeps a send handle valid, as nothing the
  // client could see moved the message. (A deadline entry it left stays stale: its key differs
  // from the next lease's deadline, or it is dropped as settling once that one fires.)
  message.deliveries--;
}

/**
 * Collects up to `max` leases of `queue` whose deadline passed by `nowMs` into `out`, marking
 * each as settling by timeout (its holder's token now answers expired). The caller logs a nack
 * for each; if a nack turns out gone, the message moved on anyway.
 */
export function collectTimedOutLeases(
  queue: Queue,
  nowMs: number,
  out: Message[],
  max: number,
): void {
  const heap = queue.leases;
  while (heap.size > 0 && out.length < max) {
    const seq = heap.topSeq();
    if (!isLiveLeaseEntry(queue, heap.topKey(), seq, heap.topStamp())) {
      heap.pop();
      continue;
    }
    if (heap.topKey() > nowMs) return;
    heap.pop();
    const message = queue.order.find(seq)!;
    message.settling = true;
    message.timedOutDelivery = message.deliveries;
    out.push(message);
  }
}

/**
 * Collects up to `max` messages of `queue` whose retention elapsed by `nowMs` and that are not
 * leased, as (seq, gen) pairs for an expire command. A leased message is not expired while held:
 * it is marked and indexed again when its lease returns it.
 */
export function collectExpired(
  queue: Queue,
  nowMs: number,
  seqs: number[],
  gens: number[],
  max: number,
): void {
  if (queue.retentionMs === 0) return;
  while (seqs.length < max) {
    const message = takeDue(queue, nowMs);
    if (message === undefined) return;
    if (message.where === Where.Leased) {
      message.expiryDeferred = true;
      continue;
    }
    seqs.push(message.seq);
    gens.push(message.gen);
  }
}

/**
 * Takes the message first by retention start (the in-order index's head or the expiry heap's
 * top, the lower (start, seq) first) out of the retention index if its retention elapsed by
 * `nowMs`; undefined when none did.
 */
function takeDue(queue: Queue, nowMs: number): Message | undefined {
  const head = queue.order.expiryHead();
  const topSeq = validExpiryTop(queue);
  const headKey = head === undefined ? Infinity : head.retentionStartMs;
  const topKey = topSeq < 0 ? Infinity : queue.expiry.topKey();
  const headFirst =
    head !== undefined && (headKey < topKey || (headKey === topKey && head.seq < topSeq));
  const key = headFirst ? headKey : topKey;
  if (key === Infinity || key + queue.retentionMs > nowMs) return undefined;
  if (headFirst) {
    queue.order.takeExpiryHead(head);
    return head;
  }
  queue.expiry.pop();
  return queue.order.find(topSeq);
}

/** The seq of the expiry heap's top after dropping stale entries; -1 when empty. */
function validExpiryTop(queue: Queue): number {
  const heap = queue.expiry;
  while (heap.size > 0) {
    if (queue.order.isExpiryEntry(heap.topSeq(), heap.topStamp())) return heap.topSeq();
    heap.pop();
  }
  return -1;
}

/** Puts a message whose expiry was collected but not applied back in the expiry index. */
export function reindexExpiry(state: SpoolState, queue: Queue, message: Message): void {
  if (message.where !== Where.Removed) pushExpiry(state, queue, message);
}

/**
 * The earliest deadline of the spool at or after which `tick` work exists: a lease timing out, a
 * delay elapsing (long polls to wake), retention coming due. Infinity when none. Drops stale heap
 * tops on the way and resets the deadline hint to the result.
 */
export function nextDeadlineMs(state: SpoolState): number {
  let next = Infinity;
  for (const queue of state.queues.values()) {
    const lease = leaseTop(queue);
    if (lease < next) next = lease;
    const delayed = delayedTop(queue);
    if (delayed < next) next = delayed;
    const expiry = expiryTop(queue);
    if (expiry < next) next = expiry;
  }
  state.deadlineHintMs = next;
  return next;
}

function leaseTop(queue: Queue): number {
  const heap = queue.leases;
  while (heap.size > 0) {
    if (isLiveLeaseEntry(queue, heap.topKey(), heap.topSeq(), heap.topStamp())) {
      return heap.topKey();
    }
    heap.pop();
  }
  return Infinity;
}

function delayedTop(queue: Queue): number {
  const heap = queue.delayedHeap;
  while (heap.size > 0) {
    if (queue.order.isPlaced(heap.topSeq(), Where.Delayed, heap.topStamp())) return heap.topKey();
    heap.pop();
  }
  return Infinity;
}

function expiryTop(queue: Queue): number {
  if (queue.retentionMs === 0) return Infinity;
  const head = queue.order.expiryHead();
  const headKey = head === undefined ? Infinity : head.retentionStartMs;
  const topKey = validExpiryTop(queue) < 0 ? Infinity : queue.expiry.topKey();
  return Math.min(headKey, topKey) + queue.retentionMs;
}

/** The oldest failed message (lowest seq), or undefined. */
export function failureHead(queue: Queue): Message | undefined {
  return failedTop(queue);
}

/** Makes due delayed messages of `queue` visible at `nowMs`; returns how many. */
export function promote(queue: Queue, nowMs: number): number {
  return queue.delayed > 0 ? promoteDelayed(queue, nowMs) : 0;
}

/** Marks a lease as settling: a command ending it is in the log. */
export function beginSettle(message: Message): void {
  message.settling = true;
}

/**
 * Undoes `beginSettle` when the command was refused (the lease still holds): the lease counts
 * again and its deadline is indexed again (settling entries are dropped from the lease index).
 */
export function endSettle(state: SpoolState, queue: Queue, message: Message): void {
  if (message.where !== Where.Leased || !message.settling) return;
  message.settling = false;
  if (message.leaseExpiresAtMs !== Infinity) {
    setLeaseDeadline(state, queue, message, message.leaseExpiresAtMs);
  }
}

/**
 * The primary's check before logging an append (send, or the send half of ack-and-send) of
 * `growthBytes` with `dedupKey` (latin1 key string, null for none) into `queue` at `nowMs`, with
 * in-flight appends counted. Returns null to go ahead, the original seq (>= 1) for a dedup hit,
 * or an error, in this order: 400 dedup_disabled, 409 dedup_in_flight, (the dedup hit),
 * 409 queue_draining/queue_deleting, 507 spool_full. Apply checks again in the same order; this
 * answers early and keeps in-flight keys exclusive.
 */
export function precheckAppend(
  state: SpoolState,
  queue: Queue,
  dedupKey: string | null,
  growthBytes: number,
  countsMessage: boolean,
  nowMs: number,
): MqError | number | null {
  if (dedupKey !== null) {
    if (queue.settings.dedupWindowSeconds === 0) {
      return new MqError('dedup_disabled', 'queue has no dedup window');
    }
    if (queue.inflightDedup.has(dedupKey)) {
      return new MqError('dedup_in_flight', 'a send with this dedup key is settling; retry');
    }
    const original = queue.dedup.lookup(dedupKey, nowMs);
    if (original >= 0) return original;
  }
  if (queue.state === 'draining') return new MqError('queue_draining', 'queue is draining');
  if (queue.state === 'deleting') return new MqError('queue_deleting', 'queue is being deleted');
  const plan = state.plan;
  if (countsMessage && state.messageCount + state.inflightCount + 1 > plan.messagesPerSpoolMax) {
    return spoolFull();
  }
  const bytes = state.byteCount + state.inflightBytes + growthBytes;
  if (growthBytes > 0 && bytes > plan.payloadBytesPerSpoolMax) {
    return spoolFull();
  }
  const keys = state.dedupKeyCount + queue.inflightDedup.size;
  if (dedupKey !== null && keys >= plan.dedupKeysPerSpoolMax) {
    return spoolFull();
  }
  return null;
}

/** Built only when refusing: constructing an Error captures a stack trace. */
function spoolFull(): MqError {
  return new MqError('spool_full', 'spool would exceed its plan maximum');
}

/** Counts an append as in flight (it is in the log, not yet applied). Undo with `endAppend`. */
export function beginAppend(
  state: SpoolState,
  queue: Queue,
  bytes: number,
  dedupKey: string | null,
): void {
  queue.inflightCount++;
  queue.inflightBytes += bytes;
  state.inflightCount++;
  state.inflightBytes += bytes;
  if (dedupKey !== null) queue.inflightDedup.add(dedupKey);
}

export function endAppend(
  state: SpoolState,
  queue: Queue,
  bytes: number,
  dedupKey: string | null,
): void {
  queue.inflightCount--;
  queue.inflightBytes -= bytes;
  state.inflightCount--;
  state.inflightBytes -= bytes;
  if (dedupKey !== null) queue.inflightDedup.delete(dedupKey);
}
