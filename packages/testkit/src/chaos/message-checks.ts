// Checks on each message's life: lost, resurrected, early, stuck, and the stored count. Each
// takes the index and reports violations through `emit` (checker.ts says what the harness must
// do for these rules to hold). Rules:
//
// - A message is *stored* when the history proves it: a send or ack-and-send answered 201/200
//   with its id, a receive returned it, or a listing showed it.
// - It is *removed* by an ack, a discard (lease or handle) or an ack-and-send of its lease.
//   Answered ok: certainly removed. Answered info or never answered: perhaps removed.
// - lost: stored, not in the final listing, and no removal that is certain or possible.
//   Failed messages count as delivered because they stay listed (state failed).
// - resurrected: received or listed by an operation invoked after a removal answered ok
//   completed, or in the final listing after one; or received after a fail answered ok with
//   no recover that could have come between.
// - early: received before its send's (or release's) delay could have elapsed.
// - stuck: in the final listing visible, pending or unavailable, or delayed though due.

import type { FinalQueue } from './final-state.js';
import type { Operation } from './history.js';
import {
  type HistoryIndex,
  type MessageRecord,
  doneMsOf,
  invokedMsOf,
  outcomeOf,
  removes,
} from './history-index.js';
import { excerptOf } from './excerpt.js';
import type { Violation } from './report.js';

export type Emit = (violation: Violation) => void;

/** Whether the history proves the message was stored at some point. */
export function isStored(record: MessageRecord): boolean {
  return (
    record.appends.length > 0 ||
    record.receives.length > 0 ||
    record.listings.length > 0 ||
    record.final !== undefined
  );
}

/** 'removed' (an ok removal), 'maybe' (only unanswered/info removals) or 'kept'. */
export function removalOf(record: MessageRecord): 'removed' | 'maybe' | 'kept' {
  let maybe = false;
  for (const operation of record.acts) {
    if (!removes(operation)) continue;
    const outcome = outcomeOf(operation);
    if (outcome === 'ok') return 'removed';
    if (outcome === 'info') maybe = true;
  }
  return maybe ? 'maybe' : 'kept';
}

function allOperations(record: MessageRecord): Operation[] {
  return [...record.appends, ...record.receives, ...record.acts, ...record.listings];
}

function base(record: MessageRecord): Pick<Violation, 'queue' | 'messageId' | 'payload'> {
  return {
    ...(record.queue === undefined ? {} : { queue: record.queue }),
    messageId: record.id,
    ...(record.payload === undefined ? {} : { payload: record.payload }),
  };
}

/** lost: see the file comment. */
export function checkLost(index: HistoryIndex, emit: Emit): void {
  for (const record of index.messages.values()) {
    if (!isStored(record) || record.final !== undefined) continue;
    if (removalOf(record) !== 'kept') continue;
    const how =
      record.receives.length === 0
        ? 'never received'
        : `received ${record.receives.length} time(s) but never acked, discarded or failed`;
    emit({
      category: 'lost',
      ...base(record),
      explanation:
        `message ${record.id} (${record.payload ?? 'payload unknown'}) ${how}; ` +
        'not in the final listing',
      excerpt: excerptOf(allOperations(record)),
    });
  }
}

/** resurrected: see the file comment. */
export function checkResurrected(index: HistoryIndex, emit: Emit): void {
  const anonymousRecovers = index.operations.filter(
    (op) => op.invoke.kind === 'recover' && op.invoke.messageId === undefined,
  );
  for (const record of index.messages.values()) {
    checkAfterRemoval(record, emit);
    checkAfterFail(record, anonymousRecovers, emit);
  }
}

function checkAfterRemoval(record: MessageRecord, emit: Emit): void {
  let removal: Operation | undefined;
  for (const operation of record.acts) {
    if (!removes(operation) || outcomeOf(operation) !== 'ok') continue;
    if (removal === undefined || doneMsOf(operation) < doneMsOf(removal)) removal = operation;
  }
  if (removal === undefined) return;
  const removedMs = doneMsOf(removal);
  const seen = [...record.receives, ...record.listings].filter((op) => invokedMsOf(op) > removedMs);
  if (seen.length > 0) {
    emit({
      category: 'resurrected',
      ...base(record),
      explanation:
        `message ${record.id} ${seen[0]!.invoke.kind === 'recv' ? 'received' : 'listed'} ` +
        `again after ${removal.invoke.kind} (op ${removal.invoke.op}) answered success`,
      excerpt: excerptOf([removal, ...seen]),
    });
    return;
  }
  if (record.final !== undefined) {
    emit({
      category: 'resurrected',
      ...base(record),
      explanation:
        `message ${record.id} is in the final listing (state ${record.final.state}) after ` +
        `${removal.invoke.kind} (op ${removal.invoke.op}) answered success`,
      excerpt: excerptOf([removal]),
    });
  }
}

function checkAfterFail(record: MessageRecord, anonymous: readonly Operation[], emit: Emit): void {
  const recovers = [...anonymous, ...record.acts.filter((op) => op.invoke.kind === 'recover')];
  for (const failed of record.acts) {
    if (failed.invoke.kind !== 'fail' || outcomeOf(failed) !== 'ok') continue;
    const failedMs = doneMsOf(failed);
    for (const receive of record.receives) {
      if (invokedMsOf(receive) <= failedMs) continue;
      // A recover may have taken effect between the fail and this receive.
      const recovered = recovers.some(
        (op) => invokedMsOf(op) < doneMsOf(receive) && doneMsOf(op) > invokedMsOf(failed),
      );
      if (recovered) continue;
      emit({
        category: 'resurrected',
        ...base(record),
        explanation:
          `message ${record.id} received (op ${receive.invoke.op}) after fail (op ` +
          `${failed.invoke.op}) answered success, with no recover in between`,
        excerpt: excerptOf([failed, receive]),
      });
      return;
    }
  }
}

/** early: see the file comment. `slackMs` allows for clock granularity. */
export function checkEarly(index: HistoryIndex, slackMs: number, emit: Emit): void {
  for (const record of index.messages.values()) {
    if (record.receives.length === 0) continue;
    checkSendDelay(index, record, slackMs, emit);
    checkReleaseDelay(record, slackMs, emit);
  }
}

function checkSendDelay(
  index: HistoryIndex,
  record: MessageRecord,
  slackMs: number,
  emit: Emit,
): void {
  const attempts =
    record.payload === undefined
      ? record.appends
      : (index.payloads.get(record.payload)?.sends ?? record.appends);
  let notBeforeMs = Number.POSITIVE_INFINITY;
  let delayed: Operation | undefined;
  for (const attempt of attempts) {
    const delayMs = attempt.invoke.delayMs ?? 0;
    const dueMs = invokedMsOf(attempt) + delayMs;
    if (dueMs < notBeforeMs) {
      notBeforeMs = dueMs;
      delayed = delayMs > 0 ? attempt : undefined;
    }
  }
  if (delayed === undefined) return;
  const early = record.receives.find((op) => doneMsOf(op) < notBeforeMs - slackMs);
  if (early === undefined) return;
  emit({
    category: 'early',
    ...base(record),
    explanation:
      `message ${record.id} received ${Math.round(notBeforeMs - doneMsOf(early))} ms before ` +
      `its send delay of ${delayed.invoke.delayMs} ms could have elapsed`,
    excerpt: excerptOf([delayed, early]),
  });
}

function checkReleaseDelay(record: MessageRecord, slackMs: number, emit: Emit): void {
  for (const release of record.acts) {
    const delayMs = release.invoke.delayMs ?? 0;
    if (release.invoke.kind !== 'release' || delayMs <= 0 || outcomeOf(release) !== 'ok') continue;
    const releasedMs = invokedMsOf(release);
    const early = record.receives.find(
      (op) => doneMsOf(op) > releasedMs && doneMsOf(op) < releasedMs + delayMs - slackMs,
    );
    if (early === undefined) continue;
    emit({
      category: 'early',
      ...base(record),
      explanation:
        `message ${record.id} received ${Math.round(releasedMs + delayMs - doneMsOf(early))} ms ` +
        `before the ${delayMs} ms delay of its release (op ${release.invoke.op}) ` +
        'could have elapsed',
      excerpt: excerptOf([release, early]),
    });
    return;
  }
}

/** stuck: see the file comment. `graceMs`: how long past due still counts as in transit. */
export function checkStuck(index: HistoryIndex, graceMs: number, emit: Emit): void {
  const cutoffMs = index.final.collectedAtMs - graceMs;
  for (const queue of index.final.queues) {
    for (const message of queue.messages) {
      const why = stuckReason(message, cutoffMs);
      if (why === undefined) continue;
      const record = index.messages.get(message.id);
      emit({
        category: 'stuck',
        queue: queue.name,
        messageId: message.id,
        ...(record?.payload === undefined ? {} : { payload: record.payload }),
        explanation: `message ${message.id} in queue ${queue.name} ${why} after the drain`,
        excerpt: record === undefined ? [] : excerptOf(allOperations(record)),
      });
    }
  }
}

function stuckReason(
  message: FinalQueue['messages'][number],
  cutoffMs: number,
): string | undefined {
  switch (message.state) {
    case 'visible':
      return 'is still visible';
    case 'unavailable':
      return 'is unavailable';
    case 'pending': {
      const expiresMs = timeMs(message.leaseExpiresAt);
      if (expiresMs === undefined) return 'is pending with no lease timeout';
      return expiresMs <= cutoffMs ? 'is pending though its lease expired' : undefined;
    }
    case 'delayed': {
      const dueMs = timeMs(message.visibleAt);
      return dueMs !== undefined && dueMs <= cutoffMs ? 'is delayed though due' : undefined;
    }
    default:
      return undefined;
  }
}

/** Milliseconds of an RFC 3339 time; undefined when absent or unparsable. */
export function timeMs(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * countMismatch, per final queue: stats `total` must equal the listing's length; and the listed
 * messages the history knows nothing of (no send answer, receive or listing named them, and no
 * payload matched them to a send) must be no more than the sends to the queue that got no
 * answer and were never seen. Known messages that are missing or back are lost and
 * resurrected; together the three say the stored count is what the history allows.
 */
export function checkCounts(index: HistoryIndex, emit: Emit): void {
  for (const queue of index.final.queues) {
    const total = queue.stats.total;
    if (total !== queue.messages.length) {
      emit({
        category: 'countMismatch',
        queue: queue.name,
        explanation:
          `queue ${queue.name}: stats total ${total} ` +
          `but the listing holds ${queue.messages.length}`,
        excerpt: [],
      });
      continue;
    }
    const unknown = queue.messages.filter((message) => isUnknown(index, message.id)).length;
    const unseen = unseenUnansweredSends(index, queue.name);
    if (unknown <= unseen) continue;
    emit({
      category: 'countMismatch',
      queue: queue.name,
      explanation:
        `queue ${queue.name}: the listing holds ${unknown} message(s) the history does not know, ` +
        `but only ${unseen} send(s) to it got no answer`,
      excerpt: [],
    });
  }
}

function isUnknown(index: HistoryIndex, id: string): boolean {
  const record = index.messages.get(id);
  if (record === undefined) return true;
  const named = record.appends.length + record.receives.length + record.listings.length > 0;
  return !named && record.final?.payload === undefined;
}

function unseenUnansweredSends(index: HistoryIndex, queue: string): number {
  let count = 0;
  for (const payload of index.payloads.values()) {
    if (payload.ids.size > 0) continue;
    const unanswered = payload.sends.some(
      (op) => op.invoke.queue === queue && outcomeOf(op) === 'info',
    );
    if (unanswered) count += 1;
  }
  return count;
}
