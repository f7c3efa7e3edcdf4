import { describe, expect, it } from 'vitest';
import { DedupTable, dedupKeyBytes, dedupKeyString } from '../src/dedup-table.js';

const k = (byte: number) => dedupKeyString(new Uint8Array(16).fill(byte));

describe('DedupTable', () => {
  it('answers the original seq while the window is open, -1 after', () => {
    const table = new DedupTable();
    table.record(k(1), 7, 1000);
    expect(table.lookup(k(1), 999)).toBe(7);
    expect(table.lookup(k(1), 1000)).toBe(-1);
    expect(table.lookup(k(2), 0)).toBe(-1);
  });

  it('purge forgets expired keys from the front only', () => {
    const table = new DedupTable();
    table.record(k(1), 1, 100);
    table.record(k(2), 2, 200);
    table.record(k(3), 3, 300);
    expect(table.purge(200)).toBe(2);
    expect(table.size).toBe(1);
    expect(table.entries().map((e) => e.seq)).toEqual([3]);
  });

  it('a key recorded again after expiry survives the purge of its old entry', () => {
    const table = new DedupTable();
    table.record(k(1), 1, 100);
    table.record(k(1), 2, 300);
    expect(table.purge(150)).toBe(0);
    expect(table.lookup(k(1), 150)).toBe(2);
    expect(table.entries()).toEqual([{ key: k(1), seq: 2, expiresAtMs: 300 }]);
  });

  it('refuses expiries out of order (the window is fixed while keys are held)', () => {
    const table = new DedupTable();
    table.record(k(1), 1, 100);
    expect(() => table.record(k(2), 2, 50)).toThrow(/out of order/);
  });

  it('clear forgets everything', () => {
    const table = new DedupTable();
    table.record(k(1), 1, 100);
    table.clear();
    expect(table.size).toBe(0);
    expect(table.lookup(k(1), 0)).toBe(-1);
  });

  it('key strings round-trip every byte value', () => {
    const bytes = new Uint8Array(16).map((_, i) => (i * 17 + 255) & 0xff);
    expect(dedupKeyBytes(dedupKeyString(bytes))).toEqual(bytes);
    expect(() => dedupKeyString(new Uint8Array(15))).toThrow();
  });
});
