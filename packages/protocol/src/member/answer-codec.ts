// Answers on the wire: an `Answer` message wrapped as one `ServerFrame.answers` entry, so the
// member concatenates answers ready in one turn into a frame. The member encodes by operation
// (`writeAnswer`, with the operation's row in operations.ts); the gateway decodes each result
// variant (result-codec.ts) and checks it is one the operation answers with (`resultOf`).

import type { MqError } from '@spoolmq/engine';
import type { Op, OpResults } from './calls.js';
import { readError, writeError } from './error-codec.js';
import { OPERATIONS, type Operation } from './operations.js';
import { ProtoReader, WireError } from './proto-reader.js';
import { WIRE_LEN, WIRE_VARINT, type ProtoWriter } from './proto-writer.js';
import { R, RESULT_OF_FIELD, readResult, type ResultName } from './result-codec.js';

const FRAME_ANSWERS = 1;

// ---- encoding (member side) ----

/** Appends the answer `result` of operation `op` to call `id` as one ServerFrame entry. */
export function writeAnswer<O extends Op>(
  w: ProtoWriter,
  id: number,
  op: O,
  result: OpResults[O],
): void {
  const row = OPERATIONS[op] as unknown as Operation<O>;
  const entry = w.begin(FRAME_ANSWERS, answerBytesEstimate(row, result));
  w.uint(1, id);
  row.writeResult(w, result);
  w.end(entry);
}

/** Appends an error answer to call `id`. */
export function writeErrorAnswer(w: ProtoWriter, id: number, error: MqError): void {
  const entry = w.begin(FRAME_ANSWERS, 32 + error.message.length);
  w.uint(1, id);
  writeError(w, R.error, error);
  w.end(entry);
}

function answerBytesEstimate<O extends Op>(row: Operation<O>, result: OpResults[O]): number {
  return 96 + (row.resultPayload?.(result)?.length ?? 0);
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
  if (result === undefined || !OPERATIONS[op].results.includes(result)) {
    throw new WireError(`answer ${answer.id}: ${String(result)} is not an answer of ${op}`);
  }
  return answer.value as OpResults[O];
}

