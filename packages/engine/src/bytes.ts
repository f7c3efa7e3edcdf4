// Little binary writer and reader over Uint8Array (big-endian), used by the command codec and the
// snapshot format. Integers are written with shifts and float64s through one shared scratch
// buffer, so neither side allocates a DataView. The reader throws `CodecError` on truncated or
// malformed input.

import { assert } from './assert.js';

export class CodecError extends Error {
  constructor(message: string) {
    super(`engine codec: ${message}`);
    this.name = 'CodecError';
  }
}

const U32_MAX = 0xffff_ffff;

// Float64 <-> bytes through a scratch buffer; `LITTLE` says whether bytes must be reversed.
const SCRATCH = new Float64Array(1);
const SCRATCH_BYTES = new Uint8Array(SCRATCH.buffer);
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class ByteWriter {
  private buffer: Uint8Array;
  private length = 0;

  /** `capacity`: initial bytes (exact size avoids any copy); the buffer doubles as needed. */
  constructor(capacity = 64) {
    this.buffer = new Uint8Array(Math.max(1, capacity));
  }

  u8(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value <= 0xff, 'u8 out of range');
    this.reserve(1);
    this.buffer[this.length++] = value;
  }

  u16(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value <= 0xffff, 'u16 out of range');
    this.reserve(2);
    this.buffer[this.length++] = value >>> 8;
    this.buffer[this.length++] = value & 0xff;
  }

  u32(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value <= U32_MAX, 'u32 out of range');
    this.reserve(4);
    const buffer = this.buffer;
    buffer[this.length++] = value >>> 24;
    buffer[this.length++] = (value >>> 16) & 0xff;
    buffer[this.length++] = (value >>> 8) & 0xff;
    buffer[this.length++] = value & 0xff;
  }

  /** A float64; used for times and seqs (safe integers) so they survive exactly. */
  f64(value: number): void {
    this.reserve(8);
    SCRATCH[0] = value;
    const buffer = this.buffer;
    if (LITTLE) for (let i = 7; i >= 0; i--) buffer[this.length++] = SCRATCH_BYTES[i]!;
    else for (let i = 0; i < 8; i++) buffer[this.length++] = SCRATCH_BYTES[i]!;
  }

  /** Raw bytes, no length prefix. */
  raw(bytes: Uint8Array): void {
    this.reserve(bytes.byteLength);
    this.buffer.set(bytes, this.length);
    this.length += bytes.byteLength;
  }

  /** u32 length, then the bytes. */
  bytes(bytes: Uint8Array): void {
    this.u32(bytes.byteLength);
    this.raw(bytes);
  }

  /** u8 length, then one byte per char; ASCII only, at most 255 chars. */
  ascii(text: string): void {
    assert(text.length <= 0xff, 'ascii string too long');
    this.u8(text.length);
    this.reserve(text.length);
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      assert(code < 0x80, 'ascii string has a non-ASCII char');
      this.buffer[this.length++] = code;
    }
  }

  /** `count` bytes left as they are (zeros in a fresh writer) for the caller to fill later. */
  skip(count: number): void {
    assert(Number.isInteger(count) && count >= 0, 'skip count out of range');
    this.reserve(count);
    this.length += count;
  }

  /** The bytes written (the internal buffer or a view of it; the writer must not be reused). */
  finish(): Uint8Array {
    const { buffer, length } = this;
    return length === buffer.byteLength ? buffer : buffer.subarray(0, length);
  }

  private reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buffer.byteLength) return;
    let capacity = this.buffer.byteLength * 2;
    while (capacity < needed) capacity *= 2;
    const next = new Uint8Array(capacity);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
  }
}

export class ByteReader {
  protected offset = 0;

  constructor(protected buffer: Uint8Array) {}

  get remaining(): number {
    return this.buffer.byteLength - this.offset;
  }

  u8(): number {
    this.need(1);
    return this.buffer[this.offset++]!;
  }

  u16(): number {
    this.need(2);
    const buffer = this.buffer;
    return (buffer[this.offset++]! << 8) | buffer[this.offset++]!;
  }

  u32(): number {
    this.need(4);
    const buffer = this.buffer;
    const at = this.offset;
    const low = (buffer[at + 1]! << 16) | (buffer[at + 2]! << 8) | buffer[at + 3]!;
    const value = buffer[at]! * 0x100_0000 + low;
    this.offset += 4;
    return value;
  }

  f64(): number {
    this.need(8);
    const buffer = this.buffer;
    if (LITTLE) for (let i = 7; i >= 0; i--) SCRATCH_BYTES[i] = buffer[this.offset++]!;
    else for (let i = 0; i < 8; i++) SCRATCH_BYTES[i] = buffer[this.offset++]!;
    return SCRATCH[0]!;
  }

  /** A safe integer stored as float64 (seqs, times). */
  safeInt(): number {
    const value = this.f64();
    if (!Number.isSafeInteger(value)) throw new CodecError('expected an integer');
    return value;
  }

  /** `length` raw bytes, as a view of the input (no copy). */
  raw(length: number): Uint8Array {
    this.need(length);
    const out = this.buffer.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  /** u32 length, then the bytes (a view of the input). */
  bytes(): Uint8Array {
    return this.raw(this.u32());
  }

  ascii(): string {
    const bytes = this.raw(this.u8());
    let text = '';
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i]! >= 0x80) throw new CodecError('non-ASCII string');
      text += String.fromCharCode(bytes[i]!);
    }
    return text;
  }

  /** Throws unless every byte was consumed. */
  end(): void {
    if (this.offset !== this.buffer.byteLength) throw new CodecError('trailing bytes');
  }

  /** Makes at least `length` more bytes readable, or throws CodecError (truncated input). */
  ensure(length: number): void {
    this.need(length);
  }

  private need(length: number): void {
    if (this.offset + length > this.buffer.byteLength) this.fill(length);
  }

  /**
   * Makes `buffer` hold at least `length` bytes from `offset` on, or throws: the whole input is
   * in `buffer` here (ChunkReader brings in the next chunks).
   */
  protected fill(length: number): void {
    void length;
    throw new CodecError('truncated input');
  }
}

/**
 * A ByteReader over input that arrives as a sequence of chunks (a snapshot read from a file a
 * chunk at a time), so decoding never needs the whole input in one buffer. A value that
 * straddles chunks is read from a new buffer holding the rest of the current chunk and as many
 * next chunks as it needs: at most one value plus one chunk more than the input's largest
 * chunk. Views returned by `raw` stay valid (buffers are never reused). `remaining` counts the
 * current buffer only (the total is unknown until the last chunk).
 */
export class ChunkReader extends ByteReader {
  private readonly chunks: Iterator<Uint8Array>;

  constructor(chunks: Iterable<Uint8Array>) {
    super(new Uint8Array(0));
    this.chunks = chunks[Symbol.iterator]();
  }

  /** Throws unless every byte of every chunk was consumed. */
  override end(): void {
    super.end();
    if (this.nextChunk() !== null) throw new CodecError('trailing bytes');
  }

  protected override fill(length: number): void {
    const parts = [this.buffer.subarray(this.offset)];
    let have = parts[0]!.byteLength;
    while (have < length) {
      const chunk = this.nextChunk();
      if (chunk === null) throw new CodecError('truncated input');
      parts.push(chunk);
      have += chunk.byteLength;
    }
    const aligned = parts.length === 2 && parts[0]!.byteLength === 0;
    this.buffer = aligned ? parts[1]! : concat(parts, have);
    this.offset = 0;
  }

  /** The next non-empty chunk, or null at the end of the input. */
  private nextChunk(): Uint8Array | null {
    for (;;) {
      const next = this.chunks.next();
      if (next.done === true) return null;
      if (next.value.byteLength > 0) return next.value;
    }
  }
}

function concat(parts: readonly Uint8Array[], total: number): Uint8Array {
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
