// The history rearranged for checking: per message id, per payload, per lease, with the final
// listing attached. Pure: built once from the operations and the final state.

import type { FinalMessage, FinalState } from './final-state.js';
import type { Operation, OpKind, WindowEvent } from './history.js';

/** Everything the history and the final state say about one message id. */
export interface MessageRecord {
  readonly id: string;
  /** The queue it lives in, from its send, a receive or the final listing. */
  queue: string | undefined;
  /** Its payload, from its send or a receive. */
  payload: string | undefined;
  /** send / ackAndSend answered 201 or 200 with this id. */
  readonly appends: Operation[];
  /** recv answered 200 with this id. */
  readonly receives: Operation[];
  /** Operations naming this message through a lease or handle (settles, renew, recover). */
  readonly acts: Operation[];
  /** listMessages answered with this id among the items. */
  readonly listings: Operation[];
  /** Its entry in the final listing. */
  final: FinalMessage | undefined;
}

/** Every send or ack-and-send that carried one payload: the attempts of one logical send. */
export interface PayloadRecord {
  readonly payload: string;
  readonly sends: Operation[];
  /** Message ids this payload was seen under (send answers, receives, final listing). */
  readonly ids: Set<string>;
}

/** One delivery: the receive that granted a lease and every operation presenting it. */
export interface LeaseRecord {
  readonly lease: string;
  readonly messageId: string;
  readonly receive: Operation;
  readonly uses: Operation[];
}

export interface HistoryIndex {
  readonly operations: readonly Operation[];
  readonly windows: readonly WindowEvent[];
  readonly messages: Map<string, MessageRecord>;
  readonly payloads: Map<string, PayloadRecord>;
  readonly leases: Map<string, LeaseRecord>;
  /** Final queues by name. */
  readonly finalQueues: ReadonlyMap<string, FinalState['queues'][number]>;
  /** Final messages carrying a payload no send produced, and their queue. */
  readonly finalUnknownPayloads: { readonly queue: string; readonly message: FinalMessage }[];
  readonly final: FinalState;
}

/** Lease operations: they present a delivery lease in Svc-Lease. */
const LEASE_KINDS: ReadonlySet<OpKind> = new Set([
  'ack',
  'nack',
  'release',
  'fail',
  'renew',
  'discard',
  'ackAndSend',
  'recover',
]);

/** How an operation ended; one still in flight at the end counts as `info` (unknown). */
export function outcomeOf(operation: Operation): 'ok' | 'fail' | 'info' {
  return operation.completion?.type ?? 'info';
}

/** When it completed; +Infinity while in flight (its effect may land at any later time). */
export function doneMsOf(operation: Operation): number {
  return operation.completion?.atMs ?? Number.POSITIVE_INFINITY;
}

export function invokedMsOf(operation: Operation): number {
  return operation.invoke.atMs;
}

/** Builds the index. `operations` in invocation order; `windows` as the history flagged them. */
export function indexHistory(
  operations: readonly Operation[],
  windows: readonly WindowEvent[],
  final: FinalState,
): HistoryIndex {
  const index: HistoryIndex = {
    operations,
    windows,
    messages: new Map(),
    payloads: new Map(),
    leases: new Map(),
    finalQueues: new Map(final.queues.map((queue) => [queue.name, queue])),
    finalUnknownPayloads: [],
    final,
  };
  // Sends first: a long poll may be invoked before the send whose message it returns.
  for (const operation of operations) indexSend(index, operation);
  for (const operation of operations) indexReceive(index, operation);
  for (const operation of operations) indexTokenUse(index, operation);
  for (const operation of operations) indexListing(index, operation);
  for (const queue of final.queues) {
    for (const message of queue.messages) indexFinal(index, queue.name, message);
  }
  return index;
}

function messageRecord(index: HistoryIndex, id: string): MessageRecord {
  let record = index.messages.get(id);
  if (record === undefined) {
    record = {
      id,
      queue: undefined,
      payload: undefined,
      appends: [],
      receives: [],
      acts: [],
      listings: [],
      final: undefined,
    };
    index.messages.set(id, record);
  }
  return record;
}

function payloadRecord(index: HistoryIndex, payload: string): PayloadRecord {
  let record = index.payloads.get(payload);
  if (record === undefined) {
    record = { payload, sends: [], ids: new Set() };
    index.payloads.set(payload, record);
  }
  return record;
}

function indexSend(index: HistoryIndex, operation: Operation): void {
  const { invoke, completion } = operation;
  if (invoke.kind !== 'send' && invoke.kind !== 'ackAndSend') return;
  if (invoke.payload !== undefined) payloadRecord(index, invoke.payload).sends.push(operation);
  if (completion?.type !== 'ok' || completion.messageId === undefined) return;
  const record = messageRecord(index, completion.messageId);
  record.appends.push(operation);
  record.queue ??= invoke.queue;
  if (invoke.payload !== undefined) {
    record.payload ??= invoke.payload;
    payloadRecord(index, invoke.payload).ids.add(completion.messageId);
  }
}

function indexReceive(index: HistoryIndex, operation: Operation): void {
  const { invoke, completion } = operation;
  if (invoke.kind !== 'recv' || completion?.type !== 'ok') return;
  if (completion.messageId === undefined) return;
  const record = messageRecord(index, completion.messageId);
  record.receives.push(operation);
  record.queue ??= invoke.queue;
  if (completion.payload !== undefined) {
    record.payload ??= completion.payload;
    const known = index.payloads.get(completion.payload);
    if (known !== undefined) known.ids.add(completion.messageId);
  }
  if (completion.lease !== undefined) {
    index.leases.set(completion.lease, {
      lease: completion.lease,
      messageId: completion.messageId,
      receive: operation,
      uses: [],
    });
  }
}

/**
 * Attaches lease and handle operations to their message. The lease's receive names the message
 * most reliably; the invoke's own `messageId` (what the client believed) is the fallback.
 */
function indexTokenUse(index: HistoryIndex, operation: Operation): void {
  const { invoke } = operation;
  if (!LEASE_KINDS.has(invoke.kind)) return;
  let messageId = invoke.messageId;
  if (invoke.lease !== undefined) {
    const lease = index.leases.get(invoke.lease);
    if (lease !== undefined) {
      lease.uses.push(operation);
      messageId = lease.messageId;
    }
  }
  if (messageId !== undefined) messageRecord(index, messageId).acts.push(operation);
}

function indexListing(index: HistoryIndex, operation: Operation): void {
  const { invoke, completion } = operation;
  if (invoke.kind !== 'listMessages' || completion?.type !== 'ok') return;
  for (const item of completion.messages ?? []) {
    const record = messageRecord(index, item.id);
    record.listings.push(operation);
    record.queue ??= invoke.queue;
  }
}

function indexFinal(index: HistoryIndex, queue: string, message: FinalMessage): void {
  const record = messageRecord(index, message.id);
  record.final = message;
  record.queue ??= queue;
  if (message.payload === undefined) return;
  record.payload ??= message.payload;
  const known = index.payloads.get(message.payload);
  if (known === undefined) index.finalUnknownPayloads.push({ queue, message });
  else known.ids.add(message.id);
}

/** The kinds that remove a message when they succeed: ack, discard, and ackAndSend's ack. */
export function removes(operation: Operation): boolean {
  const kind = operation.invoke.kind;
  return kind === 'ack' || kind === 'discard' || kind === 'ackAndSend';
}
