// The protobuf wire primitives of the two hand-written codecs, the member protocol's
// (@spoolmq/protocol proto-reader/-writer) and Raft's frames (@spoolmq/raft frame-reader/-writer):
// one unsigned varint (base-128, least significant group first), one reader of fields and nested
// messages and one writer of fields. They live here because the engine is the leaf both stand on.
// Numbers stay JS numbers: values up to 2^53, never a Long. No allocation on either side.

import { assert } from './assert.js';

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

/** Longest varint accepted: 10 bytes carry 64 bits. */
export const VARINT_BYTES_MAX = 10;

/** Bytes of the varint encoding of `value` (a non-negative safe integer). */
export function varintLength(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let bytes = 4;
  let rest = Math.floor(value / 0x10000000);
  while (rest > 0) {
    bytes++;
    rest = Math.floor(rest / 0x80);
  }
  return bytes;
}

/**
 * Writes `value` (a non-negative safe integer; the caller checks) at `pos` of `buf`, which has
 * room for `varintLength(value)` bytes there; returns the position after it. 32-bit shifts for
 * what fits in 31 bits, division above (JS bit operators are 32-bit).
 */
export function putVarint(buf: Uint8Array, pos: number, value: number): number {
  let rest = value;
  while (rest > 0x7fffffff) {
    buf[pos++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  while (rest > 0x7f) {
    buf[pos++] = (rest & 0x7f) | 0x80;
    rest >>>= 7;
  }
  buf[pos++] = rest;
  return pos;
}

/**
 * A cursor over received protobuf bytes, shared by the wire readers: they extend it with their
 * fields (strings, bytes, doubles) and say which error malformed input throws (`wireError`).
 * `buf` is read in place; `pos` moves forward; `limit` ends the message being read (`enter`
 * narrows it to a nested message, `leave` restores it).
 */
export abstract class WireReader<B extends Uint8Array = Uint8Array> {
  protected pos = 0;
  protected limit: number;

  constructor(protected readonly buf: B) {
    this.limit = buf.length;
  }

  /** The error this reader throws for malformed input, with `message` saying what is wrong. */
  protected abstract wireError(message: string): Error;

  /** Whether the current message has more fields. */
  more(): boolean {
    return this.pos < this.limit;
  }

  /** An unsigned varint of at most 10 bytes; throws past 2^53 (never produced by our writers). */
  varint(): number {
    const buf = this.buf;
    let pos = this.pos;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < VARINT_BYTES_MAX; i++) {
      if (pos >= this.limit) throw this.wireError('truncated varint');
      const byte = buf[pos++] as number;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) {
          throw this.wireError('number out of range (past 2^53)');
        }
        this.pos = pos;
        return result;
      }
      scale *= 0x80;
    }
    throw this.wireError('varint longer than 10 bytes');
  }

  /** The length of a length-delimited field, checked to end within the current message. */
  lengthPrefix(): number {
    const length = this.varint();
    if (length > this.limit - this.pos) {
      throw this.wireError('truncated field (length past the end of the message)');
    }
    return length;
  }

  /** Enters a nested message; returns what `leave` needs to restore the outer message. */
  enter(): number {
    const length = this.lengthPrefix();
    const outer = this.limit;
    this.limit = this.pos + length;
    return outer;
  }

  /** Leaves the nested message entered by `enter` (skipping whatever it did not read). */
  leave(outer: number): void {
    this.pos = this.limit;
    this.limit = outer;
  }

  /** Skips a field of `wireType` whose tag was just read (unknown fields are ignored). */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_I64:
        this.advance(8);
        return;
      case WIRE_LEN:
        this.advance(this.lengthPrefix());
        return;
      case WIRE_I32:
        this.advance(4);
        return;
      default:
        throw this.wireError(`unknown wire type ${wireType}`);
    }
  }

  protected advance(bytes: number): void {
    if (bytes > this.limit - this.pos) throw this.wireError('truncated field');
    this.pos += bytes;
  }
}

/**
 * A cursor writing protobuf fields, shared by the wire writers: they extend it with how room is
 * made (`grow`: the member protocol's writer doubles its buffer; Raft's frame writer sized its
 * buffer exactly in a size pass and has room already) and how a string becomes UTF-8
 * (`utf8Length`, `putUtf8`: the engine imports no Buffer, and the writers' Buffer writes in
 * place). Fields at their proto3 default (0, false, empty) are left out; the `...Always` forms
 * write them anyway (a repeated element, a field with presence). Numbers are non-negative safe
 * integers, asserted (a fraction or a negative would be written as garbage). Nothing here
 * allocates.
 */
export abstract class WireWriter<B extends Uint8Array = Uint8Array> {
  protected pos = 0;

  constructor(protected buf: B) {}

  /**
   * Called when `bytes` more bytes do not fit at `pos`: a growable writer grows its buffer. A
   * writer sized exactly by a size pass does nothing (a field asks room for its varints' longest
   * forms, which may pass the end by bytes its values do not use).
   */
  protected abstract grow(bytes: number): void;

  /** Bytes of the UTF-8 encoding of `value`. */
  protected abstract utf8Length(value: string): number;

  /** Writes the `length` (= utf8Length) bytes of `value` at `pos`, which has room; keeps `pos`. */
  protected abstract putUtf8(value: string, length: number): void;

  /** Makes room for `bytes` more bytes at `pos`: the check here, inline; the growth `grow`'s. */
  protected reserve(bytes: number): void {
    if (this.pos + bytes > this.buf.length) this.grow(bytes);
  }

  /** Bytes written so far (since the last reset, for a writer that is reused). */
  get length(): number {
    return this.pos;
  }

  /** A raw varint: `value` a non-negative safe integer (asserted). */
  varint(value: number): void {
    assert(Number.isSafeInteger(value) && value >= 0, 'varint: non-negative safe integer');
    this.reserve(VARINT_BYTES_MAX);
    this.pos = putVarint(this.buf, this.pos, value);
  }

  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  // The fields below reserve once and write their tag and value with putVarint directly rather
  // than through `varint`: on Raft's AppendEntries path every call level inlined costs V8's
  // inlining budget, and past it the per-entry writes stop being inlined.

  /** A uint field, skipped at 0. `value`: a non-negative safe integer (asserted). */
  uint(field: number, value: number): void {
    if (value === 0) return;
    assert(Number.isSafeInteger(value) && value > 0, 'uint: non-negative safe integer');
    this.reserve(2 * VARINT_BYTES_MAX);
    const buf = this.buf;
    this.pos = putVarint(buf, putVarint(buf, this.pos, field * 8 + WIRE_VARINT), value);
  }

  /** A bool field, skipped when false. */
  bool(field: number, value: boolean): void {
    if (!value) return;
    this.reserve(VARINT_BYTES_MAX + 1);
    const pos = putVarint(this.buf, this.pos, field * 8 + WIRE_VARINT);
    this.buf[pos] = 1;
    this.pos = pos + 1;
  }

  /** A string field, skipped when empty. */
  string(field: number, value: string): void {
    if (value.length === 0) return;
    this.stringAlways(field, value);
  }

  /** A string field written even when empty. */
  stringAlways(field: number, value: string): void {
    const length = this.utf8Length(value);
    this.prefix(field, length);
    this.putUtf8(value, length);
    this.pos += length;
  }

  /** A bytes field, skipped when empty. */
  bytes(field: number, value: Uint8Array): void {
    if (value.length === 0) return;
    this.bytesAlways(field, value);
  }

  /** A bytes field written even when empty (copied in: the one copy of the data). */
  bytesAlways(field: number, value: Uint8Array): void {
    this.prefix(field, value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  /**
   * The tag and length of a length-delimited field whose `length` bytes of content follow (a
   * nested message, a string, bytes), with room reserved for them.
   */
  protected prefix(field: number, length: number): void {
    this.reserve(2 * VARINT_BYTES_MAX + length);
    const buf = this.buf;
    this.pos = putVarint(buf, putVarint(buf, this.pos, field * 8 + WIRE_LEN), length);
  }
}
