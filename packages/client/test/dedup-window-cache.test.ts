import { describe, expect, it } from 'vitest';
import { DEDUP_WINDOW_ENTRIES_MAX, DEDUP_WINDOW_TTL_MS, DedupWindowCache } from '../src/dedup-window-cache.js';

describe('DedupWindowCache', () => {
  it('remembers a window for the TTL, per spool and queue', () => {
    const cache = new DedupWindowCache();
    cache.learn('s', 'q', 30, 1_000);
    expect(cache.get('s', 'q', 1_000)).toBe(30_000);
    expect(cache.get('s', 'q', 1_000 + DEDUP_WINDOW_TTL_MS - 1)).toBe(30_000);
    expect(cache.get('s', 'q', 1_000 + DEDUP_WINDOW_TTL_MS)).toBeUndefined();
    expect(cache.get('t', 'q', 1_000)).toBeUndefined();
    cache.forget('s', 'q');
    expect(cache.get('s', 'q', 1_000)).toBeUndefined();
  });

  it('stays within its bound', () => {
    const cache = new DedupWindowCache();
    for (let i = 0; i <= DEDUP_WINDOW_ENTRIES_MAX; i += 1) cache.learn('s', `q${i}`, 0, 0);
    expect(cache.get('s', `q${DEDUP_WINDOW_ENTRIES_MAX}`, 0)).toBe(0);
    expect(cache.get('s', 'q0', 0)).toBeUndefined();
  });
});
