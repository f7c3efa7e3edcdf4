import { MqError } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { PatternCache } from '../../src/host/patterns.js';

describe('PatternCache', () => {
  it('tests names unanchored and honours anchors', () => {
    const cache = new PatternCache();
    expect(cache.matcher('ob')('jobs')).toBe(true);
    expect(cache.matcher('^ob')('jobs')).toBe(false);
    expect(cache.matcher('^jobs$')('jobs')).toBe(true);
    expect(cache.matcher('^jobs$')('jobs-2')).toBe(false);
    expect(cache.matcher('ob')).toBe(cache.matcher('ob'));
    cache.clear();
  });

  it('refuses patterns RE2 cannot compile with 400 invalid_argument (match)', () => {
    const cache = new PatternCache();
    for (const bad of ['(', '(?=a)', '(a)\\1']) {
      let caught: unknown;
      try {
        cache.matcher(bad);
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(MqError);
      expect((caught as MqError).details).toEqual({ field: 'match' });
    }
  });

  it('evicts beyond its bound and still answers', () => {
    const cache = new PatternCache();
    for (let i = 0; i < 200; i++) expect(cache.matcher(`^q${i}$`)(`q${i}`)).toBe(true);
    expect(cache.matcher('^q0$')('q0')).toBe(true);
    cache.clear();
  });
});
