import { describe, expect, it } from 'vitest';
import { CACHE_ENTRY_OVERHEAD_BYTES, PayloadCache } from '../../src/store/payload-cache.js';

const bytes = (n: number): Uint8Array => new Uint8Array(n);
const cost = (n: number): number => n + CACHE_ENTRY_OVERHEAD_BYTES;

describe('PayloadCache', () => {
  it('evicts the least recently used payloads past its byte budget', () => {
    const cache = new PayloadCache(cost(70) * 4 + 10);
    const owner = {};
    for (const location of [1, 2, 3, 4]) cache.put(owner, location, bytes(70));
    expect(cache.get(owner, 1)).toBeDefined(); // 1 is now the most recent
    cache.put(owner, 5, bytes(70)); // five entries exceed the budget: the oldest (2) goes
    expect(cache.get(owner, 2)).toBeUndefined();
    for (const location of [1, 3, 4, 5]) expect(cache.get(owner, location)).toBeDefined();
    expect(cache.byteCount).toBe(cost(70) * 4);
  });

  it('charges each entry its overhead, so small payloads cannot hold the heap past the budget', () => {
    const budget = 64 * 1024;
    const cache = new PayloadCache(budget);
    const owner = {};
    for (let location = 0; location < 10_000; location++) cache.put(owner, location, bytes(16));
    const held = Array.from({ length: 10_000 }, (_, i) => cache.get(owner, i)).filter(Boolean);
    expect(held.length).toBe(Math.floor(budget / cost(16)));
    expect(cache.byteCount).toBeLessThanOrEqual(budget);
  });

  it('copies a small view of a large buffer instead of keeping the whole buffer alive', () => {
    const cache = new PayloadCache(1 << 20);
    const frame = new Uint8Array(600).fill(7); // a small HTTP request holding the payload
    const view = frame.subarray(400, 500);
    cache.put({}, 1, view);
    const owner = {};
    cache.put(owner, 1, view);
    const kept = cache.get(owner, 1)!;
    expect(kept).toEqual(view);
    expect(kept.buffer.byteLength).toBe(100); // its own buffer, not the frame's
    const whole = new Uint8Array(100);
    cache.put(owner, 2, whole);
    expect(cache.get(owner, 2)).toBe(whole); // not a view of anything larger: kept as it is
    const nearly = new Uint8Array(400).subarray(0, 100); // within the slack: kept, charged 400
    cache.put(owner, 3, nearly);
    expect(cache.get(owner, 3)).toBe(nearly);
    expect(cache.byteCount).toBe(cost(100) * 4 + 300); // two owners hold the first view
  });

  it('keeps owners apart and forgets one whole', () => {
    const cache = new PayloadCache(cost(20) * 4);
    const a = {};
    const b = {};
    cache.put(a, 1, bytes(10));
    cache.put(b, 1, bytes(20));
    expect(cache.get(a, 1)!.byteLength).toBe(10);
    cache.dropOwner(a);
    expect(cache.get(a, 1)).toBeUndefined();
    expect(cache.get(b, 1)!.byteLength).toBe(20);
    expect(cache.byteCount).toBe(cost(20));
  });

  it('does not cache a payload larger than a quarter of its budget', () => {
    const cache = new PayloadCache(cost(100) * 4 - 1);
    cache.put({}, 1, bytes(100));
    expect(cache.byteCount).toBe(0);
  });
});
