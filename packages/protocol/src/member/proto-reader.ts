// Protocol-buffers wire reader for the member protocol: reads one buffer in place, entering and
// leaving nested messages by moving its end (no reader object per message). Numbers come back as
// plain JS numbers; anything past 2^53, a truncated field or an unknown wire type throws
// `WireError` — the frame is garbage and is dropped whole.

import { Buffer } from 'node:buffer';
import { WIRE_I64, WIRE_LEN, WIRE_VARINT } from './proto-writer.js';

const WIRE_I32 = 5;

/** A frame that does not decode. Never an `MqError`: the stream carrying it is broken. */
export class WireError extends Error {
  constructor(message: string) {
    super(`member wire: ${message}`);
    this.name = 'WireError';
  }
}

export class ProtoReader {
  private readonly buf: Buffer;
  private pos: number;
  private limit: number;

  /** Reads `bytes` (not copied; results of `bytesView` point into it). */
  constructor(bytes: Uint8Array) {
    this.buf = Buffer.isBuffer(bytes)
      ? bytes
      : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = 0;
    this.limit = this.buf.length;
  }

  /** Whether the current message has more fields. */
  more(): boolean {
    return this.pos < this.limit;
  }

  /** The next field's tag: field number * 8 + wire type. */
  tag(): number {
    return this.varint();
  }

  varint(): number {
    const buf = this.buf;
    let pos = this.pos;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= this.limit) throw new WireError('truncated varint');
      const byte = buf[pos++]!;
      result += (byte & 0x7f) * scale;
      if (byte < 0x80) {
        if (result > Number.MAX_SAFE_INTEGER) throw new WireError('number past 2^53');
        this.pos = pos;
        return result;
      }
      scale *= 0x80;
    }
    throw new WireError('varint longer than 10 bytes');
  }

  bool(): boolean {
    return this.varint() !== 0;
  }

  double(): number {
    if (this.pos + 8 > this.limit) throw new WireError('truncated double');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  string(): string {
    const length = this.lengthPrefix();
    const value = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return value;
  }

  /** A bytes field as a view into the frame (no copy): for data used and dropped at once. */
  bytesView(): Uint8Array {
    const length = this.lengthPrefix();
    const view = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }

  /**
   * A bytes field copied out of the frame: for data kept (a stored payload must not pin the
   * frame). Unpooled and not zero-filled, as the gateway's own body buffers: no shared slab
   * stays alive behind a small stored payload.
   */
  bytesCopy(): Uint8Array {
    const length = this.lengthPrefix();
    const copy = Buffer.allocUnsafeSlow(length);
    this.buf.copy(copy, 0, this.pos, this.pos + length);
    this.pos += length;
    return copy;
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
        throw new WireError(`unsupported wire type ${wireType}`);
    }
  }

  private lengthPrefix(): number {
    const length = this.varint();
    if (this.pos + length > this.limit) throw new WireError('length past the end of the message');
    return length;
  }

  private advance(bytes: number): void {
    if (this.pos + bytes > this.limit) throw new WireError('truncated field');
    this.pos += bytes;
  }
}
