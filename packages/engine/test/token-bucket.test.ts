import { describe, expect, it } from 'vitest';
import { TokenBucket } from '../src/token-bucket.js';

describe('TokenBucket', () => {
  it('starts full, then refills one token per interval', () => {
    const bucket = new TokenBucket(100_000, 3, 0); // 10 per second, burst 3
    expect([bucket.tryTake(0), bucket.tryTake(0), bucket.tryTake(0), bucket.tryTake(0)]).toEqual([true, true, true, false]);
    expect(bucket.nextTokenAtMs(0)).toBe(100);
    expect(bucket.tryTake(99)).toBe(false);
    expect(bucket.tryTake(100)).toBe(true);
    expect(bucket.tryTake(100)).toBe(false);
  });

  it('never holds more than burst', () => {
    const bucket = new TokenBucket(10_000, 2, 0);
    bucket.tryTake(0);
    bucket.tryTake(0);
    expect(bucket.hasToken(1_000_000)).toBe(true);
    expect([bucket.tryTake(1_000_000), bucket.tryTake(1_000_000), bucket.tryTake(1_000_000)]).toEqual([true, true, false]);
  });

  it('nextTokenAtMs is now when a token is there, and rounds up sub-millisecond waits', () => {
    const bucket = new TokenBucket(10_500, 1, 0);
    expect(bucket.nextTokenAtMs(5)).toBe(5);
    bucket.tryTake(5);
    expect(bucket.nextTokenAtMs(5)).toBe(16); // 10.5 ms, rounded up
  });

  it('ignores time going backwards', () => {
    const bucket = new TokenBucket(100_000, 1, 1000);
    bucket.tryTake(1000);
    expect(bucket.tryTake(500)).toBe(false);
    expect(bucket.tryTake(1100)).toBe(true);
  });
});
