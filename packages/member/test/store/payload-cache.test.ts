import { describe, expect, it } from 'vitest';
import { PayloadCache } from '../../src/store/payload-cache.js';

const bytes = (n: number): Uint8Array => new Uint8Array(n);

describe('PayloadCache', () => {
  it('evicts the least recently used payloads past its byte budget', () => {
    const cache = new PayloadCache(300);
    const owner = {};
    cache.put(owner, 1, bytes(70));
    cache.put(owner, 2, bytes(70));
    cache.put(owner, 3, bytes(70));
    expect(cache.get(owner, 1)).toBeDefined(); // 1 is now the most recent
    cache.put(owner, 4, bytes(70));
    cache.put(owner, 5, bytes(70)); // 350 > 300: the oldest (2) goes
    expect(cache.get(owner, 2)).toBeUndefined();
    expect(cache.get(owner, 1)).toBeDefined();
    expect(cache.byteCount).toBeLessThanOrEqual(300);
  });

  it('keeps owners apart and forgets one whole', () => {
    const cache = new PayloadCache(1000);
    const a = {};
    const b = {};
    cache.put(a, 1, bytes(10));
    cache.put(b, 1, bytes(20));
    expect(cache.get(a, 1)!.byteLength).toBe(10);
    cache.dropOwner(a);
    expect(cache.get(a, 1)).toBeUndefined();
    expect(cache.get(b, 1)!.byteLength).toBe(20);
    expect(cache.byteCount).toBe(20);
  });

  it('does not cache a payload larger than a quarter of its budget', () => {
    const cache = new PayloadCache(100);
    cache.put({}, 1, bytes(26));
    expect(cache.byteCount).toBe(0);
  });
});
