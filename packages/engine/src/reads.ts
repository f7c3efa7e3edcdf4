// Reads: views, counts, listings. They change no replicated state (a read may make elapsed
// delays visible in the index structures, which is derived state). Listings are keyset-paged:
// queues by name, messages by seq, so items added or removed between pages never make an item
// that exists throughout the walk repeat or be skipped.

import { countsOf } from './counters.js';
import { type Message, Where, messageIdOf } from './message.js';
import { promoteDelayed } from './moves.js';
import { PAYLOAD_MISSING } from './payload-store.js';
import type { Queue } from './queue.js';
import type { Counts, MessageState, MessageView, QueueView, SpoolView } from './service.js';
import { settingsView } from './settings.js';
import { type SpoolState, lowerBoundName } from './spool-state.js';

/** The state the interface shows for a message at `nowMs`. */
export function messageStateOf(message: Message, nowMs: number): MessageState {
  switch (message.where) {
    case Where.Leased:
      return 'pending';
    case Where.Failed:
      return message.location === PAYLOAD_MISSING ? 'unavailable' : 'failed';
    case Where.Unavailable:
      return 'unavailable';
    default:
      return message.visibleAtMs > nowMs ? 'delayed' : 'visible';
  }
}

/** Listing entry of a message (no handle: the host mints one when asked). */
export function messageView(queue: Queue, message: Message, nowMs: number): MessageView {
  const state = messageStateOf(message, nowMs);
  const view: {
    id: string;
    state: MessageState;
    retries: number;
    createdAtMs: number;
    visibleAtMs?: number;
    leaseExpiresAtMs?: number;
    expiresAtMs?: number;
  } = {
    id: messageIdOf(message.seq),
    state,
    retries: message.retries,
    createdAtMs: message.createdAtMs,
  };
  if (state === 'delayed') view.visibleAtMs = message.visibleAtMs;
  if (state === 'pending' && message.leaseExpiresAtMs !== Infinity) {
    view.leaseExpiresAtMs = message.leaseExpiresAtMs;
  }
  if (queue.retentionMs > 0) view.expiresAtMs = message.retentionStartMs + queue.retentionMs;
  return view;
}

export function queueView(state: SpoolState, queue: Queue): QueueView {
  return {
    name: queue.name,
    createdAtMs: queue.createdAtMs,
    state: queue.state,
    settings: settingsView(queue.settings, state.plan),
  };
}

/** Makes every elapsed delay of the spool visible (before counting). */
export function promoteAll(state: SpoolState, nowMs: number): void {
  for (const queue of state.queues.values()) {
    if (queue.delayed > 0) promoteDelayed(queue, nowMs);
  }
}

/** Stats of one queue at `nowMs`: in-flight sends count in total and dataBytes. */
export function queueCounts(queue: Queue, nowMs: number): Counts {
  if (queue.delayed > 0) promoteDelayed(queue, nowMs);
  return countsOf(
    {
      total: queue.total + queue.inflightCount,
      dataBytes: queue.dataBytes + queue.inflightBytes,
      delayed: queue.delayed,
      visible: queue.visible,
      pending: queue.pending,
      failed: queue.failed,
      unavailable: queue.unavailable,
    },
    queue.counters,
  );
}

/** Per-state counts summed across every queue, with the spool's own counters. */
export function spoolCounts(state: SpoolState, nowMs: number): Counts {
  promoteAll(state, nowMs);
  let delayed = 0;
  let visible = 0;
  let pending = 0;
  let failed = 0;
  let unavailable = 0;
  for (const queue of state.queues.values()) {
    delayed += queue.delayed;
    visible += queue.visible;
    pending += queue.pending;
    failed += queue.failed;
    unavailable += queue.unavailable;
  }
  return countsOf(
    {
      total: state.messageCount + state.inflightCount,
      dataBytes: state.byteCount + state.inflightBytes,
      delayed,
      visible,
      pending,
      failed,
      unavailable,
    },
    state.counters,
  );
}

/** Describe of the spool at `nowMs` (one snapshot: sampledAt = nowMs). */
export function spoolView(state: SpoolState, name: string, nowMs: number): SpoolView {
  return {
    name,
    queueCount: state.queues.size,
    stats: { ...spoolCounts(state, nowMs), sampledAtMs: nowMs, startedAtMs: state.startedAtMs },
  };
}

export interface QueueSelection {
  /** 1 .. 1000. */
  readonly limit: number;
  /** Resume strictly after this name (keyset); absent starts at the first name. */
  readonly afterName?: string;
  /** Keep only these names (unknown ones are simply absent). */
  readonly names?: readonly string[];
  /** Keep only names this predicate accepts (the host passes an RE2 test). */
  readonly match?: (name: string) => boolean;
}

export interface QueuePage {
  readonly queues: readonly Queue[];
  /** True when the selection continues past the last queue of the page. */
  readonly more: boolean;
}

/** A page of queues in byte order of name, selected by `names` and `match`. */
export function selectQueues(state: SpoolState, selection: QueueSelection): QueuePage {
  const names = state.names;
  const filter = selection.names === undefined ? null : new Set(selection.names);
  const start = selection.afterName === undefined ? 0 : upperBoundName(names, selection.afterName);
  const queues: Queue[] = [];
  for (let i = start; i < names.length; i++) {
    const name = names[i]!;
    if (filter !== null && !filter.has(name)) continue;
    if (selection.match !== undefined && !selection.match(name)) continue;
    if (queues.length === selection.limit) return { queues, more: true };
    queues.push(state.queues.get(name)!);
  }
  return { queues, more: false };
}

function upperBoundName(names: readonly string[], name: string): number {
  const index = lowerBoundName(names, name);
  return names[index] === name ? index + 1 : index;
}

export interface MessageSelection {
  readonly state?: MessageState;
  /** 1 .. 1000. */
  readonly limit: number;
  /** Resume strictly after this seq (keyset); 0 starts at the first message. */
  readonly afterSeq: number;
}

export interface MessagePage {
  readonly messages: readonly Message[];
  readonly more: boolean;
}

/** A page of a queue's messages in send order at `nowMs`, optionally of one state. */
export function selectMessages(
  queue: Queue,
  nowMs: number,
  selection: MessageSelection,
): MessagePage {
  if (queue.delayed > 0) promoteDelayed(queue, nowMs);
  const wanted = selection.state;
  const messages: Message[] = [];
  let more = false;
  queue.order.scanAfter(selection.afterSeq, (message) => {
    if (wanted !== undefined && messageStateOf(message, nowMs) !== wanted) return true;
    if (messages.length === selection.limit) {
      more = true;
      return false;
    }
    messages.push(message);
    return true;
  });
  return { messages, more };
}
