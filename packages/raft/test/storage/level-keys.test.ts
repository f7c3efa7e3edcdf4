import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { GroupKeys, REGISTRY_END, REGISTRY_START, groupOfRegistryKey } from '../../src/storage/level-keys.js';

describe('GroupKeys', () => {
  it('orders entry keys by index, inside the entry range', () => {
    const keys = new GroupKeys('spool:a');
    const indexes = [0, 1, 255, 256, 2 ** 32 - 1, 2 ** 32, 2 ** 50];
    const encoded = indexes.map((i) => keys.entry(i));
    for (let i = 1; i < encoded.length; i++) expect(Buffer.compare(encoded[i - 1]!, encoded[i]!)).toBe(-1);
    for (const [i, key] of encoded.entries()) {
      expect(keys.entryIndex(key)).toBe(indexes[i]);
      expect(Buffer.compare(keys.entriesStart, key)).toBeLessThanOrEqual(0);
      expect(Buffer.compare(key, keys.entriesEnd)).toBe(-1);
    }
  });

  it('keeps every key of a group out of the ranges of groups whose id extends it', () => {
    const short = new GroupKeys('spool:a');
    const long = new GroupKeys('spool:a:b');
    for (const key of [long.hardState, long.snapshot, long.entry(1), long.entry(2 ** 40)]) {
      const inside = Buffer.compare(short.groupStart, key) <= 0 && Buffer.compare(key, short.groupEnd) < 0;
      expect(inside).toBe(false);
    }
    for (const key of [short.hardState, short.snapshot, short.entry(7)]) {
      expect(Buffer.compare(short.groupStart, key) <= 0 && Buffer.compare(key, short.groupEnd) < 0).toBe(true);
    }
  });

  it('names the group in its registry key and refuses ids with NUL or no bytes', () => {
    const keys = new GroupKeys('meta');
    expect(groupOfRegistryKey(keys.registry)).toBe('meta');
    expect(Buffer.compare(REGISTRY_START, keys.registry) <= 0 && Buffer.compare(keys.registry, REGISTRY_END) < 0).toBe(true);
    expect(() => new GroupKeys('')).toThrow();
    expect(() => new GroupKeys('a\u0000b')).toThrow(/NUL/);
  });
});
