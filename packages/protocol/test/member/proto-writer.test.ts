import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { ProtoReader, WireError } from '../../src/member/proto-reader.js';
import { ProtoWriter, varintBytes } from '../../src/member/proto-writer.js';

const BOUNDARIES = [
  0, 1, 127, 128, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455, 268_435_456, 2 ** 31 - 1,
  2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 35, 2 ** 42 + 5, 2 ** 49, Number.MAX_SAFE_INTEGER,
];

function referenceVarint(value: number): Uint8Array {
  return protobuf.Writer.create().uint64(value).finish();
}

describe('ProtoWriter and ProtoReader', () => {
  it('encode varints exactly as protobufjs does, and read them back', () => {
    for (const value of BOUNDARIES) {
      const w = new ProtoWriter(1);
      w.varint(value);
      const bytes = w.take();
      expect([...bytes], String(value)).toEqual([...referenceVarint(value)]);
      expect(varintBytes(value)).toBe(bytes.length);
      expect(new ProtoReader(bytes).varint()).toBe(value);
    }
  });

  it('round-trip random safe integers', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (value) => {
        const w = new ProtoWriter(2);
        w.varint(value);
        const bytes = w.take();
        expect([...bytes]).toEqual([...referenceVarint(value)]);
        expect(new ProtoReader(bytes).varint()).toBe(value);
      }),
    );
  });

  it('write canonical length prefixes whatever the size hint, shifting the content', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40_000 }), fc.nat(70_000), (payload, hint) => {
        const w = new ProtoWriter(16);
        const mark = w.begin(5, hint);
        w.bytes(1, payload);
        w.uint(2, 300);
        w.end(mark);
        const mine = w.take();
        const inner = protobuf.Writer.create();
        if (payload.length > 0) inner.uint32((1 << 3) | 2).bytes(payload);
        inner.uint32(2 << 3).uint32(300);
        const innerBytes = inner.finish();
        const reference = protobuf.Writer.create().uint32((5 << 3) | 2).bytes(innerBytes).finish();
        expect(Buffer.compare(mine, Buffer.from(reference))).toBe(0);
      }),
      { numRuns: 60 },
    );
  });

  it('round-trip strings of any unicode, and bytes as views or copies', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.uint8Array({ maxLength: 300 }), (text, bytes) => {
        const w = new ProtoWriter(8);
        w.optionalString(1, text);
        w.optionalBytes(2, bytes);
        w.double(3, -1.5e300);
        const r = new ProtoReader(w.take());
        expect(r.tag()).toBe((1 << 3) | 2);
        expect(r.string()).toBe(text);
        expect(r.tag()).toBe((2 << 3) | 2);
        const copy = r.bytesCopy();
        expect([...copy]).toEqual([...bytes]);
        expect(r.tag()).toBe((3 << 3) | 1);
        expect(r.double()).toBe(-1.5e300);
        expect(r.more()).toBe(false);
      }),
    );
  });

  it('skip fields it does not know, and leave nested messages wherever reading stopped', () => {
    const w = new ProtoWriter();
    const mark = w.begin(1);
    w.uint(1, 7);
    w.string(2, 'unread');
    w.end(mark);
    w.uint(2, 9);
    w.double(3, 1);
    const r = new ProtoReader(w.take());
    r.tag();
    const outer = r.enter();
    expect(r.tag()).toBe(1 << 3);
    expect(r.varint()).toBe(7);
    r.leave(outer);
    expect(r.tag()).toBe(2 << 3);
    expect(r.varint()).toBe(9);
    r.skip(r.tag() & 7);
    expect(r.more()).toBe(false);
  });

  it('refuse truncated input, lengths past the end, and numbers past 2^53', () => {
    expect(() => new ProtoReader(new Uint8Array([0x80])).varint()).toThrow(WireError);
    const short = new ProtoReader(new Uint8Array([0x0a, 0x05, 1, 2]));
    expect(short.tag() & 7).toBe(2);
    expect(() => short.skip(2)).toThrow(WireError);
    const r = new ProtoReader(new Uint8Array([0x05, 1, 2]));
    expect(() => r.string()).toThrow(WireError);
    const huge = protobuf.Writer.create().uint64('18446744073709551615').finish();
    expect(() => new ProtoReader(huge).varint()).toThrow(/2\^53/);
    expect(() => new ProtoReader(new Uint8Array([0x0b])).skip(3)).toThrow(/wire type/);
  });

  it('assert on numbers a varint cannot carry', () => {
    const w = new ProtoWriter();
    expect(() => w.varint(-1)).toThrow();
    expect(() => w.varint(1.5)).toThrow();
    expect(() => w.varint(2 ** 53)).toThrow();
  });
});
