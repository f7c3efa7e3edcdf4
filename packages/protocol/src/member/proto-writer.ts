// Protocol-buffers wire writer for the member protocol (proto/member.proto): varints, strings,
// bytes, doubles and nested messages into one growable buffer. Hand-written rather than
// protobufjs's reflection so the hot path allocates one buffer per encoded call and numbers stay
// plain JS numbers (no Long). Nested messages reserve their length prefix from a size hint and
// shift their content only when the hint was wrong, so a payload is copied once.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { WIRE_I64, WIRE_LEN, WIRE_VARINT, putVarint, varintLength } from '@spoolmq/engine';

export { WIRE_I64, WIRE_LEN, WIRE_VARINT } from '@spoolmq/engine';

/** Bytes of the varint encoding of `value` (a non-negative safe integer): the engine's one. */
export const varintBytes = varintLength;

/** Largest buffer kept between uses; a bigger one (a large payload) is dropped after `take`. */
const KEEP_BYTES_MAX = 1 << 20;

export class ProtoWriter {
  private buf: Buffer;
  private pos = 0;

  /** `initialBytes`: starting capacity, > 0. */
  constructor(initialBytes = 4096) {
    assert(initialBytes > 0, 'initialBytes > 0');
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  /** Bytes written since the last `take`/`reset`. */
  get length(): number {
    return this.pos;
  }

  reset(): void {
    this.pos = 0;
  }

  /** A copy of what was written (exactly sized), then reset for the next message. */
  take(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    this.pos = 0;
    if (this.buf.length > KEEP_BYTES_MAX) this.buf = Buffer.allocUnsafe(KEEP_BYTES_MAX);
    return out;
  }

  /** Writes a raw varint. `value`: a non-negative safe integer (asserted). */
  varint(value: number): void {
    assert(Number.isSafeInteger(value) && value >= 0, 'varint: non-negative safe integer');
    this.ensure(10);
    this.pos = putVarint(this.buf, this.pos, value);
  }

  tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  /** A uint field, skipped at its default 0 (proto3 implicit presence). */
  uint(field: number, value: number): void {
    if (value === 0) return;
    this.tag(field, WIRE_VARINT);
    this.varint(value);
  }

  /** A uint field with presence (`optional`): written even when 0, skipped when undefined. */
  optionalUint(field: number, value: number | undefined): void {
    if (value === undefined) return;
    this.tag(field, WIRE_VARINT);
    this.varint(value);
  }

  bool(field: number, value: boolean): void {
    if (!value) return;
    this.tag(field, WIRE_VARINT);
    this.varint(1);
  }

  /** A string field, skipped when empty. */
  string(field: number, value: string): void {
    if (value.length === 0) return;
    this.stringAlways(field, value);
  }

  /** A string field with presence: written even when empty, skipped when undefined. */
  optionalString(field: number, value: string | undefined): void {
    if (value === undefined) return;
    this.stringAlways(field, value);
  }

  /** A bytes field, skipped when empty. */
  bytes(field: number, value: Uint8Array): void {
    if (value.length === 0) return;
    this.bytesAlways(field, value);
  }

  /** A bytes field with presence. */
  optionalBytes(field: number, value: Uint8Array | undefined): void {
    if (value === undefined) return;
    this.bytesAlways(field, value);
  }

  /** A double field, always written (detail values need the type even at 0). */
  double(field: number, value: number): void {
    this.tag(field, WIRE_I64);
    this.ensure(8);
    this.buf.writeDoubleLE(value, this.pos);
    this.pos += 8;
  }

  /**
   * Starts a nested message (or any length-delimited field) and returns the mark `end` needs.
   * `sizeHint`: expected encoded size in bytes; a right guess saves a shift of the content.
   */
  begin(field: number, sizeHint = 0): number {
    this.tag(field, WIRE_LEN);
    const prefix = varintBytes(sizeHint);
    this.ensure(prefix + sizeHint);
    this.pos += prefix;
    return this.pos * 16 + prefix; // content start and reserved prefix size, packed
  }

  /** Ends the nested message started at `mark`, writing its length prefix. */
  end(mark: number): void {
    const start = Math.floor(mark / 16);
    const reserved = mark % 16;
    const length = this.pos - start;
    const needed = varintBytes(length);
    if (needed !== reserved) {
      this.ensure(needed - reserved);
      this.buf.copyWithin(start + needed - reserved, start, this.pos);
      this.pos += needed - reserved;
    }
    const after = this.pos;
    this.pos = start - reserved;
    this.varint(length);
    this.pos = after;
  }

  private stringAlways(field: number, value: string): void {
    this.tag(field, WIRE_LEN);
    const length = Buffer.byteLength(value, 'utf8');
    this.varint(length);
    this.ensure(length);
    this.buf.write(value, this.pos, length, 'utf8');
    this.pos += length;
  }

  private bytesAlways(field: number, value: Uint8Array): void {
    this.tag(field, WIRE_LEN);
    this.varint(value.length);
    this.ensure(value.length);
    this.buf.set(value, this.pos);
    this.pos += value.length;
  }

  private ensure(extra: number): void {
    const needed = this.pos + extra;
    if (needed <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}
