// A small big-endian byte writer and reader for the metadata group's commands and snapshots.
// The engine has its own (not exported); this one carries only what the metadata needs.

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A metadata entry or snapshot that does not decode: a bug or foreign data, never a user error. */
export class MetaCodecError extends Error {
  constructor(message: string) {
    super(`meta codec: ${message}`);
    this.name = 'MetaCodecError';
  }
}

export class MetaWriter {
  private buffer: Uint8Array;
  private view: DataView;
  private length = 0;

  constructor(initialBytes = 256) {
    this.buffer = new Uint8Array(initialBytes);
    this.view = new DataView(this.buffer.buffer);
  }

  u8(value: number): void {
    this.reserve(1);
    this.view.setUint8(this.length, value);
    this.length += 1;
  }

  u16(value: number): void {
    this.reserve(2);
    this.view.setUint16(this.length, value);
    this.length += 2;
  }

  u32(value: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, value);
    this.length += 4;
  }

  f64(value: number): void {
    this.reserve(8);
    this.view.setFloat64(this.length, value);
    this.length += 8;
  }

  /** u16 length, then the bytes (at most 65,535). */
  bytes(value: Uint8Array): void {
    if (value.byteLength > 0xffff) throw new MetaCodecError('byte field over 65535 bytes');
    this.u16(value.byteLength);
    this.reserve(value.byteLength);
    this.buffer.set(value, this.length);
    this.length += value.byteLength;
  }

  /** UTF-8 string as `bytes`. */
  string(value: string): void {
    this.bytes(encoder.encode(value));
  }

  /** u16 count, then each string. */
  strings(values: readonly string[]): void {
    if (values.length > 0xffff) throw new MetaCodecError('list over 65535 items');
    this.u16(values.length);
    for (const value of values) this.string(value);
  }

  finish(): Uint8Array {
    return this.buffer.slice(0, this.length);
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.byteLength) return;
    const grown = new Uint8Array(Math.max(this.buffer.byteLength * 2, this.length + bytes));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    this.view = new DataView(grown.buffer);
  }
}

/**
 * Reads a command (one buffer) or a snapshot (one buffer, or the chunks it is stored or
 * received in). A value that straddles chunks is read from a buffer of the rest of the current
 * chunk and the next ones: at most one value (64 KiB) more than a chunk, never the whole input.
 */
export class MetaReader {
  private data: Uint8Array;
  private view: DataView;
  private offset = 0;
  private readonly rest: Iterator<Uint8Array> | null;

  constructor(input: Uint8Array | Iterable<Uint8Array>) {
    const whole = input instanceof Uint8Array;
    this.rest = whole ? null : input[Symbol.iterator]();
    this.data = whole ? input : new Uint8Array(0);
    this.view = new DataView(this.data.buffer, this.data.byteOffset, this.data.byteLength);
  }

  u8(): number {
    this.need(1);
    return this.view.getUint8(this.offset++);
  }

  u16(): number {
    this.need(2);
    const value = this.view.getUint16(this.offset);
    this.offset += 2;
    return value;
  }

  u32(): number {
    this.need(4);
    const value = this.view.getUint32(this.offset);
    this.offset += 4;
    return value;
  }

  f64(): number {
    this.need(8);
    const value = this.view.getFloat64(this.offset);
    this.offset += 8;
    return value;
  }

  /** A copy of a `bytes` field (the state outlives the entry buffer). */
  bytes(): Uint8Array {
    const length = this.u16();
    this.need(length);
    const value = this.data.slice(this.offset, this.offset + length);
    this.offset += length;
    return value;
  }

  string(): string {
    try {
      return decoder.decode(this.bytes());
    } catch {
      throw new MetaCodecError('string is not UTF-8');
    }
  }

  strings(): string[] {
    const count = this.u16();
    const out: string[] = [];
    for (let i = 0; i < count; i++) out.push(this.string());
    return out;
  }

  /** Throws unless every byte was read. */
  end(): void {
    if (this.offset !== this.data.byteLength || this.nextChunk() !== null) {
      throw new MetaCodecError('trailing bytes');
    }
  }

  private need(bytes: number): void {
    if (this.offset + bytes <= this.data.byteLength) return;
    const parts = [this.data.subarray(this.offset)];
    let have = parts[0]!.byteLength;
    while (have < bytes) {
      const chunk = this.nextChunk();
      if (chunk === null) throw new MetaCodecError('truncated');
      parts.push(chunk);
      have += chunk.byteLength;
    }
    this.data = parts.length === 2 && parts[0]!.byteLength === 0 ? parts[1]! : concat(parts, have);
    this.view = new DataView(this.data.buffer, this.data.byteOffset, this.data.byteLength);
    this.offset = 0;
  }

  /** The next non-empty chunk of a chunked input, or null at its end (or for one buffer). */
  private nextChunk(): Uint8Array | null {
    if (this.rest === null) return null;
    for (;;) {
      const next = this.rest.next();
      if (next.done === true) return null;
      if (next.value.byteLength > 0) return next.value;
    }
  }
}

function concat(parts: readonly Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.byteLength;
  }
  return out;
}
