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

export class MetaReader {
  private readonly view: DataView;
  private offset = 0;

  constructor(private readonly data: Uint8Array) {
    this.view = new DataView(data.buffer, data.byteOffset, data.byteLength);
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
    if (this.offset !== this.data.byteLength) throw new MetaCodecError('trailing bytes');
  }

  private need(bytes: number): void {
    if (this.offset + bytes > this.data.byteLength) throw new MetaCodecError('truncated');
  }
}
