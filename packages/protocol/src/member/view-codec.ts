// Encoders and decoders of the values shared by several calls and answers of proto/member.proto:
// settings, queue views, counts, queries, send requests, tokens and the state enums. Field
// numbers are the .proto's; the codec tests check both directions against protobufjs loading
// the .proto itself.

import type {
  Counts,
  DeleteMode,
  ListQuery,
  MessageState,
  QueueState,
  QueueView,
  RecvRateLimit,
  SendRequest,
  SettingsInput,
  SettingsView,
  TokenRef,
} from '@spoolmq/engine';
import { WireError, type ProtoReader } from './proto-reader.js';
import { WIRE_LEN, WIRE_VARINT, type ProtoWriter } from './proto-writer.js';

// ---- enums ----

const QUEUE_STATES: readonly QueueState[] = ['active', 'draining', 'deleting'];
const MESSAGE_STATES: readonly MessageState[] = [
  'delayed',
  'visible',
  'pending',
  'failed',
  'unavailable',
];
const DELETE_MODES: readonly DeleteMode[] = ['force', 'drain'];

function enumNumber<T>(values: readonly T[], value: T): number {
  return values.indexOf(value) + 1;
}

function enumValue<T>(values: readonly T[], wire: number, name: string): T {
  const value = values[wire - 1];
  if (value === undefined) throw new WireError(`${name} ${wire} is not a known value`);
  return value;
}

export function queueStateNumber(state: QueueState): number {
  return enumNumber(QUEUE_STATES, state);
}

/** Throws `WireError` for a value outside the enum (UNSPECIFIED included). */
export function queueStateOf(wire: number): QueueState {
  return enumValue(QUEUE_STATES, wire, 'queue state');
}

export function messageStateNumber(state: MessageState): number {
  return enumNumber(MESSAGE_STATES, state);
}

/** Throws `WireError` for a value outside the enum (UNSPECIFIED included). */
export function messageStateOf(wire: number): MessageState {
  return enumValue(MESSAGE_STATES, wire, 'message state');
}

export function deleteModeNumber(mode: DeleteMode): number {
  return enumNumber(DELETE_MODES, mode);
}

/** Throws `WireError` for a value outside the enum (UNSPECIFIED included). */
export function deleteModeOf(wire: number): DeleteMode {
  return enumValue(DELETE_MODES, wire, 'delete mode');
}

// Tags (field * 8 + wire type) of fields 1..15, for the decoders' switches.
const V = (field: number): number => field * 8 + WIRE_VARINT;
const L = (field: number): number => field * 8 + WIRE_LEN;

// ---- RecvRateLimit, Settings, SettingsInput ----

function writeRateLimit(w: ProtoWriter, field: number, limit: RecvRateLimit): void {
  const mark = w.begin(field, 12);
  w.uint(1, limit.intervalMicros);
  w.uint(2, limit.burst);
  w.end(mark);
}

function readRateLimit(r: ProtoReader): RecvRateLimit {
  const outer = r.enter();
  let intervalMicros = 0;
  let burst = 0;
  while (r.more()) {
    const tag = r.tag();
    if (tag === V(1)) intervalMicros = r.varint();
    else if (tag === V(2)) burst = r.varint();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return { intervalMicros, burst };
}

export function writeSettings(w: ProtoWriter, field: number, settings: SettingsView): void {
  const mark = w.begin(field, 32);
  w.uint(1, settings.leaseTimeoutSeconds);
  w.uint(2, settings.maxRetries);
  w.uint(3, settings.dedupWindowSeconds);
  w.uint(4, settings.retentionSeconds);
  w.uint(5, settings.effectiveRetentionSeconds);
  writeRateLimit(w, 6, settings.recvRateLimit);
  w.end(mark);
}

export function readSettings(r: ProtoReader): SettingsView {
  const outer = r.enter();
  let leaseTimeoutSeconds = 0;
  let maxRetries = 0;
  let dedupWindowSeconds = 0;
  let retentionSeconds = 0;
  let effectiveRetentionSeconds = 0;
  let recvRateLimit: RecvRateLimit = { intervalMicros: 0, burst: 0 };
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case V(1): leaseTimeoutSeconds = r.varint(); break;
      case V(2): maxRetries = r.varint(); break;
      case V(3): dedupWindowSeconds = r.varint(); break;
      case V(4): retentionSeconds = r.varint(); break;
      case V(5): effectiveRetentionSeconds = r.varint(); break;
      case L(6): recvRateLimit = readRateLimit(r); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return {
    leaseTimeoutSeconds,
    maxRetries,
    dedupWindowSeconds,
    retentionSeconds,
    effectiveRetentionSeconds,
    recvRateLimit,
  };
}

export function writeSettingsInput(w: ProtoWriter, field: number, input: SettingsInput): void {
  const mark = w.begin(field, 32);
  w.optionalUint(1, input.leaseTimeoutSeconds);
  w.optionalUint(2, input.maxRetries);
  w.optionalUint(3, input.dedupWindowSeconds);
  w.optionalUint(4, input.retentionSeconds);
  if (input.recvRateLimit === null) w.bool(6, true);
  else if (input.recvRateLimit !== undefined) writeRateLimit(w, 5, input.recvRateLimit);
  w.end(mark);
}

export function readSettingsInput(r: ProtoReader): SettingsInput {
  const outer = r.enter();
  const input: {
    leaseTimeoutSeconds?: number;
    maxRetries?: number;
    dedupWindowSeconds?: number;
    retentionSeconds?: number;
    recvRateLimit?: RecvRateLimit | null;
  } = {};
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case V(1): input.leaseTimeoutSeconds = r.varint(); break;
      case V(2): input.maxRetries = r.varint(); break;
      case V(3): input.dedupWindowSeconds = r.varint(); break;
      case V(4): input.retentionSeconds = r.varint(); break;
      case L(5): input.recvRateLimit = readRateLimit(r); break;
      case V(6): if (r.bool()) input.recvRateLimit = null; break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return input;
}

// ---- QueueView, Counts ----

export function writeQueueView(w: ProtoWriter, field: number, view: QueueView): void {
  const mark = w.begin(field, 64 + view.name.length);
  w.string(1, view.name);
  w.uint(2, view.createdAtMs);
  w.uint(3, queueStateNumber(view.state));
  writeSettings(w, 4, view.settings);
  w.end(mark);
}

export function readQueueView(r: ProtoReader): QueueView {
  const outer = r.enter();
  let name = '';
  let createdAtMs = 0;
  let state = 0;
  let settings: SettingsView | undefined;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L(1): name = r.string(); break;
      case V(2): createdAtMs = r.varint(); break;
      case V(3): state = r.varint(); break;
      case L(4): settings = readSettings(r); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  if (settings === undefined) throw new WireError('queue view without settings');
  return { name, createdAtMs, state: queueStateOf(state), settings };
}

export function writeCounts(w: ProtoWriter, field: number, counts: Counts): void {
  const mark = w.begin(field, 40);
  w.uint(1, counts.total);
  w.uint(2, counts.dataBytes);
  w.uint(3, counts.delayed);
  w.uint(4, counts.visible);
  w.uint(5, counts.pending);
  w.uint(6, counts.failed);
  w.uint(7, counts.unavailable);
  w.uint(8, counts.addedTotal);
  w.uint(9, counts.ackedTotal);
  w.uint(10, counts.nackedTotal);
  w.uint(11, counts.releasedTotal);
  w.uint(12, counts.failedTotal);
  w.uint(13, counts.discardedTotal);
  w.uint(14, counts.expiredTotal);
  w.end(mark);
}

export function readCounts(r: ProtoReader): Counts {
  const outer = r.enter();
  const c = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
  while (r.more()) {
    const tag = r.tag();
    const field = Math.floor(tag / 8);
    if ((tag & 7) === WIRE_VARINT && field >= 1 && field <= 14) c[field] = r.varint();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return {
    total: c[1]!,
    dataBytes: c[2]!,
    delayed: c[3]!,
    visible: c[4]!,
    pending: c[5]!,
    failed: c[6]!,
    unavailable: c[7]!,
    addedTotal: c[8]!,
    ackedTotal: c[9]!,
    nackedTotal: c[10]!,
    releasedTotal: c[11]!,
    failedTotal: c[12]!,
    discardedTotal: c[13]!,
    expiredTotal: c[14]!,
  };
}

// ---- ListQuery, SendRequest, TokenRef ----

export function writeListQuery(w: ProtoWriter, field: number, query: ListQuery): void {
  const mark = w.begin(field, 8 + (query.after?.length ?? 0) + (query.match?.length ?? 0));
  w.uint(1, query.limit);
  w.optionalString(2, query.after);
  w.optionalString(3, query.match);
  w.end(mark);
}

export function readListQuery(r: ProtoReader): { limit: number; after?: string; match?: string } {
  const outer = r.enter();
  const query: { limit: number; after?: string; match?: string } = { limit: 0 };
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case V(1): query.limit = r.varint(); break;
      case L(2): query.after = r.string(); break;
      case L(3): query.match = r.string(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return query;
}

export function writeSendRequest(w: ProtoWriter, field: number, request: SendRequest): void {
  const mark = w.begin(field, request.payload.length + 32);
  w.bytes(1, request.payload);
  w.uint(2, request.delayMs);
  w.optionalBytes(3, request.dedupKey);
  w.bool(4, request.wantHandle);
  w.end(mark);
}

const EMPTY_BYTES = new Uint8Array(0);

/** Payload and dedup key are copied: the member keeps them, the frame must not stay pinned. */
export function readSendRequest(r: ProtoReader): SendRequest {
  const outer = r.enter();
  let payload: Uint8Array = EMPTY_BYTES;
  let delayMs = 0;
  let dedupKey: Uint8Array | undefined;
  let wantHandle = false;
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L(1): payload = r.bytesCopy(); break;
      case V(2): delayMs = r.varint(); break;
      case L(3): dedupKey = r.bytesCopy(); break;
      case V(4): wantHandle = r.bool(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return dedupKey === undefined
    ? { payload, delayMs, wantHandle }
    : { payload, delayMs, dedupKey, wantHandle };
}

export function writeTokenRef(w: ProtoWriter, field: number, token: TokenRef): void {
  const mark = w.begin(field, 4 + (token.lease?.length ?? 0) + (token.handle?.length ?? 0));
  w.optionalString(1, token.lease);
  w.optionalString(2, token.handle);
  w.end(mark);
}

export function readTokenRef(r: ProtoReader): TokenRef {
  const outer = r.enter();
  const token: { lease?: string; handle?: string } = {};
  while (r.more()) {
    const tag = r.tag();
    if (tag === L(1)) token.lease = r.string();
    else if (tag === L(2)) token.handle = r.string();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return token;
}
