// Calls on the wire: a `Call` message wrapped as one `ClientFrame.calls` entry, so encoded calls
// (and cancels) concatenate into a ClientFrame without re-encoding. What each operation's message
// holds is its row in operations.ts; this file is the frame around it. The member decodes a whole
// frame before acting on any of it: a frame that does not decode changes nothing.

import type { ProtoReader } from './proto-reader.js';
import { ProtoReader as Reader, WireError } from './proto-reader.js';
import { WIRE_LEN, WIRE_VARINT, type ProtoWriter } from './proto-writer.js';
import type { Call, Op } from './calls.js';
import { OPERATIONS, OPS, rowOf, type OpFields, type Operation } from './operations.js';

const OP_OF_FIELD: readonly (Op | undefined)[] = (() => {
  const ops: (Op | undefined)[] = [];
  for (const op of OPS) ops[OPERATIONS[op].field] = op;
  return ops;
})();

const FRAME_CALLS = 1;
const FRAME_CANCELS = 2;

/** Rough encoded size of a call in bytes, for the size hint and the frame bounds. */
export function callBytesEstimate(call: Call): number {
  const payload = rowOf(call).callPayload?.(call);
  return payload === undefined ? 160 + call.spool.length : 96 + call.spool.length + payload.length;
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
  const row = rowOf(call);
  const mark = w.begin(row.field, callBytesEstimate(call) - 24);
  row.writeFields(w, call);
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
    else if (tag === FRAME_CANCELS * 8 + WIRE_LEN) r.packedVarints(cancels);
    else r.skip(tag & 7);
  }
  return { calls, cancels };
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

/** Decodes an operation message by tag into one bag of fields; the op's row builds its call. */
function readOp(r: ProtoReader, op: Op, spool: string): Call {
  const row = OPERATIONS[op] as unknown as Operation<Op>;
  const nested = row.nested;
  const outer = r.enter();
  const f: OpFields = {
    s1: undefined,
    s2: '',
    s4: undefined,
    n2: 0,
    n3: 0,
    b5: false,
    strings2: undefined,
    nested1: undefined,
    nested2: undefined,
    nested3: undefined,
  };
  while (r.more()) {
    const tag = r.tag();
    switch (tag) {
      case L1:
        if (nested?.[0] !== undefined) f.nested1 = nested[0](r);
        else f.s1 = r.string();
        break;
      case L2:
        if (nested?.[1] !== undefined) f.nested2 = nested[1](r);
        else if (row.repeatedStrings2 === true) (f.strings2 ??= []).push(r.string());
        else f.s2 = r.string();
        break;
      case L3:
        if (nested?.[2] !== undefined) f.nested3 = nested[2](r);
        else r.skip(WIRE_LEN);
        break;
      case L4: f.s4 = r.string(); break;
      case V2: f.n2 = r.varint(); break;
      case V3: f.n3 = r.varint(); break;
      case V5: f.b5 = r.bool(); break;
      default: r.skip(tag & 7);
    }
  }
  r.leave(outer);
  return row.fromFields(spool, f);
}
