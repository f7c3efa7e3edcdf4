// Primitive moves of a message between resting places. Each keeps the per-state counts, the
// spool totals and the index structures consistent; the transitions (replicated and primary-local)
// are compositions of these. Heap entries are never removed eagerly: a move bumps the message's
// stamp so older entries fail validation, and heaps are compacted once stale entries dominate.

import { assert } from './assert.js';
import { type Message, Where } from './message.js';
import { PAYLOAD_MISSING } from './payload-store.js';
import type { Queue } from './queue.js';
import type { SpoolState } from './spool-state.js';

/** Stale entries tolerated in a heap beyond twice its live entries. */
const HEAP_SLACK = 64;

function leave(queue: Queue, message: Message): void {
  switch (message.where) {
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
    case Where.Leased:
      queue.pending--;
      message.settling = false;
      message.leaseExpiresAtMs = Infinity;
      break;
    case Where.Failed:
      // A failed message whose payload this replica lacks counts as unavailable here.
      if (message.location === PAYLOAD_MISSING) queue.unavailable--;
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
  message.where = where;
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
      if (message.location === PAYLOAD_MISSING) queue.unavailable++;
      else queue.failed++;
      break;
    case Where.Unavailable:
      assert(message.location === PAYLOAD_MISSING, 'unavailable with a payload location');
      queue.unavailable++;
      break;
    default:
      assert(false, 'entering an unknown place');
  }
}

/** Stores a new message (seq above every other in the queue) as Fresh or Delayed. */
export function storeMessage(state: SpoolState, queue: Queue, message: Message): void {
  queue.order.append(message);
  queue.total++;
  queue.dataBytes += message.byteLength;
  state.messageCount++;
  state.byteCount += message.byteLength;
  if (message.visibleAtMs > message.createdAtMs) placeDelayed(state, queue, message, true);
  else enter(queue, message, Where.Fresh);
  pushExpiry(state, queue, message);
}

/**
 * Makes a message visible in its place by seq (ready heap); unavailable instead when this
 * replica lacks its payload (receive would only hold it back).
 */
export function placeVisible(queue: Queue, message: Message, fresh: boolean): void {
  if (!fresh) leave(queue, message);
  if (message.location === PAYLOAD_MISSING) {
    enter(queue, message, Where.Unavailable);
    message.heapStamp++;
    return;
  }
  enter(queue, message, Where.Ready);
  queue.ready.push(message.seq, message, ++message.heapStamp);
  if (queue.ready.size > 2 * queue.visible + HEAP_SLACK) {
    queue.ready.retain((_key, m, stamp) => m.where === Where.Ready && m.heapStamp === stamp);
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
  queue.delayedHeap.push(message.visibleAtMs, message, ++message.heapStamp);
  state.noteDeadline(message.visibleAtMs);
  if (queue.delayedHeap.size > 2 * queue.delayed + HEAP_SLACK) {
    queue.delayedHeap.retain(isDelayedEntry);
  }
}

function isDelayedEntry(_key: number, message: Message, stamp: number): boolean {
  return message.where === Where.Delayed && message.heapStamp === stamp;
}

/** Fails a message at `atMs`: its retention clock restarts then. */
export function placeFailed(state: SpoolState, queue: Queue, message: Message, atMs: number): void {
  leave(queue, message);
  enter(queue, message, Where.Failed);
  queue.failedHeap.push(message.seq, message, ++message.heapStamp);
  if (queue.failedHeap.size > 2 * queue.failed + HEAP_SLACK) {
    queue.failedHeap.retain((_key, m, stamp) => m.where === Where.Failed && m.heapStamp === stamp);
  }
  message.retentionStartMs = atMs;
  message.expiryDeferred = false;
  pushExpiry(state, queue, message);
}

/** Holds back a visible message whose retention came due (receive skips it from now on). */
export function placeExpiring(queue: Queue, message: Message): void {
  leave(queue, message);
  enter(queue, message, Where.Expiring);
  message.heapStamp++;
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
  message.heapStamp++;
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
    message.heapStamp++;
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
    queue.failedHeap.push(message.seq, message, ++message.heapStamp);
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
  message.heapStamp++;
  message.deliveries++;
  const timeoutSeconds = queue.settings.leaseTimeoutSeconds;
  if (timeoutSeconds > 0) setLeaseDeadline(state, queue, message, nowMs + timeoutSeconds * 1000);
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
  message.leaseExpiresAtMs = deadlineMs;
  queue.leases.push(deadlineMs, message, message.deliveries);
  state.noteDeadline(deadlineMs);
  if (queue.leases.size > 2 * queue.pending + HEAP_SLACK) queue.leases.retain(isLiveLeaseEntry);
}

export function isLiveLeaseEntry(key: number, message: Message, stamp: number): boolean {
  return (
    message.where === Where.Leased &&
    !message.settling &&
    message.deliveries === stamp &&
    message.leaseExpiresAtMs === key
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

/** (Re)indexes a message by its current retention clock start. */
export function pushExpiry(state: SpoolState, queue: Queue, message: Message): void {
  queue.expiry.push(message.retentionStartMs, message, ++message.expiryStamp);
  if (queue.retentionMs > 0) state.noteDeadline(message.retentionStartMs + queue.retentionMs);
  if (queue.expiry.size > 2 * queue.total + HEAP_SLACK) {
    queue.expiry.retain((_key, m, stamp) => m.where !== Where.Removed && m.expiryStamp === stamp);
  }
}

/** Removes a message from the queue (ack, discard, expiry). Drain completion is the caller's. */
export function removeMessage(state: SpoolState, queue: Queue, message: Message): void {
  state.snapshotGuard?.beforeChange(queue, message);
  leave(queue, message);
  message.where = Where.Removed;
  message.expiryDeferred = false;
  queue.total--;
  queue.dataBytes -= message.byteLength;
  state.messageCount--;
  state.byteCount -= message.byteLength;
  if (message.location === PAYLOAD_MISSING) state.missingPayloads--;
  else state.payloads.release(message.location, message.byteLength);
  message.location = PAYLOAD_MISSING;
  queue.order.noteRemoved();
}

/**
 * Moves every visible message whose delay elapsed by `nowMs` to the ready heap. Returns how many.
 */
export function promoteDelayed(queue: Queue, nowMs: number): number {
  const heap = queue.delayedHeap;
  let promoted = 0;
  while (heap.size > 0) {
    const message = heap.topItem()!;
    if (message.where !== Where.Delayed || message.heapStamp !== heap.topStamp()) {
      heap.pop();
      continue;
    }
    if (heap.topKey() > nowMs) break;
    heap.pop();
    placeVisible(queue, message, false);
    promoted++;
  }
  return promoted;
}

/** The lowest-seq message of the ready heap, after dropping stale entries; undefined if none. */
export function readyTop(queue: Queue): Message | undefined {
  const heap = queue.ready;
  while (heap.size > 0) {
    const message = heap.topItem()!;
    if (message.where === Where.Ready && message.heapStamp === heap.topStamp()) return message;
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
    const message = heap.topItem()!;
    const live = message.where === Where.Failed && message.heapStamp === heap.topStamp();
    if (live && message.location !== PAYLOAD_MISSING) return message;
    heap.pop();
  }
  return undefined;
}
