// Primitive moves of a message between resting places. Each keeps the per-state counts, the
// spool totals and the index structures consistent; the transitions (replicated and primary-local)
// are compositions of these. Heap entries are never removed eagerly: a move bumps the message's
// stamp so older entries fail validation, and heaps are compacted once stale entries dominate.

import { assert } from './assert.js';
import { small } from './columns.js';
import { type Message, type MessageExtra, Where } from './message.js';
import { PAYLOAD_MISSING } from './payload-store.js';
import type { Queue } from './queue.js';
import type { SpoolState } from './spool-state.js';

/** Stale entries tolerated in a heap beyond twice its live entries. */
const HEAP_SLACK = 64;

function leave(queue: Queue, message: Message): void {
  const chunk = message.held();
  const index = message.index;
  switch (chunk.where[index]) {
    case Where.Fresh:
    case Where.Ready:
      queue.visible--;
      break;
    case Where.Expiring:
      queue.visible--;
      queue.expiring--;
      break;
    case Where.Delayed:
      queue.delayed--;
      break;
    case Where.Leased: {
      queue.pending--;
      const extraId = chunk.extra[index]!;
      if (extraId !== 0) {
        const extra = queue.order.extraAt(extraId);
        extra.settling = false;
        extra.leaseExpiresAtMs = Infinity;
      }
      break;
    }
    case Where.Failed:
      // A failed message whose payload this replica lacks counts as unavailable here.
      if (chunk.location[index] === PAYLOAD_MISSING) queue.unavailable--;
      else queue.failed--;
      break;
    case Where.Unavailable:
      queue.unavailable--;
      break;
    default:
      assert(false, 'moving a removed message');
  }
}

function enter(queue: Queue, message: Message, where: Where): void {
  const chunk = message.held();
  const index = message.index;
  chunk.where[index] = where;
  switch (where) {
    case Where.Fresh:
    case Where.Ready:
      queue.visible++;
      break;
    case Where.Expiring:
      queue.visible++;
      queue.expiring++;
      break;
    case Where.Delayed:
      queue.delayed++;
      break;
    case Where.Leased:
      queue.pending++;
      break;
    case Where.Failed:
      if (chunk.location[index] === PAYLOAD_MISSING) queue.unavailable++;
      else queue.failed++;
      break;
    case Where.Unavailable:
      assert(chunk.location[index] === PAYLOAD_MISSING, 'unavailable with a payload location');
      queue.unavailable++;
      break;
    default:
      assert(false, 'entering an unknown place');
  }
}

/**
 * Stores a new message (just appended to the queue's columns with these fields) as Fresh or
 * Delayed.
 */
export function storeMessage(
  state: SpoolState,
  queue: Queue,
  message: Message,
  byteLength: number,
  createdAtMs: number,
  visibleAtMs: number,
): void {
  queue.total++;
  queue.dataBytes += byteLength;
  state.messageCount++;
  state.byteCount += byteLength;
  if (visibleAtMs > createdAtMs) placeDelayed(state, queue, message, true);
  else enter(queue, message, Where.Fresh);
  // A new message's retention clock starts at its visibility.
  pushExpiry(state, queue, message, true, visibleAtMs);
}

/**
 * Makes a message visible in its place by seq (ready heap); unavailable instead when this
 * replica lacks its payload (receive would only hold it back).
 */
export function placeVisible(queue: Queue, message: Message, fresh: boolean): void {
  if (!fresh) leave(queue, message);
  if (message.location === PAYLOAD_MISSING) {
    enter(queue, message, Where.Unavailable);
    nextStamp(message);
    return;
  }
  enter(queue, message, Where.Ready);
  queue.ready.push(message.seq, message.seq, nextStamp(message));
  if (queue.ready.size > 2 * queue.visible + HEAP_SLACK) {
    queue.ready.retain((_key, seq, stamp) => queue.order.isPlaced(seq, Where.Ready, stamp));
  }
}

/** Delays a message until its `visibleAtMs` (already set by the caller). */
export function placeDelayed(
  state: SpoolState,
  queue: Queue,
  message: Message,
  fresh: boolean,
): void {
  if (!fresh) leave(queue, message);
  enter(queue, message, Where.Delayed);
  const visibleAtMs = message.visibleAtMs;
  queue.delayedHeap.push(visibleAtMs, message.seq, nextStamp(message));
  state.noteDeadline(visibleAtMs);
  if (queue.delayedHeap.size > 2 * queue.delayed + HEAP_SLACK) {
    queue.delayedHeap.retain((_key, seq, stamp) => queue.order.isPlaced(seq, Where.Delayed, stamp));
  }
}

/** Bumps the heap stamp of `message` (older heap entries go stale) and returns it. */
function nextStamp(message: Message): number {
  const chunk = message.held();
  const index = message.index;
  const stamp = (chunk.heapStamp[index]! + 1) >>> 0;
  chunk.heapStamp[index] = stamp;
  return stamp;
}

/** Fails a message at `atMs`: its retention clock restarts then. */
export function placeFailed(state: SpoolState, queue: Queue, message: Message, atMs: number): void {
  leave(queue, message);
  enter(queue, message, Where.Failed);
  queue.failedHeap.push(message.seq, message.seq, nextStamp(message));
  if (queue.failedHeap.size > 2 * queue.failed + HEAP_SLACK) {
    queue.failedHeap.retain((_key, seq, stamp) => queue.order.isPlaced(seq, Where.Failed, stamp));
  }
  message.retentionStartMs = atMs;
  message.expiryDeferred = false;
  pushExpiry(state, queue, message);
}

/** Holds back a visible message whose retention came due (receive skips it from now on). */
export function placeExpiring(queue: Queue, message: Message): void {
  leave(queue, message);
  enter(queue, message, Where.Expiring);
  nextStamp(message);
}

/**
 * Holds back a visible message, or one leased by a receive that could not hand it out, whose
 * payload this replica does not hold (location PAYLOAD_MISSING): receive skips it until
 * `restoreLocation`. No retry is spent and the retention clock keeps running.
 */
export function placeUnavailable(state: SpoolState, queue: Queue, message: Message): void {
  const wasLeased = message.where === Where.Leased;
  leave(queue, message);
  enter(queue, message, Where.Unavailable);
  nextStamp(message);
  if (wasLeased && message.expiryDeferred) {
    message.expiryDeferred = false;
    pushExpiry(state, queue, message);
  }
}

/**
 * Forgets where this replica keeps a message's payload (its bytes failed their checksum or are
 * gone): the store may reclaim the space, and the message counts as missing until a good copy
 * is fetched. A visible message is held back as unavailable at once; a failed one counts as
 * unavailable and the failure head skips it (its heap entry goes stale); a delayed or pending
 * one keeps its place (a receive finds it later). Replica-local. No-op when already missing.
 */
export function dropLocation(state: SpoolState, queue: Queue, message: Message): void {
  if (message.location === PAYLOAD_MISSING) return;
  state.payloads.release(message.location, message.byteLength);
  if (message.where === Where.Failed) {
    queue.failed--;
    queue.unavailable++;
    nextStamp(message);
  }
  message.location = PAYLOAD_MISSING;
  state.missingPayloads++;
  const where = message.where;
  if (where === Where.Fresh || where === Where.Ready) placeUnavailable(state, queue, message);
}

/**
 * Gives a message whose payload was missing here the location of a fetched copy: an
 * unavailable message returns to its place by seq among the visible ones, a failed one to the
 * failure heap (by seq). Replica-local.
 */
export function restoreLocation(
  state: SpoolState,
  queue: Queue,
  message: Message,
  location: number,
): void {
  assert(message.location === PAYLOAD_MISSING && location >= 0, 'restoring a held payload');
  message.location = location;
  state.missingPayloads--;
  if (message.where === Where.Unavailable) {
    placeVisible(queue, message, false);
  } else if (message.where === Where.Failed) {
    queue.unavailable--;
    queue.failed++;
    queue.failedHeap.push(message.seq, message.seq, nextStamp(message));
  }
}

/** Leases a visible message at `nowMs` for the queue's lease timeout (Infinity when 0). */
export function placeLeased(
  state: SpoolState,
  queue: Queue,
  message: Message,
  nowMs: number,
): void {
  leave(queue, message);
  enter(queue, message, Where.Leased);
  nextStamp(message);
  const extra = message.lease();
  extra.deliveries++;
  const timeoutSeconds = queue.settings.leaseTimeoutSeconds;
  if (timeoutSeconds > 0) {
    leaseUntil(state, queue, message.seq, extra, nowMs + timeoutSeconds * 1000);
  }
}

/**
 * Sets the deadline of the current lease (lease heap entry keyed by deadline, stamped by delivery).
 */
export function setLeaseDeadline(
  state: SpoolState,
  queue: Queue,
  message: Message,
  deadlineMs: number,
): void {
  leaseUntil(state, queue, message.seq, message.lease(), deadlineMs);
}

function leaseUntil(
  state: SpoolState,
  queue: Queue,
  seq: number,
  extra: MessageExtra,
  deadlineMs: number,
): void {
  extra.leaseExpiresAtMs = deadlineMs;
  queue.leases.push(deadlineMs, seq, extra.deliveries);
  state.noteDeadline(deadlineMs);
  if (queue.leases.size > 2 * queue.pending + HEAP_SLACK) {
    queue.leases.retain((key, entrySeq, stamp) => isLiveLeaseEntry(queue, key, entrySeq, stamp));
  }
}

/** Whether a lease heap entry (deadline, seq, delivery) is the current lease's. */
export function isLiveLeaseEntry(queue: Queue, key: number, seq: number, stamp: number): boolean {
  const extra = queue.order.extraIn(seq, Where.Leased);
  return (
    extra !== undefined &&
    !extra.settling &&
    extra.deliveries === stamp &&
    extra.leaseExpiresAtMs === key
  );
}

/** Returns a leased message to visible (its place by seq). No-op unless Leased (replicas). */
export function returnFromLease(state: SpoolState, queue: Queue, message: Message): void {
  if (message.where !== Where.Leased) return;
  placeVisible(queue, message, false);
  if (message.expiryDeferred) {
    message.expiryDeferred = false;
    pushExpiry(state, queue, message);
  }
}

/** Delays a message (any place but Removed) until `visibleAtMs`. */
export function delayMessage(
  state: SpoolState,
  queue: Queue,
  message: Message,
  visibleAtMs: number,
): void {
  const wasLeased = message.where === Where.Leased;
  message.visibleAtMs = visibleAtMs;
  placeDelayed(state, queue, message, false);
  if (wasLeased && message.expiryDeferred) {
    message.expiryDeferred = false;
    pushExpiry(state, queue, message);
  }
}

/**
 * (Re)indexes a message by its current retention clock start: by the send order itself when
 * `inOrder` (a new message) and that keeps the order sorted by retention start, else in the
 * expiry heap.
 */
export function pushExpiry(
  state: SpoolState,
  queue: Queue,
  message: Message,
  inOrder = false,
  startMs = message.retentionStartMs,
): void {
  const stamp = queue.order.indexExpiry(message, startMs, inOrder);
  if (stamp !== 0) queue.expiry.push(startMs, message.seq, stamp);
  if (queue.retentionMs > 0) state.noteDeadline(startMs + queue.retentionMs);
  if (queue.expiry.size > 2 * queue.total + HEAP_SLACK) {
    queue.expiry.retain((_key, seq, entryStamp) => queue.order.isExpiryEntry(seq, entryStamp));
  }
}

/** Removes a message from the queue (ack, discard, expiry). Drain completion is the caller's. */
export function removeMessage(state: SpoolState, queue: Queue, message: Message): void {
  state.snapshotGuard?.beforeChange(queue, message);
  leave(queue, message);
  const chunk = message.held();
  const index = message.index;
  chunk.where[index] = Where.Removed;
  const byteLength = chunk.byteLength[index]!;
  const location = small(chunk.location[index]!);
  chunk.location[index] = PAYLOAD_MISSING;
  queue.total--;
  queue.dataBytes -= byteLength;
  state.messageCount--;
  state.byteCount -= byteLength;
  if (location === PAYLOAD_MISSING) state.missingPayloads--;
  else state.payloads.release(location, byteLength);
  // Forgets its primary-local fields too (expiryDeferred and the rest read their defaults).
  queue.order.noteRemoved(message);
}

/**
 * Moves every visible message whose delay elapsed by `nowMs` to the ready heap. Returns how many.
 */
export function promoteDelayed(queue: Queue, nowMs: number): number {
  const heap = queue.delayedHeap;
  let promoted = 0;
  while (heap.size > 0) {
    const seq = heap.topSeq();
    if (!queue.order.isPlaced(seq, Where.Delayed, heap.topStamp())) {
      heap.pop();
      continue;
    }
    if (heap.topKey() > nowMs) break;
    heap.pop();
    placeVisible(queue, queue.order.find(seq)!, false);
    promoted++;
  }
  return promoted;
}

/** The lowest-seq message of the ready heap, after dropping stale entries; undefined if none. */
export function readyTop(queue: Queue): Message | undefined {
  const heap = queue.ready;
  while (heap.size > 0) {
    const seq = heap.topSeq();
    if (queue.order.isPlaced(seq, Where.Ready, heap.topStamp())) return queue.order.find(seq);
    heap.pop();
  }
  return undefined;
}

/**
 * The lowest-seq failed message whose payload this replica holds, after dropping stale entries;
 * undefined if none.
 */
export function failedTop(queue: Queue): Message | undefined {
  const heap = queue.failedHeap;
  while (heap.size > 0) {
    const seq = heap.topSeq();
    if (queue.order.isPlaced(seq, Where.Failed, heap.topStamp())) {
      const message = queue.order.find(seq)!;
      if (message.location !== PAYLOAD_MISSING) return message;
    }
    heap.pop();
  }
  return undefined;
}
