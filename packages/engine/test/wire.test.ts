// The shared protobuf wire primitives: one varint for both codecs (member protocol, Raft frames)
// and the reader and writer bases they extend.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  VARINT_BYTES_MAX,
  WIRE_I32,
  WIRE_I64,
  WIRE_LEN,
  WIRE_VARINT,
  WireReader,
  WireWriter,
  putVarint,
  varintLength,
} from '../src/wire.js';

class TestReader extends WireReader {
  protected wireError(message: string): Error {
    return new Error(`test wire: ${message}`);
  }
}

/**
 * Starts at one byte and grows by exactly what is asked: a write the base did not reserve room
 * for would fall off the end (typed arrays drop it), and the bytes would not match. UTF-8
 * through TextEncoder (the engine has no Buffer).
 */
class TestWriter extends WireWriter {
  private readonly encoder = new TextEncoder();

  constructor() {
    super(new Uint8Array(1));
  }

  written(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  protected grow(bytes: number): void {
    const grown = new Uint8Array(this.pos + bytes);
    grown.set(this.buf.subarray(0, this.pos));
    this.buf = grown;
  }

  protected utf8Length(value: string): number {
    return this.encoder.encode(value).length;
  }

  protected putUtf8(value: string, length: number): void {
    this.encoder.encodeInto(value, this.buf.subarray(this.pos, this.pos + length));
  }
}

function encode(value: number): Uint8Array {
  const buf = new Uint8Array(VARINT_BYTES_MAX);
  return buf.subarray(0, putVarint(buf, 0, value));
}

describe('wire primitives', () => {
  it('round-trip every boundary of the varint, with the length it announces', () => {
    const values = [0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x1fffff, 0x200000, 0xfffffff, 0x10000000];
    values.push(0x7fffffff, 0x80000000, 0xffffffff, 2 ** 32, 2 ** 49 - 1, 2 ** 49);
    values.push(Number.MAX_SAFE_INTEGER);
    for (const value of values) {
      const bytes = encode(value);
      expect(bytes.length, String(value)).toBe(varintLength(value));
      const reader = new TestReader(bytes);
      expect(reader.varint()).toBe(value);
      expect(reader.more()).toBe(false);
    }
    expect([...encode(300)]).toEqual([0xac, 0x02]); // the protobuf documentation's example
  });

  it('round-trip any safe integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (value) => {
        const bytes = encode(value);
        return bytes.length === varintLength(value) && new TestReader(bytes).varint() === value;
      }),
    );
  });

  it('refuse truncated, overlong and out-of-range varints with the reader own error', () => {
    expect(() => new TestReader(Uint8Array.from([0x80])).varint()).toThrow(/test wire: truncated/);
    const overlong = new Uint8Array(11).fill(0x80);
    expect(() => new TestReader(overlong).varint()).toThrow(/longer than 10 bytes/);
    const past = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(() => new TestReader(past).varint()).toThrow(/out of range \(past 2\^53\)/);
  });

  it('enter and leave nested messages, skip every wire type, refuse a length past the end', () => {
    // field 1 LEN [field 2 varint 5, field 3 I64, field 4 I32], then field 5 varint 7
    const bytes = Uint8Array.from([
      (1 << 3) | WIRE_LEN, 16,
      (2 << 3) | WIRE_VARINT, 5,
      (3 << 3) | WIRE_I64, 1, 2, 3, 4, 5, 6, 7, 8,
      (4 << 3) | WIRE_I32, 1, 2, 3, 4,
      (5 << 3) | WIRE_VARINT, 7,
    ]);
    const reader = new TestReader(bytes);
    expect(reader.varint()).toBe((1 << 3) | WIRE_LEN);
    const outer = reader.enter();
    expect(reader.varint()).toBe((2 << 3) | WIRE_VARINT);
    expect(reader.varint()).toBe(5);
    reader.leave(outer); // skips what was not read of the nested message
    expect(reader.varint()).toBe((5 << 3) | WIRE_VARINT);
    const skipping = new TestReader(bytes.subarray(2, 18));
    for (const wireType of [WIRE_VARINT, WIRE_I64, WIRE_I32]) {
      expect(skipping.varint() & 7).toBe(wireType);
      skipping.skip(wireType);
    }
    expect(skipping.more()).toBe(false);
    expect(() => new TestReader(Uint8Array.from([3])).skip(3)).toThrow(/unknown wire type 3/);
    expect(() => new TestReader(Uint8Array.from([5, 1])).enter()).toThrow(/past the end/);
    expect(() => new TestReader(Uint8Array.from([1])).skip(WIRE_I64)).toThrow(/truncated field/);
  });

  it('write fields with their tags, leaving proto3 defaults out unless told to write them', () => {
    const w = new TestWriter();
    w.uint(1, 0);
    w.bool(2, false);
    w.string(3, '');
    w.bytes(4, new Uint8Array(0));
    expect(w.length).toBe(0);
    w.uint(1, 300);
    w.bool(2, true);
    w.string(3, 'é');
    w.bytes(4, Uint8Array.from([9, 8]));
    w.stringAlways(5, '');
    w.bytesAlways(6, new Uint8Array(0));
    w.tag(17, WIRE_VARINT);
    w.varint(1);
    expect([...w.written()]).toEqual([
      (1 << 3) | WIRE_VARINT, 0xac, 0x02,
      (2 << 3) | WIRE_VARINT, 1,
      (3 << 3) | WIRE_LEN, 2, 0xc3, 0xa9,
      (4 << 3) | WIRE_LEN, 2, 9, 8,
      (5 << 3) | WIRE_LEN, 0,
      (6 << 3) | WIRE_LEN, 0,
      0x88, 0x01, 1, // field 17 takes a two-byte tag
    ]);
    expect(w.length).toBe(20);
  });

  it('assert on numbers a varint cannot carry, writing nothing', () => {
    const w = new TestWriter();
    for (const value of [-1, 1.5, 2 ** 53, Number.NaN]) {
      expect(() => w.varint(value)).toThrow(/non-negative safe integer/);
      expect(() => w.uint(1, value)).toThrow(/non-negative safe integer/);
    }
    expect(w.length).toBe(0);
  });

  it('write strings of any unicode as UTF-8 and bytes as they are, each behind its length', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.string({ unit: 'grapheme', maxLength: 50 }),
        fc.uint8Array({ maxLength: 200 }),
        (value, text, bytes) => {
          const w = new TestWriter();
          w.uint(1, value);
          w.stringAlways(2, text);
          w.bytesAlways(3, bytes);
          const textBytes = encoder.encode(text);
          const expected = [
            (1 << 3) | WIRE_VARINT, ...encode(value),
            (2 << 3) | WIRE_LEN, ...encode(textBytes.length), ...textBytes,
            (3 << 3) | WIRE_LEN, ...encode(bytes.length), ...bytes,
          ];
          expect([...w.written()]).toEqual(expected);
          const r = new TestReader(w.written());
          for (const wireType of [WIRE_VARINT, WIRE_LEN, WIRE_LEN]) {
            expect(r.varint() & 7).toBe(wireType);
            r.skip(wireType);
          }
          expect(r.more()).toBe(false);
        },
      ),
    );
  });
});
