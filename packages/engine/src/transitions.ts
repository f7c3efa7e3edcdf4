// Replicated transitions: applying one logged command at its entry time. Deterministic: the
// result and the replicated state depend only on the state, the command and the time, so every
// replica applying the same log reaches the same state. Primary-local structures (leases) are
// kept consistent where they exist, and ignored where they don't (on a replica a message that the
// primary leased is simply visible).

import type {
  AckAndSendCommand,
  ApplyResult,
  Command,
  CreateQueueCommand,
  DelayCommand,
  DeleteQueueCommand,
  ExpireCommand,
  MessageRef,
  SendCommand,
  SetPlanCommand,
  UpdateQueueCommand,
} from './commands.js';
import { GONE, OK } from './commands.js';
import { dedupKeyString } from './dedup-table.js';
import { MqError } from './errors.js';
import { type Message, Where, messageIdOf } from './message.js';
import {
  delayMessage,
  placeFailed,
  placeVisible,
  pushExpiry,
  removeMessage,
  returnFromLease,
  storeMessage,
} from './moves.js';
import { Queue } from './queue.js';
import { effectiveRetentionSeconds, patchSettings } from './settings.js';
import type { SpoolState } from './spool-state.js';

/**
 * Applies `command` at `atMs` (clamped to never precede the previous apply).
 * Results: `ok`, `gone` (target message moved on), `appended`, `duplicate`, `queue`, `deleted`,
 * `draining`, `expired`, or `refused` with the interface's error (nothing changed).
 */
export function applyCommand(state: SpoolState, command: Command, atMs: number): ApplyResult {
  const nowMs = state.advanceTime(atMs);
  switch (command.type) {
    case 'send':
      return applySend(state, command, nowMs);
    case 'ack':
      return applyAck(state, command);
    case 'nack':
      return applyNack(state, command, nowMs);
    case 'release':
      return applyRelease(state, command, nowMs);
    case 'fail':
      return applyFail(state, command, nowMs);
    case 'discard':
      return applyDiscard(state, command);
    case 'recover':
      return applyRecover(state, command, nowMs);
    case 'ackAndSend':
      return applyAckAndSend(state, command, nowMs);
    case 'expire':
      return applyExpire(state, command);
    case 'createQueue':
      return applyCreateQueue(state, command, nowMs);
    case 'updateQueue':
      return applyUpdateQueue(state, command, nowMs);
    case 'deleteQueue':
      return applyDeleteQueue(state, command);
    case 'setPlan':
      return applySetPlan(state, command, nowMs);
  }
}

/**
 * setPlan: the spool's limits from now on, unless the command's version is older than the plan's
 * (then nothing changes). Stored messages and queues beyond new, lower caps stay (later appends
 * and creations are refused); every queue's enforced retention is recomputed from its own
 * setting and the new limit. Result: `ok`.
 */
function applySetPlan(state: SpoolState, command: SetPlanCommand, nowMs: number): ApplyResult {
  if (command.version < state.planVersion) return OK;
  state.plan = command.plan;
  state.planVersion = command.version;
  for (const queue of state.queues.values()) {
    const retentionSeconds = effectiveRetentionSeconds(queue.settings.retentionSeconds, state.plan);
    const retentionMs = retentionSeconds * 1000;
    if (retentionMs === queue.retentionMs) continue;
    queue.retentionMs = retentionMs;
    restoreExpiring(queue);
  }
  // Any message may now be due: ask the host to recompute its deadline.
  state.noteDeadline(nowMs);
  return OK;
}

function refused(error: MqError): ApplyResult {
  return { kind: 'refused', error };
}

function queueNotFound(): ApplyResult {
  return refused(new MqError('queue_not_found', 'queue does not exist'));
}

/** The queue refuses appends unless active: 409 queue_draining / queue_deleting. */
function closedToAppends(queue: Queue): ApplyResult | null {
  if (queue.state === 'draining') {
    return refused(new MqError('queue_draining', 'queue is draining'));
  }
  if (queue.state === 'deleting') {
    return refused(new MqError('queue_deleting', 'queue is being deleted'));
  }
  return null;
}

/** The live message `ref` names, if its queue generation and message generation still match. */
function findRef(state: SpoolState, ref: MessageRef): { queue: Queue; message: Message } | null {
  const queue = state.queuesByGen.get(ref.queueGen);
  if (queue === undefined) return null;
  // Done with the message before the command's apply returns: no handle is allocated.
  const message = queue.order.findScratch(ref.seq);
  if (message === undefined || message.gen !== ref.gen) return null;
  state.snapshotGuard?.beforeChange(queue, message);
  return { queue, message };
}

/** Drain completion: a draining queue is deleted once its last message is gone. */
function afterRemoval(state: SpoolState, queue: Queue): void {
  if (queue.state === 'draining' && queue.total === 0) dropQueue(state, queue);
}

/** Deletes a queue and every message in it. */
export function dropQueue(state: SpoolState, queue: Queue): void {
  const seqs = queue.order.liveSeqs();
  for (let i = 0; i < seqs.length; i++) removeMessage(state, queue, queue.order.find(seqs[i]!)!);
  state.dedupKeyCount -= queue.dedup.size;
  queue.dedup.clear();
  queue.ready.clear();
  queue.delayedHeap.clear();
  queue.failedHeap.clear();
  queue.expiry.clear();
  queue.leases.clear();
  queue.order.clear();
  state.removeQueue(queue);
}

/**
 * Checks whether `queue` accepts a new message of `bytes` with `dedupKey` (null for none), as a
 * send or the send half of ack-and-send. Returns null when it does; otherwise the refusal, in
 * this order: 400 dedup_disabled, a dedup hit (`duplicate` with the original seq: a retry learns
 * its message landed even once the queue drains), 409 queue_draining / queue_deleting,
 * 507 spool_full.
 * `growthBytes` is the payload growth the caps see (ack-and-send nets out the acked payload);
 * `countsMessage` is false for ack-and-send, which the message cap does not apply to.
 */
function checkAppend(
  state: SpoolState,
  queue: Queue,
  dedupKey: string | null,
  growthBytes: number,
  countsMessage: boolean,
  nowMs: number,
): ApplyResult | null {
  if (dedupKey !== null) {
    if (queue.settings.dedupWindowSeconds === 0) {
      return refused(new MqError('dedup_disabled', 'queue has no dedup window'));
    }
    const original = queue.dedup.lookup(dedupKey, nowMs);
    if (original >= 0) return { kind: 'duplicate', seq: original };
  }
  const closed = closedToAppends(queue);
  if (closed !== null) return closed;
  const plan = state.plan;
  if (countsMessage && state.messageCount + 1 > plan.messagesPerSpoolMax) {
    return spoolFull('messages');
  }
  if (growthBytes > 0 && state.byteCount + growthBytes > plan.payloadBytesPerSpoolMax) {
    return spoolFull('bytes');
  }
  if (dedupKey !== null && state.dedupKeyCount >= plan.dedupKeysPerSpoolMax) {
    return spoolFull('dedup keys');
  }
  return null;
}

function spoolFull(what: string): ApplyResult {
  return refused(new MqError('spool_full', `spool would exceed its plan maximum of ${what}`));
}

/** Appends a message (checks already passed) and remembers its dedup key. Returns its seq. */
function appendMessage(
  state: SpoolState,
  queue: Queue,
  payload: Uint8Array,
  delayMs: number,
  dedupKey: string | null,
  nowMs: number,
): number {
  const seq = state.nextSeq++;
  const location = state.payloads.append(seq, payload);
  const visibleAtMs = nowMs + delayMs;
  const byteLength = payload.byteLength;
  const message = queue.order.appendScratch(seq, nowMs, location, byteLength, visibleAtMs);
  storeMessage(state, queue, message, byteLength, nowMs, visibleAtMs);
  queue.counters.added++;
  state.counters.added++;
  if (dedupKey !== null) {
    const before = queue.dedup.size;
    queue.dedup.purge(nowMs);
    queue.dedup.record(dedupKey, seq, nowMs + queue.settings.dedupWindowSeconds * 1000);
    state.dedupKeyCount += queue.dedup.size - before;
  }
  return seq;
}

/**
 * send: appends a message to an active queue, visible now or after `delayMs` (retention clock
 * starts at visibility). Results: `appended` (seq), `duplicate` (dedup hit, nothing appended),
 * refused 404 queue_not_found, 400 dedup_disabled, 409 queue_draining/queue_deleting,
 * 507 spool_full (checked in that order, see checkAppend).
 */
function applySend(state: SpoolState, command: SendCommand, nowMs: number): ApplyResult {
  const queue = state.queuesByGen.get(command.queueGen);
  if (queue === undefined) return queueNotFound();
  const key = command.dedupKey === null ? null : dedupKeyString(command.dedupKey);
  const check = checkAppend(state, queue, key, command.payload.byteLength, true, nowMs);
  if (check !== null) return check;
  const seq = appendMessage(state, queue, command.payload, command.delayMs, key, nowMs);
  return { kind: 'appended', queueGen: queue.gen, seq };
}

/** ack: removes the delivered message (ackedTotal). Results: `ok`, `gone`. */
function applyAck(state: SpoolState, ref: MessageRef): ApplyResult {
  const found = findRef(state, ref);
  if (found === null || found.message.where === Where.Failed) return GONE;
  removeMessage(state, found.queue, found.message);
  found.queue.counters.acked++;
  state.counters.acked++;
  afterRemoval(state, found.queue);
  return OK;
}

/**
 * nack (explicit, or a lease timeout): spends a retry and returns the message to its place by
 * seq; once maxRetries redeliveries are done it fails instead (retention clock restarts).
 * Counts nackedTotal, and failedTotal when it fails. Results: `ok`, `gone`.
 */
function applyNack(state: SpoolState, ref: MessageRef, nowMs: number): ApplyResult {
  const found = findRef(state, ref);
  if (found === null || found.message.where === Where.Failed) return GONE;
  const { queue, message } = found;
  message.gen++;
  queue.counters.nacked++;
  state.counters.nacked++;
  if (message.retries < queue.settings.maxRetries) {
    message.retries++;
    returnFromLease(state, queue, message);
  } else {
    placeFailed(state, queue, message, nowMs);
    queue.counters.failed++;
    state.counters.failed++;
  }
  return OK;
}

/**
 * release: returns the message without spending a retry, visible now or after `delayMs`
 * (retention clock kept). Counts releasedTotal. Results: `ok`, `gone`.
 */
function applyRelease(state: SpoolState, command: DelayCommand, nowMs: number): ApplyResult {
  const found = findRef(state, command);
  if (found === null || found.message.where === Where.Failed) return GONE;
  const { queue, message } = found;
  message.gen++;
  queue.counters.released++;
  state.counters.released++;
  if (command.delayMs > 0) delayMessage(state, queue, message, nowMs + command.delayMs);
  else returnFromLease(state, queue, message);
  return OK;
}

/** fail: moves the message to failed now (retention clock restarts). failedTotal. `ok`, `gone`. */
function applyFail(state: SpoolState, ref: MessageRef, nowMs: number): ApplyResult {
  const found = findRef(state, ref);
  if (found === null || found.message.where === Where.Failed) return GONE;
  found.message.gen++;
  placeFailed(state, found.queue, found.message, nowMs);
  found.queue.counters.failed++;
  state.counters.failed++;
  return OK;
}

/**
 * discard (by lease, failure lease or handle): removes the message. discardedTotal. `ok`, `gone`.
 */
function applyDiscard(state: SpoolState, ref: MessageRef): ApplyResult {
  const found = findRef(state, ref);
  if (found === null) return GONE;
  removeMessage(state, found.queue, found.message);
  found.queue.counters.discarded++;
  state.counters.discarded++;
  afterRemoval(state, found.queue);
  return OK;
}

/**
 * recover: a failed message returns to its place by seq, visible now or after `delayMs`, with
 * retries reset and the retention clock restarted at visibility. Results: `ok`, `gone` (also
 * when the message is not failed).
 */
function applyRecover(state: SpoolState, command: DelayCommand, nowMs: number): ApplyResult {
  const found = findRef(state, command);
  if (found === null || found.message.where !== Where.Failed) return GONE;
  const { queue, message } = found;
  message.gen++;
  message.retries = 0;
  if (command.delayMs > 0) {
    message.retentionStartMs = nowMs + command.delayMs;
    delayMessage(state, queue, message, nowMs + command.delayMs);
  } else {
    message.visibleAtMs = nowMs;
    message.retentionStartMs = nowMs;
    placeVisible(queue, message, false);
  }
  pushExpiry(state, queue, message);
  return OK;
}

/**
 * ack-and-send: atomically acks the delivered message and appends a new one to the target queue.
 * A dedup hit refuses the whole command (409 dedup_claimed, details.messageId), nothing acked.
 * The message cap does not apply; the byte cap refuses only growth past it (507 spool_full).
 * Results: `appended`, `gone` (source moved on; checked first, so a committed retry is 410),
 * refused 404 queue_not_found, 409 queue_draining/queue_deleting/dedup_claimed,
 * 400 dedup_disabled, 507 spool_full.
 */
function applyAckAndSend(
  state: SpoolState,
  command: AckAndSendCommand,
  nowMs: number,
): ApplyResult {
  const found = findRef(state, command);
  if (found === null || found.message.where === Where.Failed) return GONE;
  const target = state.queuesByGen.get(command.targetGen);
  if (target === undefined) return queueNotFound();
  const key = command.dedupKey === null ? null : dedupKeyString(command.dedupKey);
  const growth = command.payload.byteLength - found.message.byteLength;
  const check = checkAppend(state, target, key, growth, false, nowMs);
  if (check !== null) {
    if (check.kind !== 'duplicate') return check;
    const messageId = messageIdOf(check.seq);
    return refused(new MqError('dedup_claimed', 'dedup key already claimed', { messageId }));
  }
  removeMessage(state, found.queue, found.message);
  found.queue.counters.acked++;
  state.counters.acked++;
  afterRemoval(state, found.queue);
  const seq = appendMessage(state, target, command.payload, command.delayMs, key, nowMs);
  return { kind: 'appended', queueGen: target.gen, seq };
}

/**
 * expire: removes the named messages whose generation still matches (the primary chose them:
 * retention elapsed and not leased). Counts expiredTotal. Result: `expired` with the count.
 */
function applyExpire(state: SpoolState, command: ExpireCommand): ApplyResult {
  const queue = state.queuesByGen.get(command.queueGen);
  if (queue === undefined) return { kind: 'expired', count: 0 };
  let count = 0;
  for (let i = 0; i < command.seqs.length; i++) {
    const message = queue.order.find(command.seqs[i]!);
    if (message === undefined || message.gen !== command.gens[i]) continue;
    removeMessage(state, queue, message);
    count++;
  }
  queue.counters.expired += count;
  state.counters.expired += count;
  afterRemoval(state, queue);
  return { kind: 'expired', count };
}

/**
 * createQueue: a new active queue with the given (resolved) settings, createdAt = apply time.
 * Results: `queue` (its generation), refused 409 queue_exists, 403 queue_limit,
 * 403 retention_limit / 400 invalid_argument (settings out of range).
 */
function applyCreateQueue(
  state: SpoolState,
  command: CreateQueueCommand,
  nowMs: number,
): ApplyResult {
  if (state.queues.has(command.name)) {
    return refused(new MqError('queue_exists', 'queue already exists'));
  }
  const limit = state.plan.queuesPerSpoolMax;
  if (state.queues.size >= limit) {
    return refused(new MqError('queue_limit', `spool already holds ${limit} queues`, { limit }));
  }
  const settings = patchSettings(command.settings, {}, state.plan);
  if (settings instanceof MqError) return refused(settings);
  const queue = new Queue(command.name, state.nextQueueGen++, nowMs, settings);
  queue.retentionMs = effectiveRetentionSeconds(settings.retentionSeconds, state.plan) * 1000;
  queue.startedAtMs = nowMs;
  queue.resetBucket(nowMs);
  state.addQueue(queue);
  return { kind: 'queue', queueGen: queue.gen };
}

/**
 * updateQueue: applies a settings patch. A changed dedup window forgets every key (the same value
 * changes nothing); a changed lease timeout applies to leases issued afterwards; a changed rate
 * limit starts a full bucket. Allowed while draining. Results: `queue`, refused 404
 * queue_not_found, 409 queue_deleting, 403 retention_limit, 400 invalid_argument.
 */
function applyUpdateQueue(
  state: SpoolState,
  command: UpdateQueueCommand,
  nowMs: number,
): ApplyResult {
  const queue = state.queuesByGen.get(command.queueGen);
  if (queue === undefined) return queueNotFound();
  if (queue.state === 'deleting') {
    return refused(new MqError('queue_deleting', 'queue is being deleted'));
  }
  const next = patchSettings(queue.settings, command.change, state.plan);
  if (next instanceof MqError) return refused(next);
  const previous = queue.settings;
  queue.settings = next;
  if (next.dedupWindowSeconds !== previous.dedupWindowSeconds) {
    state.dedupKeyCount -= queue.dedup.size;
    queue.dedup.clear();
  }
  if (next.retentionSeconds !== previous.retentionSeconds) {
    queue.retentionMs = effectiveRetentionSeconds(next.retentionSeconds, state.plan) * 1000;
    restoreExpiring(queue);
    // Any message may now be due: ask the host to recompute its deadline.
    state.noteDeadline(nowMs);
  }
  const intervalChanged = next.rateIntervalMicros !== previous.rateIntervalMicros;
  if (intervalChanged || next.rateBurst !== previous.rateBurst) {
    queue.resetBucket(nowMs);
  }
  return { kind: 'queue', queueGen: queue.gen };
}

/**
 * After a retention change, messages held back as due may no longer be: make them visible again.
 */
function restoreExpiring(queue: Queue): void {
  if (queue.expiring === 0) return;
  queue.order.scanAfter(0, (message) => {
    if (message.where === Where.Expiring) placeVisible(queue, message, false);
    return true;
  });
}

/**
 * deleteQueue: force deletes the queue and every message now (`deleted`). drain deletes an empty
 * queue now (`deleted`), else marks it draining (`draining`): it refuses appends, stays
 * consumable, and is deleted when its last message goes. Results also: refused 404.
 */
function applyDeleteQueue(state: SpoolState, command: DeleteQueueCommand): ApplyResult {
  const queue = state.queuesByGen.get(command.queueGen);
  if (queue === undefined) return queueNotFound();
  if (command.mode === 'force' || queue.total === 0) {
    dropQueue(state, queue);
    return { kind: 'deleted' };
  }
  queue.state = 'draining';
  return { kind: 'draining' };
}
