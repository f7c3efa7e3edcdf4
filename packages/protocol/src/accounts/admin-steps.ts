// The admin steps one member forwards to another over the accounts service's Call
// (proto/member.proto: AdminCall, AdminAnswer): one row per step, with its field number and how
// its step and its answer are written and read. A step is added here, in `AdminStep` and
// `AdminAnswers`, in member.proto, and in the member's runner (member-admin.ts); nothing else
// names steps.
//
// Everything read is checked: a frame that does not decode, names no step or two, or holds a
// value out of range throws WireError with the reason, so a buggy or hostile peer gets a clear
// refusal instead of a half-read request.

import { MqError } from '@spoolmq/engine';
import { ProtoReader, WireError } from '../member/proto-reader.js';
import { ProtoWriter, WIRE_LEN, WIRE_VARINT } from '../member/proto-writer.js';
import { readError, writeError } from '../member/error-codec.js';

/** Payloads one fetch step names at most. */
export const PAYLOAD_ITEMS_MAX = 256;
/** Field number of `AdminAnswer.error`. */
const ANSWER_ERROR = 15;

/** A payload a replica asks another for: its message, and the offset it has the bytes up to. */
export type PayloadItem = readonly [queueGen: number, seq: number, offset: number];

/** The outcome of a metadata proposal (the member's MetaResult, as it travels). */
export type MetaOutcome =
  | { readonly kind: 'ok' | 'exists' | 'not_found' | 'not_initialized' }
  | { readonly kind: 'limit'; readonly what: string }
  | { readonly kind: 'conflict'; readonly why: string };

const PLAIN_OUTCOMES = ['ok', 'exists', 'not_found', 'not_initialized'] as const;

/**
 * A replica's answer to a payload fetch: for each item its bytes from the offset (null when not
 * served) with the payload's checksum beside it, and the indexes of the items it lacks.
 */
export interface PayloadChunks {
  readonly chunks: (Uint8Array | null)[];
  readonly sums: (number | null)[];
  readonly missing: number[];
}

export type AdminStep =
  /** Propose an encoded metadata command on the metadata leader. */
  | { readonly op: 'propose'; readonly command: Uint8Array }
  /**
   * Whether this member and its gateways hold metadata index `index`: answered once they do, or
   * after `waitMs` (0: at once) with what holds then (a long poll).
   */
  | { readonly op: 'acked'; readonly index: number; readonly waitMs: number }
  /** Hand the leadership of spool `spool` to member `to`. */
  | { readonly op: 'transfer'; readonly spool: string; readonly to: string }
  | { readonly op: 'addMember'; readonly id: string; readonly address: string }
  | { readonly op: 'removeMember'; readonly id: string }
  /** Record the moves of member `id`'s replicas elsewhere. */
  | { readonly op: 'moveOff'; readonly id: string; readonly allowShrink: boolean }
  /** Chunks of payloads of spool group `group`. */
  | { readonly op: 'payloads'; readonly group: string; readonly items: readonly PayloadItem[] };

export type AdminOp = AdminStep['op'];
export type AdminStepOf<O extends AdminOp> = Extract<AdminStep, { op: O }>;

/** What each step answers when it succeeds. */
export interface AdminAnswers {
  propose: { readonly result: MetaOutcome; readonly index: number };
  acked: { readonly acked: boolean };
  transfer: Record<string, never>;
  addMember: Record<string, never>;
  removeMember: Record<string, never>;
  moveOff: Record<string, never>;
  payloads: PayloadChunks;
}

interface AdminStepRow<O extends AdminOp> {
  /** Field number of the step in AdminCall and of its result in AdminAnswer. */
  readonly field: number;
  /** Writes the step's fields (inside its message). */
  readonly writeStep: (w: ProtoWriter, step: AdminStepOf<O>) => void;
  /** Reads the step's message (entered); throws WireError. */
  readonly readStep: (r: ProtoReader) => AdminStepOf<O>;
  readonly writeAnswer: (w: ProtoWriter, answer: AdminAnswers[O]) => void;
  readonly readAnswer: (r: ProtoReader) => AdminAnswers[O];
}

const tagOf = (field: number, wireType: number): number => field * 8 + wireType;

/** Reads the fields of the entered message: `take` reads a known tag and returns true. */
function eachField(r: ProtoReader, take: (tag: number) => boolean): void {
  while (r.more()) {
    const tag = r.tag();
    if (!take(tag)) r.skip(tag & 7);
  }
}

/** Reads a message of strings at fields 1 and 2 (absent: ''). */
function readTwoStrings(r: ProtoReader): [string, string] {
  const values: [string, string] = ['', ''];
  eachField(r, (tag) => {
    if (tag === tagOf(1, WIRE_LEN)) values[0] = r.string();
    else if (tag === tagOf(2, WIRE_LEN)) values[1] = r.string();
    else return false;
    return true;
  });
  return values;
}

function required(value: string, what: string): string {
  if (value.length === 0) throw new WireError(`admin step without ${what}`);
  return value;
}

const noAnswer = {
  writeAnswer: (): void => {},
  readAnswer: (r: ProtoReader): Record<string, never> => {
    eachField(r, () => false);
    return {};
  },
};

function writeOutcome(w: ProtoWriter, outcome: MetaOutcome): void {
  const mark = w.begin(1, 16);
  w.string(1, outcome.kind);
  if (outcome.kind === 'limit') w.string(2, outcome.what);
  if (outcome.kind === 'conflict') w.string(3, outcome.why);
  w.end(mark);
}

function readOutcome(r: ProtoReader): MetaOutcome {
  const outer = r.enter();
  const fields = { kind: '', what: '', why: '' };
  eachField(r, (tag) => {
    if (tag === tagOf(1, WIRE_LEN)) fields.kind = r.string();
    else if (tag === tagOf(2, WIRE_LEN)) fields.what = r.string();
    else if (tag === tagOf(3, WIRE_LEN)) fields.why = r.string();
    else return false;
    return true;
  });
  r.leave(outer);
  const plain = PLAIN_OUTCOMES.find((known) => known === fields.kind);
  if (plain !== undefined) return { kind: plain };
  if (fields.kind === 'limit') return { kind: 'limit', what: fields.what };
  if (fields.kind === 'conflict') return { kind: 'conflict', why: fields.why };
  throw new WireError(`unknown metadata outcome '${fields.kind}'`);
}

function readPayloadItem(r: ProtoReader): PayloadItem {
  const outer = r.enter();
  const item: [number, number, number] = [0, 0, 0];
  eachField(r, (tag) => {
    const field = tag >> 3;
    if ((tag & 7) !== WIRE_VARINT || field < 1 || field > 3) return false;
    item[field - 1] = r.varint();
    return true;
  });
  r.leave(outer);
  return item;
}

function writePayloadsStep(w: ProtoWriter, step: AdminStepOf<'payloads'>): void {
  w.string(1, step.group);
  for (const [queueGen, seq, offset] of step.items) {
    const mark = w.begin(2, 16);
    w.uint(1, queueGen);
    w.uint(2, seq);
    w.uint(3, offset);
    w.end(mark);
  }
}

function readPayloadsStep(r: ProtoReader): AdminStepOf<'payloads'> {
  let group = '';
  const items: PayloadItem[] = [];
  eachField(r, (tag) => {
    if (tag === tagOf(1, WIRE_LEN)) group = r.string();
    else if (tag !== tagOf(2, WIRE_LEN)) return false;
    else if (items.length === PAYLOAD_ITEMS_MAX) {
      throw new WireError(`a payload fetch names more than ${PAYLOAD_ITEMS_MAX} items`);
    } else items.push(readPayloadItem(r));
    return true;
  });
  return { op: 'payloads', group: required(group, 'a group'), items };
}

function writePayloadChunks(w: ProtoWriter, answer: PayloadChunks): void {
  answer.chunks.forEach((chunk, i) => {
    const mark = w.begin(1, 16 + (chunk?.byteLength ?? 0));
    w.optionalBytes(1, chunk ?? undefined);
    w.optionalUint(2, answer.sums[i] ?? undefined);
    w.end(mark);
  });
  for (const index of answer.missing) {
    w.tag(2, WIRE_VARINT);
    w.varint(index);
  }
}

/** One PayloadChunk: its bytes and checksum, both or neither. */
function readPayloadChunk(r: ProtoReader, answer: PayloadChunks): void {
  const outer = r.enter();
  let chunk: Uint8Array | null = null;
  let sum: number | null = null;
  eachField(r, (tag) => {
    if (tag === tagOf(1, WIRE_LEN)) chunk = r.bytesCopy();
    else if (tag === tagOf(2, WIRE_VARINT)) sum = r.varint();
    else return false;
    return true;
  });
  r.leave(outer);
  if ((chunk === null) !== (sum === null)) {
    throw new WireError('a payload chunk comes with its checksum, and only then');
  }
  answer.chunks.push(chunk);
  answer.sums.push(sum);
}

function readPayloadChunks(r: ProtoReader): PayloadChunks {
  const answer: PayloadChunks = { chunks: [], sums: [], missing: [] };
  eachField(r, (tag) => {
    if (tag === tagOf(1, WIRE_LEN)) readPayloadChunk(r, answer);
    else if (tag === tagOf(2, WIRE_VARINT)) {
      if (answer.missing.length >= PAYLOAD_ITEMS_MAX) throw new WireError('too many missing');
      answer.missing.push(r.varint());
    } else if (tag === tagOf(2, WIRE_LEN)) r.packedVarints(answer.missing, PAYLOAD_ITEMS_MAX);
    else return false;
    return true;
  });
  if (answer.chunks.length > PAYLOAD_ITEMS_MAX) {
    throw new WireError(`a payload answer holds more than ${PAYLOAD_ITEMS_MAX} chunks`);
  }
  return answer;
}

/** The steps, by op. */
export const ADMIN_STEPS: { readonly [O in AdminOp]: AdminStepRow<O> } = {
  propose: {
    field: 1,
    writeStep: (w, step) => w.bytes(1, step.command),
    readStep: (r) => {
      let command: Uint8Array = new Uint8Array(0);
      eachField(r, (tag) => tag === tagOf(1, WIRE_LEN) && ((command = r.bytesCopy()), true));
      if (command.byteLength === 0) throw new WireError('a proposal without a command');
      return { op: 'propose', command };
    },
    writeAnswer: (w, answer) => {
      writeOutcome(w, answer.result);
      w.uint(2, answer.index);
    },
    readAnswer: (r) => {
      let result: MetaOutcome | null = null;
      let index = 0;
      eachField(r, (tag) => {
        if (tag === tagOf(1, WIRE_LEN)) result = readOutcome(r);
        else if (tag === tagOf(2, WIRE_VARINT)) index = r.varint();
        else return false;
        return true;
      });
      if (result === null) throw new WireError('a proposal answer without its result');
      return { result, index };
    },
  },
  acked: {
    field: 2,
    writeStep: (w, step) => {
      w.uint(1, step.index);
      // Whole milliseconds, rounded up: a wait measured on a monotonic clock is fractional, and
      // a varint of it would throw (the caller took that for an unreachable member and did not
      // wait at all).
      w.uint(2, Math.ceil(step.waitMs));
    },
    readStep: (r) => {
      let index = 0;
      let waitMs = 0;
      eachField(r, (tag) => {
        if (tag === tagOf(1, WIRE_VARINT)) index = r.varint();
        else if (tag === tagOf(2, WIRE_VARINT)) waitMs = r.varint();
        else return false;
        return true;
      });
      return { op: 'acked', index, waitMs };
    },
    writeAnswer: (w, answer) => w.bool(1, answer.acked),
    readAnswer: (r) => {
      let acked = false;
      eachField(r, (tag) => tag === tagOf(1, WIRE_VARINT) && ((acked = r.bool()), true));
      return { acked };
    },
  },
  transfer: {
    field: 3,
    writeStep: (w, step) => {
      w.string(1, step.spool);
      w.string(2, step.to);
    },
    readStep: (r) => {
      const [spool, to] = readTwoStrings(r);
      return { op: 'transfer', spool: required(spool, 'a spool'), to: required(to, 'a member') };
    },
    ...noAnswer,
  },
  addMember: {
    field: 4,
    writeStep: (w, step) => {
      w.string(1, step.id);
      w.string(2, step.address);
    },
    readStep: (r) => {
      const [id, address] = readTwoStrings(r);
      const member = required(id, 'a member');
      return { op: 'addMember', id: member, address: required(address, 'an address') };
    },
    ...noAnswer,
  },
  removeMember: {
    field: 5,
    writeStep: (w, step) => w.string(1, step.id),
    readStep: (r) => ({ op: 'removeMember', id: required(readTwoStrings(r)[0], 'a member') }),
    ...noAnswer,
  },
  moveOff: {
    field: 6,
    writeStep: (w, step) => {
      w.string(1, step.id);
      w.bool(2, step.allowShrink);
    },
    readStep: (r) => {
      let id = '';
      let allowShrink = false;
      eachField(r, (tag) => {
        if (tag === tagOf(1, WIRE_LEN)) id = r.string();
        else if (tag === tagOf(2, WIRE_VARINT)) allowShrink = r.bool();
        else return false;
        return true;
      });
      return { op: 'moveOff', id: required(id, 'a member'), allowShrink };
    },
    ...noAnswer,
  },
  payloads: {
    field: 7,
    writeStep: writePayloadsStep,
    readStep: readPayloadsStep,
    writeAnswer: writePayloadChunks,
    readAnswer: readPayloadChunks,
  },
};

const OPS = Object.keys(ADMIN_STEPS) as AdminOp[];

function opOfField(field: number): AdminOp | undefined {
  return OPS.find((op) => ADMIN_STEPS[op].field === field);
}

/** Encodes `step` as an AdminCall. */
export function encodeAdminStep<O extends AdminOp>(step: AdminStepOf<O>): Uint8Array {
  const row = ADMIN_STEPS[step.op] as AdminStepRow<O>;
  const w = new ProtoWriter(64);
  const mark = w.begin(row.field, 32);
  row.writeStep(w, step);
  w.end(mark);
  return w.take();
}

/** Decodes an AdminCall holding exactly one step. Throws WireError saying what is wrong. */
export function decodeAdminStep(bytes: Uint8Array): AdminStep {
  const r = new ProtoReader(bytes);
  let step: AdminStep | null = null;
  eachField(r, (tag) => {
    const op = opOfField(tag >> 3);
    if (op === undefined || (tag & 7) !== WIRE_LEN) {
      throw new WireError(`unknown admin step ${tag >> 3}`);
    }
    if (step !== null) throw new WireError('an admin call names more than one step');
    const outer = r.enter();
    step = ADMIN_STEPS[op].readStep(r);
    r.leave(outer);
    return true;
  });
  if (step === null) throw new WireError('an admin call names no step');
  return step;
}

/** Encodes the answer to a step of `op`: its result, or `error` when it failed. */
export function encodeAdminAnswer<O extends AdminOp>(
  op: O,
  outcome: { readonly answer: AdminAnswers[O] } | { readonly error: MqError },
): Uint8Array {
  const w = new ProtoWriter(256);
  if ('error' in outcome) {
    writeError(w, ANSWER_ERROR, outcome.error);
    return w.take();
  }
  const row = ADMIN_STEPS[op] as AdminStepRow<O>;
  const mark = w.begin(row.field, 64);
  row.writeAnswer(w, outcome.answer);
  w.end(mark);
  return w.take();
}

/**
 * Decodes the answer to a step of `op`: its result, or throws the MqError it carries. Throws
 * WireError for an answer that does not decode or answers another step.
 */
export function decodeAdminAnswer<O extends AdminOp>(op: O, bytes: Uint8Array): AdminAnswers[O] {
  const r = new ProtoReader(bytes);
  const row = ADMIN_STEPS[op] as AdminStepRow<O>;
  let answer: AdminAnswers[O] | undefined;
  let error: MqError | undefined;
  eachField(r, (tag) => {
    if (tag === tagOf(ANSWER_ERROR, WIRE_LEN)) error = readError(r);
    else if (tag === tagOf(row.field, WIRE_LEN)) {
      const outer = r.enter();
      answer = row.readAnswer(r);
      r.leave(outer);
    } else throw new WireError(`an answer to ${op} holds field ${tag >> 3}`);
    return true;
  });
  if (error !== undefined) throw error;
  if (answer === undefined) throw new WireError(`an answer to ${op} without its result`);
  return answer;
}
