// Checks on what sends produced: dedup broken, duplicated, unexpected payloads, and the count of
// indeterminate sends. The workload makes every payload unique per logical send (the attempts of
// one send, retried with one dedup key, share it), so a payload names one logical send.
//
// - dedupBroken: two sends with one (queue, dedup key) answered 201/200 with different message
//   ids, both certainly inside the window (the later completion minus the earlier invocation is
//   under the window less `slackMs`); or one keyed payload seen under two ids, all its attempts
//   inside the window. A 200 carrying the original's id is the correct dedup answer.
// - duplicated: one payload sent with no dedup key seen under two message ids.
// - unexpected: a received or listed payload no send carried; the payload of a send whose every
//   attempt was refused (4xx, or 503 for a send: answered before any append); a message whose
//   received payload differs from the payload its send carried.

import type { Operation } from './history.js';
import {
  type HistoryIndex,
  type PayloadRecord,
  doneMsOf,
  invokedMsOf,
  outcomeOf,
} from './history-index.js';
import { excerptOf } from './excerpt.js';
import type { Emit } from './message-checks.js';
import type { IndeterminateSends } from './report.js';

/** Pairs compared per dedup key at most; a key with more sends compares neighbours only. */
const DEDUP_GROUP_PAIRWISE_MAX = 64;

function windowMsOf(index: HistoryIndex, queue: string | undefined): number {
  if (queue === undefined) return 0;
  return (index.finalQueues.get(queue)?.dedupWindowSeconds ?? 0) * 1000;
}

function spanMs(operations: readonly Operation[]): number {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const op of operations) {
    first = Math.min(first, invokedMsOf(op));
    last = Math.max(last, doneMsOf(op));
  }
  return last - first;
}

/** dedupBroken and duplicated: see the file comment. */
export function checkDedup(index: HistoryIndex, slackMs: number, emit: Emit): void {
  const flagged = new Set<string>();
  for (const [key, sends] of keyedAnswers(index)) {
    const queue = sends[0]!.invoke.queue;
    const windowMs = windowMsOf(index, queue);
    if (windowMs <= 0) continue;
    const pair = conflictingPair(sends, windowMs - slackMs);
    if (pair === undefined) continue;
    for (const op of pair) if (op.invoke.payload !== undefined) flagged.add(op.invoke.payload);
    emit({
      category: 'dedupBroken',
      ...(queue === undefined ? {} : { queue }),
      explanation:
        `dedup key ${JSON.stringify(key.split('\u0000')[1])} answered ids ` +
        `${pair[0].completion?.messageId} and ${pair[1].completion?.messageId} ` +
        `inside its ${windowMs} ms window`,
      excerpt: excerptOf(pair),
    });
  }
  for (const record of index.payloads.values()) {
    if (record.ids.size < 2 || flagged.has(record.payload)) continue;
    checkPayloadIds(index, record, slackMs, emit);
  }
}

/** Sends answered 201/200 with an id, grouped by queue and dedup key. */
function keyedAnswers(index: HistoryIndex): Map<string, Operation[]> {
  const groups = new Map<string, Operation[]>();
  for (const op of index.operations) {
    const { kind, dedupKey, queue } = op.invoke;
    if ((kind !== 'send' && kind !== 'ackAndSend') || dedupKey === undefined) continue;
    if (outcomeOf(op) !== 'ok' || op.completion?.messageId === undefined) continue;
    const key = `${queue ?? ''}\u0000${dedupKey}`;
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [op]);
    else group.push(op);
  }
  return groups;
}

function conflictingPair(
  sends: readonly Operation[],
  windowMs: number,
): [Operation, Operation] | undefined {
  const sorted = [...sends].sort((a, b) => invokedMsOf(a) - invokedMsOf(b));
  const pairwise = sorted.length <= DEDUP_GROUP_PAIRWISE_MAX;
  for (let j = 1; j < sorted.length; j += 1) {
    for (let i = pairwise ? 0 : j - 1; i < j; i += 1) {
      const a = sorted[i]!;
      const b = sorted[j]!;
      if (a.completion?.messageId === b.completion?.messageId) continue;
      if (spanMs([a, b]) < windowMs) return [a, b];
    }
  }
  return undefined;
}

function checkPayloadIds(
  index: HistoryIndex,
  record: PayloadRecord,
  slackMs: number,
  emit: Emit,
): void {
  const keyed = record.sends.find((op) => op.invoke.dedupKey !== undefined);
  const ids = [...record.ids].join(', ');
  const receives = [...record.ids].flatMap((id) => index.messages.get(id)?.receives ?? []);
  const excerpt = excerptOf([...record.sends, ...receives]);
  const queue = record.sends[0]?.invoke.queue;
  const where = queue === undefined ? {} : { queue };
  if (keyed === undefined) {
    emit({
      category: 'duplicated',
      ...where,
      payload: record.payload,
      explanation:
        `payload ${record.payload} (no dedup key) appended as ${record.ids.size} messages: ${ids}`,
      excerpt,
    });
    return;
  }
  const windowMs = windowMsOf(index, keyed.invoke.queue);
  // Attempts spread over more than the window may legitimately append twice.
  if (windowMs <= 0 || !(spanMs(record.sends) < windowMs - slackMs)) return;
  emit({
    category: 'dedupBroken',
    ...where,
    payload: record.payload,
    explanation:
      `payload ${record.payload} sent under dedup key ${JSON.stringify(keyed.invoke.dedupKey)} ` +
      `appended as ${record.ids.size} messages (${ids}) inside the ${windowMs} ms window`,
    excerpt,
  });
}

/** unexpected: see the file comment. */
export function checkUnexpected(index: HistoryIndex, emit: Emit): void {
  const reported = new Set<string>();
  for (const op of index.operations) {
    const payload = op.completion?.payload;
    if (op.invoke.kind !== 'recv' || outcomeOf(op) !== 'ok' || payload === undefined) continue;
    if (reported.has(payload)) continue;
    const why = unexpectedReceive(index, op, payload);
    if (why === undefined) continue;
    reported.add(payload);
    const sends = index.payloads.get(payload)?.sends ?? [];
    emit({
      category: 'unexpected',
      ...(op.invoke.queue === undefined ? {} : { queue: op.invoke.queue }),
      ...(op.completion?.messageId === undefined ? {} : { messageId: op.completion.messageId }),
      payload,
      explanation: why,
      excerpt: excerptOf([...sends, op]),
    });
  }
  for (const { queue, message } of index.finalUnknownPayloads) {
    if (message.payload === undefined || reported.has(message.payload)) continue;
    reported.add(message.payload);
    emit({
      category: 'unexpected',
      queue,
      messageId: message.id,
      payload: message.payload,
      explanation:
        `final listing holds ${message.id} with payload ${message.payload} that no send carried`,
      excerpt: [],
    });
  }
  checkRefusedAppeared(index, reported, emit);
}

function unexpectedReceive(
  index: HistoryIndex,
  op: Operation,
  payload: string,
): string | undefined {
  const id = op.completion?.messageId;
  if (!index.payloads.has(payload)) {
    return `received payload ${payload} (id ${id}) that no send carried`;
  }
  const appended = id === undefined ? undefined : index.messages.get(id)?.appends[0];
  const sent = appended?.invoke.payload;
  if (sent !== undefined && sent !== payload) {
    return `received ${id} with payload ${payload}, but its send carried ${sent}`;
  }
  return undefined;
}

function checkRefusedAppeared(index: HistoryIndex, reported: Set<string>, emit: Emit): void {
  for (const record of index.payloads.values()) {
    if (record.ids.size === 0 || reported.has(record.payload)) continue;
    if (!record.sends.every((op) => outcomeOf(op) === 'fail')) continue;
    reported.add(record.payload);
    const receives = [...record.ids].flatMap((id) => index.messages.get(id)?.receives ?? []);
    emit({
      category: 'unexpected',
      payload: record.payload,
      explanation:
        `payload ${record.payload} appeared (ids ${[...record.ids].join(', ')}) ` +
        'though every send of it was refused',
      excerpt: excerptOf([...record.sends, ...receives]),
    });
  }
}

/** Logical sends with no definite answer, and how many of them appeared. */
export function countIndeterminate(index: HistoryIndex): IndeterminateSends {
  let total = 0;
  let appeared = 0;
  for (const record of index.payloads.values()) {
    const outcomes = record.sends.map(outcomeOf);
    if (outcomes.includes('ok') || !outcomes.includes('info')) continue;
    total += 1;
    if (record.ids.size > 0) appeared += 1;
  }
  return { total, appeared, notAppeared: total - appeared };
}
