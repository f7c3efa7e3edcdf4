// Calls on the wire: a `Call` message wrapped as one `ClientFrame.calls` entry, so encoded calls
// (and cancels) concatenate into a ClientFrame without re-encoding. The member decodes a whole
// frame before acting on any of it: a frame that does not decode changes nothing.

import type { ProtoReader } from './proto-reader.js';
import { ProtoReader as Reader, WireError } from './proto-reader.js';
import { WIRE_LEN, WIRE_VARINT, type ProtoWriter } from './proto-writer.js';
import type { Call, Op } from './calls.js';
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
  writeSendRequest,
  writeSettingsInput,
  writeTokenRef,
} from './view-codec.js';

/** Field number of each operation in `Call.op` (proto/member.proto). */
export const OP_FIELD: Readonly<Record<Op, number>> = {
  checkTarget: 10,
  describeSpool: 11,
  spoolStats: 12,
  listQueues: 13,
  describeQueue: 14,
  createQueue: 15,
  updateQueue: 16,
  deleteQueue: 17,
  send: 18,
  receive: 19,
  ack: 20,
  nack: 21,
  release: 22,
  fail: 23,
  renew: 24,
  peek: 25,
  recover: 26,
  discard: 27,
  listMessages: 28,
  failureHead: 29,
  ackAndSend: 30,
};

const OP_OF_FIELD: readonly (Op | undefined)[] = (() => {
  const ops: (Op | undefined)[] = [];
  for (const [op, field] of Object.entries(OP_FIELD)) ops[field] = op as Op;
  return ops;
})();

const FRAME_CALLS = 1;
const FRAME_CANCELS = 2;

/** Rough encoded size of a call in bytes, for the size hint and the frame bounds. */
export function callBytesEstimate(call: Call): number {
  if (call.op === 'send' || call.op === 'ackAndSend') {
    return 96 + call.spool.length + call.request.payload.length;
  }
  return 160 + call.spool.length;
}

/** Appends `call` with `id` as one ClientFrame entry. Ids are positive safe integers. */
export function writeCall(w: ProtoWriter, id: number, call: Call): void {
  const frameEntry = w.begin(FRAME_CALLS, callBytesEstimate(call));
  w.uint(1, id);
  w.string(2, call.spool);
  writeOp(w, call);
  w.end(frameEntry);
}

/** Appends a cancel of the receive `id` as one ClientFrame entry. */
export function writeCancel(w: ProtoWriter, id: number): void {
  w.tag(FRAME_CANCELS, WIRE_VARINT);
  w.varint(id);
}

function writeOp(w: ProtoWriter, call: Call): void {
  const mark = w.begin(OP_FIELD[call.op], callBytesEstimate(call) - 24);
  switch (call.op) {
    case 'checkTarget':
      w.optionalString(1, call.queue);
      break;
    case 'describeSpool':
      break;
    case 'spoolStats':
      writeListQuery(w, 1, call.query);
      for (const queue of call.query.queues ?? []) w.optionalString(2, queue);
      w.bool(3, call.query.queues !== undefined);
      break;
    case 'listQueues':
      writeListQuery(w, 1, call.query);
      break;
    case 'describeQueue':
    case 'failureHead':
      w.string(1, call.queue);
      break;
    case 'createQueue':
    case 'updateQueue':
      w.string(1, call.queue);
      writeSettingsInput(w, 2, call.settings);
      break;
    case 'deleteQueue':
      w.string(1, call.queue);
      w.uint(2, deleteModeNumber(call.mode));
      break;
    case 'send':
      w.string(1, call.queue);
      writeSendRequest(w, 2, call.request);
      break;
    case 'receive':
      w.string(1, call.queue);
      w.uint(2, call.waitMs);
      break;
    case 'ack':
    case 'nack':
    case 'fail':
    case 'renew':
      w.string(1, call.lease);
      break;
    case 'release':
      w.string(1, call.lease);
      w.uint(2, call.delayMs);
      break;
    case 'peek':
      w.string(1, call.handle);
      break;
    case 'recover':
      writeTokenRef(w, 1, call.token);
      w.uint(2, call.delayMs);
      break;
    case 'discard':
      writeTokenRef(w, 1, call.token);
      break;
    case 'listMessages':
      w.string(1, call.queue);
      if (call.query.state !== undefined) w.uint(2, messageStateNumber(call.query.state));
      w.uint(3, call.query.limit);
      w.optionalString(4, call.query.after);
      w.bool(5, call.query.withHandles);
      break;
    case 'ackAndSend':
      w.string(1, call.lease);
      w.string(2, call.queue);
      writeSendRequest(w, 3, call.request);
      break;
  }
  w.end(mark);
}

/** A decoded call with the id its answer must carry. */
export interface IdentifiedCall {
  readonly id: number;
  readonly call: Call;
}

export interface ClientFrame {
  readonly calls: IdentifiedCall[];
  readonly cancels: number[];
}

/** Decodes a whole ClientFrame. Throws `WireError` when it does not decode. */
export function decodeClientFrame(bytes: Uint8Array): ClientFrame {
  const r = new Reader(bytes);
  const calls: IdentifiedCall[] = [];
  const cancels: number[] = [];
  while (r.more()) {
    const tag = r.tag();
    if (tag === FRAME_CALLS * 8 + WIRE_LEN) calls.push(readCall(r));
    else if (tag === FRAME_CANCELS * 8 + WIRE_VARINT) cancels.push(r.varint());
    else if (tag === FRAME_CANCELS * 8 + WIRE_LEN) readPackedIds(r, cancels);
    else r.skip(tag & 7);
  }
  return { calls, cancels };
}

function readPackedIds(r: ProtoReader, into: number[]): void {
  const outer = r.enter();
  while (r.more()) into.push(r.varint());
  r.leave(outer);
}

function readCall(r: ProtoReader): IdentifiedCall {
  const outer = r.enter();
  let id = 0;
  let spool = '';
  let call: Call | undefined;
  while (r.more()) {
    const tag = r.tag();
    const field = Math.floor(tag / 8);
    if (tag === 1 * 8 + WIRE_VARINT) id = r.varint();
    else if (tag === 2 * 8 + WIRE_LEN) spool = r.string();
    else if ((tag & 7) === WIRE_LEN && OP_OF_FIELD[field] !== undefined) {
      call = readOp(r, OP_OF_FIELD[field]!, spool);
    } else r.skip(tag & 7);
  }
  r.leave(outer);
  if (id === 0) throw new WireError('call without an id');
  if (call === undefined) throw new WireError(`call ${id} without an operation`);
  // The spool field precedes the operation on the wire; patch it in if a writer reordered.
  if (call.spool !== spool) call = { ...call, spool };
  return { id, call };
}

// Field tags inside the operation messages.
const L1 = 1 * 8 + WIRE_LEN;
const L2 = 2 * 8 + WIRE_LEN;
const L3 = 3 * 8 + WIRE_LEN;
const L4 = 4 * 8 + WIRE_LEN;
const V2 = 2 * 8 + WIRE_VARINT;
const V3 = 3 * 8 + WIRE_VARINT;
const V5 = 5 * 8 + WIRE_VARINT;

type ListQueryFields = { limit: number; after?: string; match?: string };

/** Fields of an operation message, decoded by tag into one bag; the op picks what it needs. */
interface OpFields {
  s1: string;
  s2: string;
  s4: string | undefined;
  n2: number;
  n3: number;
  b5: boolean;
  queues: string[] | undefined;
  queuesGiven: boolean;
  nested1: unknown;
  nested2: unknown;
  nested3: unknown;
}

function readOp(r: ProtoReader, op: Op, spool: string): Call {
  const outer = r.enter();
  const f: OpFields = {
    s1: '',
    s2: '',
    s4: undefined,
    n2: 0,
    n3: 0,
    b5: false,
    queues: undefined,
    queuesGiven: false,
    nested1: undefined,
    nested2: undefined,
    nested3: undefined,
  };
  let checkTargetQueue: string | undefined;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L1:
        if (op === 'checkTarget') checkTargetQueue = r.string();
        else if (op === 'spoolStats' || op === 'listQueues') f.nested1 = readListQuery(r);
        else if (op === 'recover' || op === 'discard') f.nested1 = readTokenRef(r);
        else f.s1 = r.string();
        break;
      case L2:
        if (op === 'createQueue' || op === 'updateQueue') f.nested2 = readSettingsInput(r);
        else if (op === 'send') f.nested2 = readSendRequest(r);
        else if (op === 'spoolStats') (f.queues ??= []).push(r.string());
        else f.s2 = r.string();
        break;
      case L3:
        if (op === 'ackAndSend') f.nested3 = readSendRequest(r);
        else r.skip(WIRE_LEN);
        break;
      case L4: f.s4 = r.string(); break;
      case V2: f.n2 = r.varint(); break;
      case V3:
        if (op === 'spoolStats') f.queuesGiven = r.bool();
        else f.n3 = r.varint();
        break;
      case V5: f.b5 = r.bool(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return callOf(op, spool, f, checkTargetQueue);
}

function required<T>(value: unknown, what: string): T {
  if (value === undefined) throw new WireError(`call without ${what}`);
  return value as T;
}

function callOf(op: Op, spool: string, f: OpFields, checkTargetQueue: string | undefined): Call {
  switch (op) {
    case 'checkTarget':
      if (checkTargetQueue === undefined) return { op, spool };
      return { op, spool, queue: checkTargetQueue };
    case 'describeSpool':
      return { op, spool };
    case 'spoolStats': {
      const list = required<ListQueryFields>(f.nested1, 'a query');
      return { op, spool, query: f.queuesGiven ? { ...list, queues: f.queues ?? [] } : list };
    }
    case 'listQueues':
      return { op, spool, query: required(f.nested1, 'a query') };
    case 'describeQueue':
    case 'failureHead':
      return { op, spool, queue: f.s1 };
    case 'createQueue':
    case 'updateQueue':
      return { op, spool, queue: f.s1, settings: f.nested2 ?? {} };
    case 'deleteQueue':
      return { op, spool, queue: f.s1, mode: deleteModeOf(f.n2) };
    case 'send':
      return { op, spool, queue: f.s1, request: required(f.nested2, 'a message') };
    case 'receive':
      return { op, spool, queue: f.s1, waitMs: f.n2 };
    case 'ack':
    case 'nack':
    case 'fail':
    case 'renew':
      return { op, spool, lease: f.s1 };
    case 'release':
      return { op, spool, lease: f.s1, delayMs: f.n2 };
    case 'peek':
      return { op, spool, handle: f.s1 };
    case 'recover':
      return { op, spool, token: required(f.nested1, 'a token'), delayMs: f.n2 };
    case 'discard':
      return { op, spool, token: required(f.nested1, 'a token') };
    case 'listMessages': {
      const query = { limit: f.n3, withHandles: f.b5 };
      return {
        op,
        spool,
        queue: f.s1,
        query: {
          ...query,
          ...(f.n2 === 0 ? {} : { state: messageStateOf(f.n2) }),
          ...(f.s4 === undefined ? {} : { after: f.s4 }),
        },
      };
    }
    case 'ackAndSend':
      return { op, spool, lease: f.s1, queue: f.s2, request: required(f.nested3, 'a message') };
  }
}
