// One row per operation from a gateway to the spool's host: its wire field, whether it writes,
// how its SpoolService method's arguments become a `Call` and back, its fields on the wire and
// its result variant. The remote service's methods (remote-methods.ts), dispatch (dispatch.ts),
// the call codec (call-codec.ts) and the answer codec (answer-codec.ts) are derived from it, so
// an operation is written out here once, next to its `Call` variant (calls.ts), the
// SpoolService interface (engine), its host step (member) and proto/member.proto.

import type { SpoolService } from '@spoolmq/engine';
import type { Call, CallOf, Op, OpArgs, OpResults } from './calls.js';
import { WireError, type ProtoReader } from './proto-reader.js';
import type { ProtoWriter } from './proto-writer.js';
import {
  R,
  type ResultName,
  writeDeleted,
  writeDeliveryOrNone,
  writeEmpty,
  writeMessagePage,
  writePeekResult,
  writeQueuePage,
  writeRenewed,
  writeSendResult,
  writeSpoolView,
  writeStatsPage,
} from './result-codec.js';
import {
  deleteModeNumber,
  deleteModeOf,
  messageStateNumber,
  messageStateOf,
  readListQuery,
  readSendRequest,
  readSettingsInput,
  readTokenRef,
  writeListQuery,
  writeQueueView,
  writeSendRequest,
  writeSettingsInput,
  writeTokenRef,
} from './view-codec.js';

/**
 * The fields of an operation message as decoded (call-codec.ts): by field number and wire type.
 * `s1` is undefined when absent (checkTarget's optional queue); strings default to ''.
 */
export interface OpFields {
  s1: string | undefined;
  s2: string;
  s4: string | undefined;
  n2: number;
  n3: number;
  b5: boolean;
  /** Repeated strings at field 2 (only for a row with `repeatedStrings2`). */
  strings2: string[] | undefined;
  nested1: unknown;
  nested2: unknown;
  nested3: unknown;
}

/** Readers of the length-delimited fields that hold messages, by field number (1 to 3). */
export type NestedReaders = readonly [
  ((r: ProtoReader) => unknown) | undefined,
  ((r: ProtoReader) => unknown) | undefined,
  ((r: ProtoReader) => unknown) | undefined,
];

export interface Operation<O extends Op> {
  /** Field number of the operation in `Call.op` (proto/member.proto). */
  readonly field: number;
  /** May change state: if its answer is lost after it was written, the outcome is unknown
   *  (500 operation_unconfirmed), never retried. */
  readonly write: boolean;
  /** The `Answer.result` variants it answers with, besides an error. */
  readonly results: readonly ResultName[];
  /** The call of the SpoolService method's arguments. */
  readonly call: (...args: OpArgs<O>) => CallOf<O>;
  /** The abort signal among the method's arguments (a receive's long poll). */
  readonly signal?: (...args: OpArgs<O>) => AbortSignal | undefined;
  /** The SpoolService method applied to a call. */
  readonly apply: (
    service: SpoolService,
    call: CallOf<O>,
    signal: AbortSignal | undefined,
  ) => Promise<OpResults[O]>;
  /** Appends the fields of the operation message. */
  readonly writeFields: (w: ProtoWriter, call: CallOf<O>) => void;
  /** Which length-delimited fields (1..3) are messages, and their readers. */
  readonly nested?: NestedReaders;
  /** Field 2 is a repeated string (spoolStats' queue filter). */
  readonly repeatedStrings2?: boolean;
  /** The call from its decoded fields; throws `WireError` when one it needs is missing. */
  readonly fromFields: (spool: string, f: OpFields) => CallOf<O>;
  /** Appends the result as its `Answer.result` variant. */
  readonly writeResult: (w: ProtoWriter, result: OpResults[O]) => void;
  /** The message payload a call carries (send, ackAndSend): it sizes the encoding. */
  readonly callPayload?: (call: CallOf<O>) => Uint8Array;
  /** The message payload a result carries (receive, failureHead, peek), if any. */
  readonly resultPayload?: (result: OpResults[O]) => Uint8Array | undefined;
}

export type Operations = { readonly [O in Op]: Operation<O> };

function required<T>(value: unknown, what: string): T {
  if (value === undefined) throw new WireError(`call without ${what}`);
  return value as T;
}

const done = (w: ProtoWriter): void => writeEmpty(w, R.done);
const writeQueue = (w: ProtoWriter, view: OpResults['describeQueue']): void =>
  writeQueueView(w, R.queue, view);
const LIST_QUERY: NestedReaders = [readListQuery, undefined, undefined];
const TOKEN: NestedReaders = [readTokenRef, undefined, undefined];
const SETTINGS: NestedReaders = [undefined, readSettingsInput, undefined];

/** The operations that take only a lease: ack, nack, fail (writes) and renew (not a write). */
function leaseOperation<O extends 'ack' | 'nack' | 'fail' | 'renew'>(
  op: O,
  field: number,
  apply: (service: SpoolService, spool: string, lease: string) => Promise<OpResults[O]>,
  writeResult: (w: ProtoWriter, result: OpResults[O]) => void,
): Operation<O> {
  type LeaseCall = CallOf<'ack' | 'nack' | 'fail' | 'renew'>;
  const row: Operation<'ack' | 'nack' | 'fail' | 'renew'> = {
    field,
    write: op !== 'renew',
    results: op === 'renew' ? ['renewed'] : ['done'],
    call: (spool: string, lease: string) => ({ op, spool, lease }) as LeaseCall,
    apply: (service, call) => apply(service, call.spool, call.lease),
    writeFields: (w, call) => w.string(1, call.lease),
    fromFields: (spool, f) => ({ op, spool, lease: f.s1 ?? '' }) as LeaseCall,
    writeResult: writeResult as (w: ProtoWriter, result: unknown) => void,
  };
  return row as unknown as Operation<O>;
}

export const OPERATIONS: Operations = {
  checkTarget: {
    field: 10,
    write: false,
    results: ['done'],
    call: (spool, queue) =>
      queue === undefined ? { op: 'checkTarget', spool } : { op: 'checkTarget', spool, queue },
    apply: (service, call) => service.checkTarget(call.spool, call.queue),
    writeFields: (w, call) => w.optionalString(1, call.queue),
    fromFields: (spool, f) =>
      f.s1 === undefined ? { op: 'checkTarget', spool } : { op: 'checkTarget', spool, queue: f.s1 },
    writeResult: done,
  },
  describeSpool: {
    field: 11,
    write: false,
    results: ['spool'],
    call: (spool) => ({ op: 'describeSpool', spool }),
    apply: (service, call) => service.describeSpool(call.spool),
    writeFields: () => undefined,
    fromFields: (spool) => ({ op: 'describeSpool', spool }),
    writeResult: writeSpoolView,
  },
  spoolStats: {
    field: 12,
    write: false,
    results: ['statsPage'],
    call: (spool, query) => ({ op: 'spoolStats', spool, query }),
    apply: (service, call) => service.spoolStats(call.spool, call.query),
    writeFields: (w, call) => {
      writeListQuery(w, 1, call.query);
      for (const queue of call.query.queues ?? []) w.optionalString(2, queue);
      w.bool(3, call.query.queues !== undefined);
    },
    nested: LIST_QUERY,
    repeatedStrings2: true,
    fromFields: (spool, f) => {
      const list = required<{ limit: number; after?: string; match?: string }>(
        f.nested1,
        'a query',
      );
      const query = f.n3 !== 0 ? { ...list, queues: f.strings2 ?? [] } : list;
      return { op: 'spoolStats', spool, query };
    },
    writeResult: writeStatsPage,
  },
  listQueues: {
    field: 13,
    write: false,
    results: ['queuePage'],
    call: (spool, query) => ({ op: 'listQueues', spool, query }),
    apply: (service, call) => service.listQueues(call.spool, call.query),
    writeFields: (w, call) => writeListQuery(w, 1, call.query),
    nested: LIST_QUERY,
    fromFields: (spool, f) => ({ op: 'listQueues', spool, query: required(f.nested1, 'a query') }),
    writeResult: writeQueuePage,
  },
  describeQueue: {
    field: 14,
    write: false,
    results: ['queue'],
    call: (spool, queue) => ({ op: 'describeQueue', spool, queue }),
    apply: (service, call) => service.describeQueue(call.spool, call.queue),
    writeFields: (w, call) => w.string(1, call.queue),
    fromFields: (spool, f) => ({ op: 'describeQueue', spool, queue: f.s1 ?? '' }),
    writeResult: writeQueue,
  },
  createQueue: {
    field: 15,
    write: true,
    results: ['queue'],
    call: (spool, queue, settings) => ({ op: 'createQueue', spool, queue, settings }),
    apply: (service, call) => service.createQueue(call.spool, call.queue, call.settings),
    writeFields: (w, call) => {
      w.string(1, call.queue);
      writeSettingsInput(w, 2, call.settings);
    },
    nested: SETTINGS,
    fromFields: (spool, f) => {
      const settings = (f.nested2 ?? {}) as CallOf<'createQueue'>['settings'];
      return { op: 'createQueue', spool, queue: f.s1 ?? '', settings };
    },
    writeResult: writeQueue,
  },
  updateQueue: {
    field: 16,
    write: true,
    results: ['queue'],
    call: (spool, queue, settings) => ({ op: 'updateQueue', spool, queue, settings }),
    apply: (service, call) => service.updateQueue(call.spool, call.queue, call.settings),
    writeFields: (w, call) => {
      w.string(1, call.queue);
      writeSettingsInput(w, 2, call.settings);
    },
    nested: SETTINGS,
    fromFields: (spool, f) => {
      const settings = (f.nested2 ?? {}) as CallOf<'updateQueue'>['settings'];
      return { op: 'updateQueue', spool, queue: f.s1 ?? '', settings };
    },
    writeResult: writeQueue,
  },
  deleteQueue: {
    field: 17,
    write: true,
    results: ['deleted'],
    call: (spool, queue, mode) => ({ op: 'deleteQueue', spool, queue, mode }),
    apply: (service, call) => service.deleteQueue(call.spool, call.queue, call.mode),
    writeFields: (w, call) => {
      w.string(1, call.queue);
      w.uint(2, deleteModeNumber(call.mode));
    },
    fromFields: (spool, f) => ({
      op: 'deleteQueue',
      spool,
      queue: f.s1 ?? '',
      mode: deleteModeOf(f.n2),
    }),
    writeResult: writeDeleted,
  },
  send: {
    field: 18,
    write: true,
    results: ['sent'],
    call: (spool, queue, request) => ({ op: 'send', spool, queue, request }),
    apply: (service, call) => service.send(call.spool, call.queue, call.request),
    writeFields: (w, call) => {
      w.string(1, call.queue);
      writeSendRequest(w, 2, call.request);
    },
    nested: [undefined, readSendRequest, undefined],
    fromFields: (spool, f) => ({
      op: 'send',
      spool,
      queue: f.s1 ?? '',
      request: required(f.nested2, 'a message'),
    }),
    writeResult: writeSendResult,
    callPayload: (call) => call.request.payload,
  },
  receive: {
    field: 19,
    write: false,
    results: ['delivery', 'noDelivery'],
    call: (spool, queue, request) => ({ op: 'receive', spool, queue, waitMs: request.waitMs }),
    signal: (_spool, _queue, request) => request.signal,
    apply: (service, call, signal) =>
      service.receive(
        call.spool,
        call.queue,
        signal === undefined ? { waitMs: call.waitMs } : { waitMs: call.waitMs, signal },
      ),
    writeFields: (w, call) => {
      w.string(1, call.queue);
      w.uint(2, call.waitMs);
    },
    fromFields: (spool, f) => ({ op: 'receive', spool, queue: f.s1 ?? '', waitMs: f.n2 }),
    writeResult: writeDeliveryOrNone,
    resultPayload: (delivery) => delivery?.payload,
  },
  ack: leaseOperation('ack', 20, (service, spool, lease) => service.ack(spool, lease), done),
  nack: leaseOperation('nack', 21, (service, spool, lease) => service.nack(spool, lease), done),
  release: {
    field: 22,
    write: true,
    results: ['done'],
    call: (spool, lease, delayMs) => ({ op: 'release', spool, lease, delayMs }),
    apply: (service, call) => service.release(call.spool, call.lease, call.delayMs),
    writeFields: (w, call) => {
      w.string(1, call.lease);
      w.uint(2, call.delayMs);
    },
    fromFields: (spool, f) => ({ op: 'release', spool, lease: f.s1 ?? '', delayMs: f.n2 }),
    writeResult: done,
  },
  fail: leaseOperation('fail', 23, (service, spool, lease) => service.fail(spool, lease), done),
  // Renew only moves a lease's expiry forward: repeating it is harmless, so it is no write.
  renew: leaseOperation(
    'renew',
    24,
    (service, spool, lease) => service.renew(spool, lease),
    writeRenewed,
  ),
  peek: {
    field: 25,
    write: false,
    results: ['peeked'],
    call: (spool, handle) => ({ op: 'peek', spool, handle }),
    apply: (service, call) => service.peek(call.spool, call.handle),
    writeFields: (w, call) => w.string(1, call.handle),
    fromFields: (spool, f) => ({ op: 'peek', spool, handle: f.s1 ?? '' }),
    writeResult: writePeekResult,
    resultPayload: (peeked) => peeked.payload,
  },
  recover: {
    field: 26,
    write: true,
    results: ['done'],
    call: (spool, token, delayMs) => ({ op: 'recover', spool, token, delayMs }),
    apply: (service, call) => service.recover(call.spool, call.token, call.delayMs),
    writeFields: (w, call) => {
      writeTokenRef(w, 1, call.token);
      w.uint(2, call.delayMs);
    },
    nested: TOKEN,
    fromFields: (spool, f) => ({
      op: 'recover',
      spool,
      token: required(f.nested1, 'a token'),
      delayMs: f.n2,
    }),
    writeResult: done,
  },
  discard: {
    field: 27,
    write: true,
    results: ['done'],
    call: (spool, token) => ({ op: 'discard', spool, token }),
    apply: (service, call) => service.discard(call.spool, call.token),
    writeFields: (w, call) => writeTokenRef(w, 1, call.token),
    nested: TOKEN,
    fromFields: (spool, f) => ({ op: 'discard', spool, token: required(f.nested1, 'a token') }),
    writeResult: done,
  },
  listMessages: {
    field: 28,
    write: false,
    results: ['messagePage'],
    call: (spool, queue, query) => ({ op: 'listMessages', spool, queue, query }),
    apply: (service, call) => service.listMessages(call.spool, call.queue, call.query),
    writeFields: (w, call) => {
      w.string(1, call.queue);
      if (call.query.state !== undefined) w.uint(2, messageStateNumber(call.query.state));
      w.uint(3, call.query.limit);
      w.optionalString(4, call.query.after);
      w.bool(5, call.query.withHandles);
    },
    fromFields: (spool, f) => ({
      op: 'listMessages',
      spool,
      queue: f.s1 ?? '',
      query: {
        limit: f.n3,
        withHandles: f.b5,
        ...(f.n2 === 0 ? {} : { state: messageStateOf(f.n2) }),
        ...(f.s4 === undefined ? {} : { after: f.s4 }),
      },
    }),
    writeResult: writeMessagePage,
  },
  failureHead: {
    field: 29,
    write: false,
    results: ['delivery', 'noDelivery'],
    call: (spool, queue) => ({ op: 'failureHead', spool, queue }),
    apply: (service, call) => service.failureHead(call.spool, call.queue),
    writeFields: (w, call) => w.string(1, call.queue),
    fromFields: (spool, f) => ({ op: 'failureHead', spool, queue: f.s1 ?? '' }),
    writeResult: writeDeliveryOrNone,
    resultPayload: (delivery) => delivery?.payload,
  },
  ackAndSend: {
    field: 30,
    write: true,
    results: ['sent'],
    call: (spool, lease, queue, request) => ({ op: 'ackAndSend', spool, lease, queue, request }),
    apply: (service, call) =>
      service.ackAndSend(call.spool, call.lease, call.queue, call.request),
    writeFields: (w, call) => {
      w.string(1, call.lease);
      w.string(2, call.queue);
      writeSendRequest(w, 3, call.request);
    },
    nested: [undefined, undefined, readSendRequest],
    fromFields: (spool, f) => ({
      op: 'ackAndSend',
      spool,
      lease: f.s1 ?? '',
      queue: f.s2,
      request: required(f.nested3, 'a message'),
    }),
    writeResult: writeSendResult,
    callPayload: (call) => call.request.payload,
  },
};

/** Every operation name, in wire-field order. */
export const OPS: readonly Op[] = (Object.keys(OPERATIONS) as Op[]).sort(
  (a, b) => OPERATIONS[a].field - OPERATIONS[b].field,
);

/** Operations that may change state (the `write` column). */
export const WRITE_OPS: ReadonlySet<Op> = new Set(OPS.filter((op) => OPERATIONS[op].write));

/** Field number of each operation in `Call.op` (the `field` column). */
export const OP_FIELD: Readonly<Record<Op, number>> = Object.fromEntries(
  OPS.map((op) => [op, OPERATIONS[op].field]),
) as Record<Op, number>;

/** `call` as a row's `Call` of the same op (for code that holds the union). */
export function rowOf(call: Call): Operation<Op> {
  return OPERATIONS[call.op] as unknown as Operation<Op>;
}
