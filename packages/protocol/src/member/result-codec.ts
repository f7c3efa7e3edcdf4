// Results on the wire, one writer and one reader per `Answer.result` variant (proto/member.proto).
// Which operation answers with which variant is said once, in operations.ts; the answer frame
// around a result is answer-codec.ts.

import type {
  Delivery,
  MessageView,
  Page,
  PeekResult,
  QueueView,
  SendResult,
  SpoolView,
  StatsPage,
} from '@spoolmq/engine';
import type { OpResults } from './calls.js';
import { readError } from './error-codec.js';
import { WireError, type ProtoReader } from './proto-reader.js';
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
export const R = {
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

export type ResultName = keyof typeof R;

/** `Answer.result` variant of each field number. */
export const RESULT_OF_FIELD: readonly (ResultName | undefined)[] = (() => {
  const names: (ResultName | undefined)[] = [];
  for (const [name, field] of Object.entries(R)) names[field] = name as ResultName;
  return names;
})();


// ---- writers (member side) ----

export function writeEmpty(w: ProtoWriter, field: number): void {
  w.tag(field, WIRE_LEN);
  w.varint(0);
}

export function writeSpoolView(w: ProtoWriter, view: SpoolView): void {
  const mark = w.begin(R.spool, 96);
  w.string(1, view.name);
  w.uint(2, view.queueCount);
  writeCounts(w, 3, view.stats);
  w.uint(4, view.stats.sampledAtMs);
  w.uint(5, view.stats.startedAtMs);
  w.end(mark);
}

export function writeStatsPage(w: ProtoWriter, page: StatsPage): void {
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

export function writeQueuePage(w: ProtoWriter, page: Page<QueueView>): void {
  const mark = w.begin(R.queuePage, 16 + page.items.length * 96);
  for (const item of page.items) writeQueueView(w, 1, item);
  w.optionalString(2, page.next);
  w.end(mark);
}

export function writeSendResult(w: ProtoWriter, result: SendResult): void {
  const mark = w.begin(R.sent, 40 + (result.handle?.length ?? 0));
  w.string(1, result.messageId);
  w.optionalString(2, result.handle);
  w.bool(3, result.duplicate);
  w.end(mark);
}

export function writeDelivery(w: ProtoWriter, delivery: Delivery): void {
  const mark = w.begin(R.delivery, 96 + delivery.payload.length);
  w.bytes(1, delivery.payload);
  w.string(2, delivery.lease);
  w.string(3, delivery.messageId);
  w.uint(4, delivery.retries);
  w.optionalUint(5, delivery.leaseExpiresAtMs);
  w.end(mark);
}

export function writePeekResult(w: ProtoWriter, result: PeekResult): void {
  const mark = w.begin(R.peeked, 48 + result.payload.length);
  w.bytes(1, result.payload);
  w.string(2, result.messageId);
  w.uint(3, messageStateNumber(result.state));
  w.uint(4, result.retries);
  w.end(mark);
}

export function writeMessagePage(w: ProtoWriter, page: Page<MessageView>): void {
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

/** Writes a DeleteResult. */
export function writeDeleted(w: ProtoWriter, result: 'deleted' | 'accepted'): void {
  const mark = w.begin(R.deleted, 2);
  w.uint(1, result === 'deleted' ? 1 : 2);
  w.end(mark);
}

/** Writes a RenewResult. */
export function writeRenewed(w: ProtoWriter, result: OpResults['renew']): void {
  const mark = w.begin(R.renewed, 6);
  w.optionalUint(1, result.leaseExpiresAtMs);
  w.end(mark);
}

/** Writes a delivery, or no_delivery for null (receive, failureHead). */
export function writeDeliveryOrNone(w: ProtoWriter, delivery: Delivery | null): void {
  if (delivery === null) writeEmpty(w, R.noDelivery);
  else writeDelivery(w, delivery);
}

// ---- readers (gateway side) ----

const V = (field: number): number => field * 8 + WIRE_VARINT;
const L = (field: number): number => field * 8 + WIRE_LEN;

export function readResult(r: ProtoReader, name: ResultName): unknown {
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
