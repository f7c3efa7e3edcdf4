import { type Command, CodecError, encodeCommand } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import {
  ENTRY_TIME_BYTES,
  encodeBarrier,
  encodeEntry,
  entryCommand,
  entryTimeMs,
  isBarrier,
} from '../../src/cluster/entry-codec.js';

describe('spool entry codec', () => {
  it('carries the entry time and the command', () => {
    const payload = new Uint8Array(256).map((_, i) => i);
    const command: Command = { type: 'send', queueGen: 3, delayMs: 1500, dedupKey: null, payload };
    const atMs = Date.UTC(2026, 10, 21, 10, 0, 0, 123);
    const data = encodeEntry(atMs, command);
    expect(entryTimeMs(data)).toBe(atMs);
    expect(isBarrier(data)).toBe(false);
    expect(entryCommand(data)).toEqual(command);
  });

  it('is the time, then the engine command byte for byte, in one buffer', () => {
    const payload = new Uint8Array(64 * 1024).map((_, i) => i % 251);
    const command: Command = { type: 'send', queueGen: 1, delayMs: 0, dedupKey: null, payload };
    const data = encodeEntry(7, command);
    expect(data.byteLength).toBe(ENTRY_TIME_BYTES + encodeCommand(command).byteLength);
    expect(data.subarray(ENTRY_TIME_BYTES)).toEqual(encodeCommand(command));
    // The payload was written into the entry, not shared with the caller's buffer.
    expect(data.buffer).not.toBe(payload.buffer);
  });

  it('decodes from a view into a larger buffer (a transport frame)', () => {
    const command: Command = { type: 'ack', queueGen: 1, seq: 2 ** 40, gen: 7 };
    const data = encodeEntry(42, command);
    const frame = new Uint8Array(data.byteLength + 10);
    frame.set(data, 5);
    const view = frame.subarray(5, 5 + data.byteLength);
    expect(entryTimeMs(view)).toBe(42);
    expect(entryCommand(view)).toEqual(command);
  });

  it('a barrier is the time alone', () => {
    const data = encodeBarrier(1000);
    expect(data.byteLength).toBe(ENTRY_TIME_BYTES);
    expect(isBarrier(data)).toBe(true);
    expect(entryTimeMs(data)).toBe(1000);
  });

  it('refuses what cannot be an entry', () => {
    expect(() => entryTimeMs(new Uint8Array(7))).toThrow(RangeError);
    expect(() => encodeBarrier(Number.NaN)).toThrow(RangeError);
    expect(() => entryCommand(new Uint8Array(12))).toThrow(CodecError);
  });
});
