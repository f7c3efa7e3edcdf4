// Answers on the wire: an `Answer` message wrapped as one `ServerFrame.answers` entry, so the
// member concatenates answers ready in one turn into a frame. The member encodes by operation
// (`writeAnswer`); the gateway decodes into an `Outcome` and checks it is the variant the
// operation answers with (`resultOf`).

import type {
  Delivery,
  MessageView,
  MqError,
  Page,
  PeekResult,
  QueueView,
  SendResult,
  SpoolView,
  StatsPage,
} from '@spoolmq/engine';
import type { Op, OpResults } from './calls.js';
import { readError, writeError } from './error-codec.js';
import { ProtoReader, WireError } from './proto-reader.js';
import { WIRE_LEN, WIRE_VARINT, type ProtoWriter } from './proto-writer.js';
import {
  messageStateNumber,
  messageStateOf,
  readCounts,
  readQueueView,
  writeCounts,
  writeQueueView,
} from './view-codec.js';

/** Field numbers of `Answer.result`. */
const R = {
  error: 2,
  done: 3,
  spool: 4,
  statsPage: 5,
  queuePage: 6,
  queue: 7,
  deleted: 8,
  sent: 9,
  delivery: 10,
  noDelivery: 11,
  renewed: 12,
  peeked: 13,
  messagePage: 14,
} as const;

type ResultName = keyof typeof R;

/** The result variants each operation may answer with (besides `error`). */
const RESULTS_OF_OP: Readonly<Record<Op, readonly ResultName[]>> = {
  checkTarget: ['done'],
  describeSpool: ['spool'],
  spoolStats: ['statsPage'],
  listQueues: ['queuePage'],
  describeQueue: ['queue'],
  createQueue: ['queue'],
  updateQueue: ['queue'],
  deleteQueue: ['deleted'],
  send: ['sent'],
  receive: ['delivery', 'noDelivery'],
  ack: ['done'],
  nack: ['done'],
  release: ['done'],
  fail: ['done'],
  renew: ['renewed'],
  peek: ['peeked'],
  recover: ['done'],
  discard: ['done'],
  listMessages: ['messagePage'],
  failureHead: ['delivery', 'noDelivery'],
  ackAndSend: ['sent'],
};

const FRAME_ANSWERS = 1;

// ---- encoding (member side) ----

/** Appends the answer `result` of operation `op` to call `id` as one ServerFrame entry. */
export function writeAnswer<O extends Op>(
  w: ProtoWriter,
  id: number,
  op: O,
  result: OpResults[O],
): void {
  const entry = w.begin(FRAME_ANSWERS, answerBytesEstimate(op, result));
  w.uint(1, id);
  writeResult(w, op, result);
  w.end(entry);
}

/** Appends an error answer to call `id`. */
export function writeErrorAnswer(w: ProtoWriter, id: number, error: MqError): void {
  const entry = w.begin(FRAME_ANSWERS, 32 + error.message.length);
  w.uint(1, id);
  writeError(w, R.error, error);
  w.end(entry);
}

function answerBytesEstimate(op: Op, result: unknown): number {
  if ((op === 'receive' || op === 'failureHead' || op === 'peek') && result !== null) {
    return 96 + (result as Delivery | PeekResult).payload.length;
  }
  return 96;
}

function writeEmpty(w: ProtoWriter, field: number): void {
  w.tag(field, WIRE_LEN);
  w.varint(0);
}

function writeResult(w: ProtoWriter, op: Op, result: unknown): void {
  switch (op) {
    case 'checkTarget':
    case 'ack':
    case 'nack':
    case 'release':
    case 'fail':
    case 'recover':
    case 'discard':
      return writeEmpty(w, R.done);
    case 'describeSpool':
      return writeSpoolView(w, result as SpoolView);
    case 'spoolStats':
      return writeStatsPage(w, result as StatsPage);
    case 'listQueues':
      return writeQueuePage(w, result as Page<QueueView>);
    case 'describeQueue':
    case 'createQueue':
    case 'updateQueue':
      return writeQueueView(w, R.queue, result as QueueView);
    case 'deleteQueue': {
      const mark = w.begin(R.deleted, 2);
      w.uint(1, result === 'deleted' ? 1 : 2);
      return w.end(mark);
    }
    case 'send':
    case 'ackAndSend':
      return writeSendResult(w, result as SendResult);
    case 'receive':
    case 'failureHead':
      if (result === null) return writeEmpty(w, R.noDelivery);
      return writeDelivery(w, result as Delivery);
    case 'renew': {
      const mark = w.begin(R.renewed, 6);
      w.optionalUint(1, (result as OpResults['renew']).leaseExpiresAtMs);
      return w.end(mark);
    }
    case 'peek':
      return writePeekResult(w, result as PeekResult);
    case 'listMessages':
      return writeMessagePage(w, result as Page<MessageView>);
  }
}

function writeSpoolView(w: ProtoWriter, view: SpoolView): void {
  const mark = w.begin(R.spool, 96);
  w.string(1, view.name);
  w.uint(2, view.queueCount);
  writeCounts(w, 3, view.stats);
  w.uint(4, view.stats.sampledAtMs);
  w.uint(5, view.stats.startedAtMs);
  w.end(mark);
}

function writeStatsPage(w: ProtoWriter, page: StatsPage): void {
  const mark = w.begin(R.statsPage, 64 + page.queues.items.length * 160);
  w.uint(1, page.queueCount);
  writeCounts(w, 2, page.stats);
  for (const item of page.queues.items) {
    const entry = w.begin(3, 160);
    writeQueueView(w, 1, item);
    writeCounts(w, 2, item.stats);
    w.end(entry);
  }
  w.optionalString(4, page.queues.next);
  w.end(mark);
}

function writeQueuePage(w: ProtoWriter, page: Page<QueueView>): void {
  const mark = w.begin(R.queuePage, 16 + page.items.length * 96);
  for (const item of page.items) writeQueueView(w, 1, item);
  w.optionalString(2, page.next);
  w.end(mark);
}

function writeSendResult(w: ProtoWriter, result: SendResult): void {
  const mark = w.begin(R.sent, 40 + (result.handle?.length ?? 0));
  w.string(1, result.messageId);
  w.optionalString(2, result.handle);
  w.bool(3, result.duplicate);
  w.end(mark);
}

function writeDelivery(w: ProtoWriter, delivery: Delivery): void {
  const mark = w.begin(R.delivery, 96 + delivery.payload.length);
  w.bytes(1, delivery.payload);
  w.string(2, delivery.lease);
  w.string(3, delivery.messageId);
  w.uint(4, delivery.retries);
  w.optionalUint(5, delivery.leaseExpiresAtMs);
  w.end(mark);
}

function writePeekResult(w: ProtoWriter, result: PeekResult): void {
  const mark = w.begin(R.peeked, 48 + result.payload.length);
  w.bytes(1, result.payload);
  w.string(2, result.messageId);
  w.uint(3, messageStateNumber(result.state));
  w.uint(4, result.retries);
  w.end(mark);
}

function writeMessagePage(w: ProtoWriter, page: Page<MessageView>): void {
  const mark = w.begin(R.messagePage, 16 + page.items.length * 80);
  for (const item of page.items) {
    const entry = w.begin(1, 80);
    w.string(1, item.id);
    w.uint(2, messageStateNumber(item.state));
    w.uint(3, item.retries);
    w.uint(4, item.createdAtMs);
    w.optionalUint(5, item.visibleAtMs);
    w.optionalUint(6, item.leaseExpiresAtMs);
    w.optionalUint(7, item.expiresAtMs);
    w.optionalString(8, item.handle);
    w.end(entry);
  }
  w.optionalString(2, page.next);
  w.end(mark);
}

// ---- decoding (gateway side) ----

/** One decoded answer: the call id and either an error or a result variant's value. */
export interface DecodedAnswer {
  readonly id: number;
  readonly error: MqError | undefined;
  /** `Answer.result` field name; undefined only when `error` is set. */
  readonly result: ResultName | undefined;
  readonly value: unknown;
}

/**
 * Decodes a whole ServerFrame. Payloads are views into `bytes` (the gateway writes them out and
 * drops them). Throws `WireError` when the frame does not decode.
 */
export function decodeServerFrame(bytes: Uint8Array): DecodedAnswer[] {
  const r = new ProtoReader(bytes);
  const answers: DecodedAnswer[] = [];
  while (r.more()) {
    const tag = r.tag();
    if (tag === FRAME_ANSWERS * 8 + WIRE_LEN) answers.push(readAnswer(r));
    else r.skip(tag & 7);
  }
  return answers;
}

const RESULT_OF_FIELD: readonly (ResultName | undefined)[] = (() => {
  const names: (ResultName | undefined)[] = [];
  for (const [name, field] of Object.entries(R)) names[field] = name as ResultName;
  return names;
})();

function readAnswer(r: ProtoReader): DecodedAnswer {
  const outer = r.enter();
  let id = 0;
  let error: MqError | undefined;
  let result: ResultName | undefined;
  let value: unknown;
  while (r.more()) {
    const tag = r.tag();
    const name = (tag & 7) === WIRE_LEN ? RESULT_OF_FIELD[Math.floor(tag / 8)] : undefined;
    if (tag === 1 * 8 + WIRE_VARINT) id = r.varint();
    else if (name === 'error') error = readError(r);
    else if (name !== undefined) {
      result = name;
      value = readResult(r, name);
    } else r.skip(tag & 7);
  }
  r.leave(outer);
  if (id === 0) throw new WireError('answer without an id');
  if (error === undefined && result === undefined) {
    throw new WireError(`answer ${id} without a result`);
  }
  return { id, error, result: error === undefined ? result : undefined, value };
}

/**
 * The value of a decoded answer as operation `op` resolves with it. Throws `WireError` when the
 * member answered with a variant `op` does not produce (a protocol mismatch), and returns the
 * error (not thrown) through `answer.error` handling by the caller.
 */
export function resultOf<O extends Op>(op: O, answer: DecodedAnswer): OpResults[O] {
  const result = answer.result;
  if (result === undefined || !RESULTS_OF_OP[op].includes(result)) {
    throw new WireError(`answer ${answer.id}: ${String(result)} is not an answer of ${op}`);
  }
  return answer.value as OpResults[O];
}

const V = (field: number): number => field * 8 + WIRE_VARINT;
const L = (field: number): number => field * 8 + WIRE_LEN;

function readResult(r: ProtoReader, name: ResultName): unknown {
  switch (name) {
    case 'done':
      return skipMessage(r, undefined);
    case 'noDelivery':
      return skipMessage(r, null);
    case 'spool':
      return readSpoolView(r);
    case 'statsPage':
      return readStatsPage(r);
    case 'queuePage':
      return readQueuePage(r);
    case 'queue':
      return readQueueView(r);
    case 'deleted':
      return readDeleted(r);
    case 'sent':
      return readSendResult(r);
    case 'delivery':
      return readDelivery(r);
    case 'renewed':
      return readRenewed(r);
    case 'peeked':
      return readPeekResult(r);
    case 'messagePage':
      return readMessagePage(r);
    case 'error':
      return readError(r);
  }
}

function skipMessage<T>(r: ProtoReader, value: T): T {
  r.leave(r.enter());
  return value;
}

function readSpoolView(r: ProtoReader): SpoolView {
  const outer = r.enter();
  let name = '';
  let queueCount = 0;
  let counts: ReturnType<typeof readCounts> | undefined;
  let sampledAtMs = 0;
  let startedAtMs = 0;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L(1): name = r.string(); break;
      case V(2): queueCount = r.varint(); break;
      case L(3): counts = readCounts(r); break;
      case V(4): sampledAtMs = r.varint(); break;
      case V(5): startedAtMs = r.varint(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  if (counts === undefined) throw new WireError('spool view without stats');
  return { name, queueCount, stats: { ...counts, sampledAtMs, startedAtMs } };
}

function readQueueStats(r: ProtoReader): StatsPage['queues']['items'][number] {
  const outer = r.enter();
  let queue: QueueView | undefined;
  let stats: ReturnType<typeof readCounts> | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === L(1)) queue = readQueueView(r);
    else if (tag === L(2)) stats = readCounts(r);
    else r.skip(tag & 7);
  }
  r.leave(outer);
  if (queue === undefined || stats === undefined) throw new WireError('incomplete queue stats');
  return { ...queue, stats };
}

function readStatsPage(r: ProtoReader): StatsPage {
  const outer = r.enter();
  let queueCount = 0;
  let stats: ReturnType<typeof readCounts> | undefined;
  const items: StatsPage['queues']['items'][number][] = [];
  let next: string | undefined;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case V(1): queueCount = r.varint(); break;
      case L(2): stats = readCounts(r); break;
      case L(3): items.push(readQueueStats(r)); break;
      case L(4): next = r.string(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  if (stats === undefined) throw new WireError('stats page without stats');
  return { queueCount, stats, queues: next === undefined ? { items } : { items, next } };
}

function readQueuePage(r: ProtoReader): Page<QueueView> {
  const outer = r.enter();
  const items: QueueView[] = [];
  let next: string | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === L(1)) items.push(readQueueView(r));
    else if (tag === L(2)) next = r.string();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return next === undefined ? { items } : { items, next };
}

function readDeleted(r: ProtoReader): 'deleted' | 'accepted' {
  const outer = r.enter();
  let outcome = 0;
  while (r.more()) {
    const tag = r.tag();
    if (tag === V(1)) outcome = r.varint();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  if (outcome === 1) return 'deleted';
  if (outcome === 2) return 'accepted';
  throw new WireError(`delete outcome ${outcome} is not a known value`);
}

function readSendResult(r: ProtoReader): SendResult {
  const outer = r.enter();
  let messageId = '';
  let handle: string | undefined;
  let duplicate = false;
  while (r.more()) {
    const tag = r.tag();
    if (tag === L(1)) messageId = r.string();
    else if (tag === L(2)) handle = r.string();
    else if (tag === V(3)) duplicate = r.bool();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return handle === undefined ? { messageId, duplicate } : { messageId, handle, duplicate };
}

const EMPTY_BYTES = new Uint8Array(0);

function readDelivery(r: ProtoReader): Delivery {
  const outer = r.enter();
  let payload: Uint8Array = EMPTY_BYTES;
  let lease = '';
  let messageId = '';
  let retries = 0;
  let leaseExpiresAtMs: number | undefined;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L(1): payload = r.bytesView(); break;
      case L(2): lease = r.string(); break;
      case L(3): messageId = r.string(); break;
      case V(4): retries = r.varint(); break;
      case V(5): leaseExpiresAtMs = r.varint(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return leaseExpiresAtMs === undefined
    ? { payload, lease, messageId, retries }
    : { payload, lease, messageId, retries, leaseExpiresAtMs };
}

function readRenewed(r: ProtoReader): OpResults['renew'] {
  const outer = r.enter();
  let leaseExpiresAtMs: number | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === V(1)) leaseExpiresAtMs = r.varint();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return leaseExpiresAtMs === undefined ? {} : { leaseExpiresAtMs };
}

function readPeekResult(r: ProtoReader): PeekResult {
  const outer = r.enter();
  let payload: Uint8Array = EMPTY_BYTES;
  let messageId = '';
  let state = 0;
  let retries = 0;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L(1): payload = r.bytesView(); break;
      case L(2): messageId = r.string(); break;
      case V(3): state = r.varint(); break;
      case V(4): retries = r.varint(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return { payload, messageId, state: messageStateOf(state), retries };
}

function readMessageView(r: ProtoReader): MessageView {
  const outer = r.enter();
  const view: {
    id: string;
    state: MessageView['state'];
    retries: number;
    createdAtMs: number;
    visibleAtMs?: number;
    leaseExpiresAtMs?: number;
    expiresAtMs?: number;
    handle?: string;
  } = { id: '', state: 'visible', retries: 0, createdAtMs: 0 };
  let state = 0;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L(1): view.id = r.string(); break;
      case V(2): state = r.varint(); break;
      case V(3): view.retries = r.varint(); break;
      case V(4): view.createdAtMs = r.varint(); break;
      case V(5): view.visibleAtMs = r.varint(); break;
      case V(6): view.leaseExpiresAtMs = r.varint(); break;
      case V(7): view.expiresAtMs = r.varint(); break;
      case L(8): view.handle = r.string(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  view.state = messageStateOf(state);
  return view;
}

function readMessagePage(r: ProtoReader): Page<MessageView> {
  const outer = r.enter();
  const items: MessageView[] = [];
  let next: string | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === L(1)) items.push(readMessageView(r));
    else if (tag === L(2)) next = r.string();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return next === undefined ? { items } : { items, next };
}
