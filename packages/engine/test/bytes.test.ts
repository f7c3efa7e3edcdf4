import { describe, expect, it } from 'vitest';
import { ByteReader, ByteWriter, CodecError } from '../src/bytes.js';

describe('bytes', () => {
  it('round-trips every field type and grows as needed', () => {
    const writer = new ByteWriter(1);
    writer.u8(255);
    writer.u16(65_535);
    writer.u32(4_294_967_295);
    writer.f64(Number.MAX_SAFE_INTEGER);
    writer.ascii('queue:name-1_');
    writer.bytes(new Uint8Array(1000).fill(7));
    const reader = new ByteReader(writer.finish());
    expect(reader.u8()).toBe(255);
    expect(reader.u16()).toBe(65_535);
    expect(reader.u32()).toBe(4_294_967_295);
    expect(reader.safeInt()).toBe(Number.MAX_SAFE_INTEGER);
    expect(reader.ascii()).toBe('queue:name-1_');
    expect(reader.bytes()).toEqual(new Uint8Array(1000).fill(7));
    reader.end();
  });

  it('skip leaves zero bytes before what follows', () => {
    const writer = new ByteWriter(1);
    writer.skip(8);
    writer.u8(9);
    expect(writer.finish()).toEqual(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 9]));
    expect(() => new ByteWriter().skip(-1)).toThrow();
  });

  it('refuses out-of-range writes', () => {
    const writer = new ByteWriter();
    expect(() => writer.u8(256)).toThrow();
    expect(() => writer.u32(-1)).toThrow();
    expect(() => writer.ascii('é')).toThrow();
  });

  it('throws CodecError on truncated input, trailing bytes and non-integers', () => {
    expect(() => new ByteReader(new Uint8Array(3)).u32()).toThrow(CodecError);
    const reader = new ByteReader(new Uint8Array(2));
    reader.u8();
    expect(() => reader.end()).toThrow(CodecError);
    const writer = new ByteWriter();
    writer.f64(1.5);
    expect(() => new ByteReader(writer.finish()).safeInt()).toThrow(CodecError);
  });
});
