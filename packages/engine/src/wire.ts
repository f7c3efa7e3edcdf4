// The protobuf wire primitives of the two hand-written codecs, the member protocol's
// (@spoolmq/protocol proto-reader/-writer) and Raft's frames (@spoolmq/raft frame-reader/-writer):
// one unsigned varint (base-128, least significant group first) and one reader of fields and
// nested messages. They live here because the engine is the leaf both stand on. Numbers stay JS
// numbers: values up to 2^53, never a Long. No allocation on either side.

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
