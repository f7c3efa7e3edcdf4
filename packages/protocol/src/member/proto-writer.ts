// Protocol-buffers wire writer for the member protocol (proto/member.proto): varints, strings,
// bytes, doubles and nested messages into one growable buffer. Hand-written rather than
// protobufjs's reflection so the hot path allocates one buffer per encoded call and numbers stay
// plain JS numbers (no Long). The field primitives are the engine's WireWriter, shared with
// Raft's frame writer; this adds growth, doubles, presence and nested messages. Nested messages
// reserve their length prefix from a size hint and shift their content only when the hint was
// wrong, so a payload is copied once.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { WIRE_I64, WIRE_LEN, WIRE_VARINT, WireWriter, varintLength } from '@spoolmq/engine';

export { WIRE_I64, WIRE_LEN, WIRE_VARINT } from '@spoolmq/engine';

/** Bytes of the varint encoding of `value` (a non-negative safe integer): the engine's one. */
export const varintBytes = varintLength;

/** Largest buffer kept between uses; a bigger one (a large payload) is dropped after `take`. */
const KEEP_BYTES_MAX = 1 << 20;

export class ProtoWriter extends WireWriter<Buffer> {
  /** `initialBytes`: starting capacity, > 0. */
  constructor(initialBytes = 4096) {
    assert(initialBytes > 0, 'initialBytes > 0');
    super(Buffer.allocUnsafe(initialBytes));
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

  /** A uint field with presence (`optional`): written even when 0, skipped when undefined. */
  optionalUint(field: number, value: number | undefined): void {
    if (value === undefined) return;
    this.tag(field, WIRE_VARINT);
    this.varint(value);
  }

  /** A string field with presence: written even when empty, skipped when undefined. */
  optionalString(field: number, value: string | undefined): void {
    if (value === undefined) return;
    this.stringAlways(field, value);
  }

  /** A bytes field with presence. */
  optionalBytes(field: number, value: Uint8Array | undefined): void {
    if (value === undefined) return;
    this.bytesAlways(field, value);
  }

  /** A double field, always written (detail values need the type even at 0). */
  double(field: number, value: number): void {
    this.tag(field, WIRE_I64);
    this.reserve(8);
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
    this.reserve(prefix + sizeHint);
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
      this.reserve(needed - reserved);
      this.buf.copyWithin(start + needed - reserved, start, this.pos);
      this.pos += needed - reserved;
    }
    const after = this.pos;
    this.pos = start - reserved;
    this.varint(length);
    this.pos = after;
  }

  protected utf8Length(value: string): number {
    return Buffer.byteLength(value, 'utf8');
  }

  protected putUtf8(value: string, length: number): void {
    this.buf.write(value, this.pos, length, 'utf8');
  }

  /** Grows the buffer (doubling) until `extra` more bytes fit at `pos`. */
  protected grow(extra: number): void {
    const needed = this.pos + extra;
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.buf.copy(grown, 0, 0, this.pos);
    this.buf = grown;
  }
}
