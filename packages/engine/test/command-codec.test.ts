import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CodecError } from '../src/bytes.js';
import { decodeCommand, encodeCommand } from '../src/command-codec.js';
import type { Command } from '../src/commands.js';
import { resolvePlan } from '../src/plan.js';

const u32 = fc.integer({ min: 0, max: 0xffff_ffff });
const seq = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });
const delay = fc.integer({ min: 0, max: 604_800_000 });
const payload = fc.uint8Array({ maxLength: 300 });
const dedupKey = fc.option(fc.uint8Array({ minLength: 16, maxLength: 16 }), { nil: null });
const name = fc.stringMatching(/^[A-Za-z0-9_:-]{1,63}$/);
const settings = fc.record({
  leaseTimeoutSeconds: fc.integer({ min: 0, max: 31_536_000 }),
  maxRetries: fc.integer({ min: 0, max: 65_535 }),
  dedupWindowSeconds: fc.integer({ min: 0, max: 300 }),
  retentionSeconds: fc.integer({ min: 0, max: 1_209_600 }),
  rateIntervalMicros: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  rateBurst: fc.integer({ min: 0, max: 2_147_483_647 }),
});
const patch = fc.record(
  {
    leaseTimeoutSeconds: fc.integer({ min: 0, max: 31_536_000 }),
    maxRetries: fc.integer({ min: 0, max: 65_535 }),
    dedupWindowSeconds: fc.integer({ min: 0, max: 300 }),
    retentionSeconds: fc.integer({ min: 0, max: 1_209_600 }),
    recvRateLimit: fc.option(fc.record({ intervalMicros: fc.integer({ min: 10_000, max: 2 ** 40 }), burst: fc.integer({ min: 1, max: 2_147_483_647 }) }), { nil: null }),
  },
  { requiredKeys: [] },
);
const ref = { queueGen: u32, seq, gen: u32 };
const cap = fc.integer({ min: 1, max: 2 ** 40 });
const plan = fc
  .record({
    queuesPerSpoolMax: cap,
    retentionLimitSeconds: fc.integer({ min: 0, max: 2 ** 31 }),
    retentionDefaultSeconds: fc.integer({ min: 0, max: 2 ** 31 }),
    messagesPerSpoolMax: cap,
    payloadBytesPerSpoolMax: fc.integer({ min: 2 ** 40, max: 2 ** 41 }),
    messageSizeMaxBytes: cap,
    dedupKeysPerSpoolMax: cap,
  })
  .map((fields) => resolvePlan(fields));

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ type: fc.constant('setPlan' as const), plan, version: fc.integer({ min: 0, max: 2 ** 40 }) }),
  fc.record({ type: fc.constant('createQueue' as const), name, settings }),
  fc.record({ type: fc.constant('updateQueue' as const), queueGen: u32, change: patch }),
  fc.record({ type: fc.constant('deleteQueue' as const), queueGen: u32, mode: fc.constantFrom('force' as const, 'drain' as const) }),
  fc.record({ type: fc.constant('send' as const), queueGen: u32, delayMs: delay, dedupKey, payload }),
  fc.record({ type: fc.constantFrom('ack' as const, 'nack' as const, 'fail' as const, 'discard' as const), ...ref }),
  fc.record({ type: fc.constantFrom('release' as const, 'recover' as const), ...ref, delayMs: delay }),
  fc.record({ type: fc.constant('ackAndSend' as const), ...ref, targetGen: u32, delayMs: delay, dedupKey, payload }),
  fc.array(fc.tuple(seq, u32), { maxLength: 50 }).chain((pairs) =>
    fc.record({
      type: fc.constant('expire' as const),
      queueGen: u32,
      seqs: fc.constant(pairs.map((p) => p[0])),
      gens: fc.constant(pairs.map((p) => p[1])),
    }),
  ),
);

describe('command codec', () => {
  it('round-trips every command (property)', () => {
    fc.assert(
      fc.property(command, (original) => {
        const decoded = decodeCommand(encodeCommand(original));
        expect(decoded).toEqual(original);
      }),
      { numRuns: 500 },
    );
  });

  it('after headroom, encodes the same bytes (property)', () => {
    fc.assert(
      fc.property(command, fc.integer({ min: 0, max: 16 }), (original, headroom) => {
        const bytes = encodeCommand(original, headroom);
        const plain = encodeCommand(original);
        expect(bytes.byteLength).toBe(headroom + plain.byteLength);
        expect(bytes.subarray(0, headroom)).toEqual(new Uint8Array(headroom));
        expect(bytes.subarray(headroom)).toEqual(plain);
      }),
      { numRuns: 200 },
    );
    // A send is sized exactly: its payload is written once, into a buffer of its own.
    const payload = new Uint8Array(65_536);
    const send = encodeCommand({ type: 'send', queueGen: 1, delayMs: 0, dedupKey: null, payload }, 8);
    expect(send.buffer.byteLength).toBe(send.byteLength);
  });

  it('is compact: a send is its payload plus a small fixed header', () => {
    const bytes = encodeCommand({ type: 'send', queueGen: 1, delayMs: 0, dedupKey: null, payload: new Uint8Array(128) });
    expect(bytes.byteLength).toBe(2 + 4 + 4 + 1 + 4 + 128);
    const ack = encodeCommand({ type: 'ack', queueGen: 1, seq: 2, gen: 3 });
    expect(ack.byteLength).toBe(18);
  });

  it('decoded payloads are views of the input (no copy)', () => {
    const bytes = encodeCommand({ type: 'send', queueGen: 1, delayMs: 0, dedupKey: null, payload: new Uint8Array([9, 9]) });
    const decoded = decodeCommand(bytes);
    if (decoded.type !== 'send') throw new Error('wrong type');
    expect(decoded.payload.buffer).toBe(bytes.buffer);
  });

  it('refuses truncated input, trailing bytes, unknown versions and types (CodecError)', () => {
    const bytes = encodeCommand({ type: 'nack', queueGen: 1, seq: 2, gen: 3 });
    for (let cut = 0; cut < bytes.length; cut++) expect(() => decodeCommand(bytes.subarray(0, cut))).toThrow(CodecError);
    expect(() => decodeCommand(new Uint8Array([...bytes, 0]))).toThrow(CodecError);
    expect(() => decodeCommand(new Uint8Array([2, ...bytes.subarray(1)]))).toThrow(/format/);
    expect(() => decodeCommand(new Uint8Array([1, 99]))).toThrow(/type/);
    expect(() => encodeCommand({ type: 'send', queueGen: 1, delayMs: 0, dedupKey: new Uint8Array(3), payload: new Uint8Array() })).toThrow(CodecError);
  });
});
