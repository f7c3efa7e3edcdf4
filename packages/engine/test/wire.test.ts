// The shared protobuf wire primitives: one varint for both codecs (member protocol, Raft frames)
// and the reader base they extend.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  VARINT_BYTES_MAX,
  WIRE_I32,
  WIRE_I64,
  WIRE_LEN,
  WIRE_VARINT,
  WireReader,
  putVarint,
  varintLength,
} from '../src/wire.js';

class TestReader extends WireReader {
  protected wireError(message: string): Error {
    return new Error(`test wire: ${message}`);
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
});
