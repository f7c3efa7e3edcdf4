// An `MqError` on the wire: {kind, message, details map, not_primary}. Detail values keep their
// JSON type (string, number, boolean) so the HTTP body the gateway renders is the member's, byte
// for byte. A `NotPrimaryError` carries its routing hint in `not_primary`, typed.

import { MqError, STATUS_OF_KIND, type ErrorDetails, type ErrorKind } from '@spoolmq/engine';
import { NotPrimaryError } from './not-primary.js';
import type { ProtoReader } from './proto-reader.js';
import { WIRE_I64, WIRE_LEN, WIRE_VARINT, type ProtoWriter } from './proto-writer.js';

/** Field number of `Error.not_primary`. */
const ERROR_NOT_PRIMARY = 4;

export function writeError(w: ProtoWriter, field: number, error: MqError): void {
  const mark = w.begin(field, 16 + error.message.length);
  w.string(1, error.kind);
  w.string(2, error.message);
  for (const key of Object.keys(error.details)) {
    const value = error.details[key]!;
    const entry = w.begin(3, 16 + key.length);
    w.optionalString(1, key);
    const inner = w.begin(2, 16);
    if (typeof value === 'string') w.optionalString(1, value);
    else if (typeof value === 'number') w.double(2, value);
    else {
      w.tag(3, WIRE_VARINT);
      w.varint(value ? 1 : 0);
    }
    w.end(inner);
    w.end(entry);
  }
  if (error instanceof NotPrimaryError) writeNotPrimary(w, error);
  w.end(mark);
}

/** Error.not_primary: the routing hint as fields, never as details. */
function writeNotPrimary(w: ProtoWriter, error: NotPrimaryError): void {
  const mark = w.begin(ERROR_NOT_PRIMARY, 8 + (error.leaderId?.length ?? 0));
  w.optionalString(1, error.leaderId ?? undefined);
  for (const replica of error.replicas) w.optionalString(2, replica);
  w.end(mark);
}

interface NotPrimaryHint {
  leaderId: string | null;
  replicas: string[];
}

function readNotPrimary(r: ProtoReader): NotPrimaryHint {
  const outer = r.enter();
  const hint: NotPrimaryHint = { leaderId: null, replicas: [] };
  while (r.more()) {
    const tag = r.tag();
    if (tag === 1 * 8 + WIRE_LEN) hint.leaderId = r.string();
    else if (tag === 2 * 8 + WIRE_LEN) hint.replicas.push(r.string());
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return hint;
}

function isErrorKind(kind: string): kind is ErrorKind {
  return Object.hasOwn(STATUS_OF_KIND, kind);
}

function readDetailValue(r: ProtoReader): string | number | boolean | undefined {
  const outer = r.enter();
  let value: string | number | boolean | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === 1 * 8 + WIRE_LEN) value = r.string();
    else if (tag === 2 * 8 + WIRE_I64) value = r.double();
    else if (tag === 3 * 8 + WIRE_VARINT) value = r.bool();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return value;
}

function readDetailEntry(r: ProtoReader, details: Record<string, string | number | boolean>): void {
  const outer = r.enter();
  let key = '';
  let value: string | number | boolean | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === 1 * 8 + WIRE_LEN) key = r.string();
    else if (tag === 2 * 8 + WIRE_LEN) value = readDetailValue(r);
    else r.skip(tag & 7);
  }
  r.leave(outer);
  // A value with no variant set is a proto3 default we never write; drop it rather than guess.
  if (value !== undefined) details[key] = value;
}

/**
 * Reads an Error message; one with `not_primary` set is a `NotPrimaryError`. A kind this build
 * does not know (a newer member) becomes 500 `internal` with the original kind in
 * `details.kind`, rather than an invented status.
 */
export function readError(r: ProtoReader): MqError {
  const outer = r.enter();
  let kind = '';
  let message = '';
  const details: Record<string, string | number | boolean> = {};
  let notPrimary: NotPrimaryHint | undefined;
  while (r.more()) {
    const tag = r.tag();
    if (tag === 1 * 8 + WIRE_LEN) kind = r.string();
    else if (tag === 2 * 8 + WIRE_LEN) message = r.string();
    else if (tag === 3 * 8 + WIRE_LEN) readDetailEntry(r, details);
    else if (tag === ERROR_NOT_PRIMARY * 8 + WIRE_LEN) notPrimary = readNotPrimary(r);
    else r.skip(tag & 7);
  }
  r.leave(outer);
  if (notPrimary !== undefined && kind === 'unavailable') {
    return new NotPrimaryError(message, notPrimary.leaderId, notPrimary.replicas);
  }
  if (!isErrorKind(kind)) return new MqError('internal', message, { ...details, kind });
  return new MqError(kind, message, details as ErrorDetails);
}
