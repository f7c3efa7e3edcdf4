// The metadata group's field encodings (commands and snapshots) over the engine's big-endian
// ByteWriter and ByteReader, the project's one binary codec: integers and float64s are the
// engine's; what is the metadata's own is a u16 length before byte fields and UTF-8 strings, and
// u16-counted string lists. Decoding throws MetaCodecError (a CodecError) on malformed input.

import { ByteReader, ByteWriter, ChunkReader, CodecError } from '@spoolmq/engine';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });
const U16_MAX = 0xffff;

/** A metadata entry or snapshot that does not decode: a bug or foreign data, never a user error. */
export class MetaCodecError extends CodecError {
  constructor(message: string) {
    super(message);
    this.message = `meta codec: ${message}`;
    this.name = 'MetaCodecError';
  }
}

export class MetaWriter {
  private readonly out: ByteWriter;

  constructor(initialBytes = 256) {
    this.out = new ByteWriter(initialBytes);
  }

  u8(value: number): void {
    this.out.u8(value);
  }

  u16(value: number): void {
    this.out.u16(value);
  }

  u32(value: number): void {
    this.out.u32(value);
  }

  f64(value: number): void {
    this.out.f64(value);
  }

  /** u16 length, then the bytes (at most 65,535). */
  bytes(value: Uint8Array): void {
    if (value.byteLength > U16_MAX) throw new MetaCodecError('byte field over 65535 bytes');
    this.out.u16(value.byteLength);
    this.out.raw(value);
  }

  /** UTF-8 string as `bytes`. */
  string(value: string): void {
    this.bytes(encoder.encode(value));
  }

  /** u16 count, then each string. */
  strings(values: readonly string[]): void {
    if (values.length > U16_MAX) throw new MetaCodecError('list over 65535 items');
    this.out.u16(values.length);
    for (const value of values) this.string(value);
  }

  /** The bytes written, in a buffer of their own. */
  finish(): Uint8Array {
    return this.out.finish().slice();
  }
}

/**
 * Reads a command (one buffer) or a snapshot (one buffer, or the chunks it is stored or
 * received in). A value that straddles chunks is read from a buffer of the rest of the current
 * chunk and the next ones: at most one value (64 KiB) more than a chunk, never the whole input.
 */
export class MetaReader {
  private readonly input: ByteReader;
  private readonly chunked: boolean;

  constructor(input: Uint8Array | Iterable<Uint8Array>) {
    this.chunked = !(input instanceof Uint8Array);
    this.input = input instanceof Uint8Array ? new ByteReader(input) : new ChunkReader(input);
  }

  u8(): number {
    this.need(1);
    return this.input.u8();
  }

  u16(): number {
    this.need(2);
    return this.input.u16();
  }

  u32(): number {
    this.need(4);
    return this.input.u32();
  }

  f64(): number {
    this.need(8);
    return this.input.f64();
  }

  /** A copy of a `bytes` field (the state outlives the entry buffer). */
  bytes(): Uint8Array {
    const length = this.u16();
    this.need(length);
    return this.input.raw(length).slice();
  }

  string(): string {
    const bytes = this.bytes();
    try {
      return decoder.decode(bytes);
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
    if (this.chunked) {
      try {
        this.input.end();
      } catch {
        throw new MetaCodecError('trailing bytes');
      }
    } else if (this.input.remaining !== 0) {
      throw new MetaCodecError('trailing bytes');
    }
  }

  /** The metadata's own error for a short input, before the engine's reader would throw its own. */
  private need(bytes: number): void {
    if (this.input.remaining >= bytes) return;
    if (!this.chunked) throw new MetaCodecError('truncated');
    // A chunked input holds only the current chunk: ask it for more (it throws at the end).
    try {
      this.input.ensure(bytes);
    } catch {
      throw new MetaCodecError('truncated');
    }
  }
}
