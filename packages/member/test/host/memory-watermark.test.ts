import { describe, expect, it } from 'vitest';
import {
  MemoryWatermark,
  clearBytesOf,
  highBytesOf,
} from '../../src/host/memory-watermark.js';

const LIMIT = 1000;

function sample(usedBytes: number) {
  return { usedBytes, limitBytes: LIMIT };
}

describe('MemoryWatermark', () => {
  it('puts the high mark at 80% of the limit and the clear mark 10 points below', () => {
    expect(highBytesOf(LIMIT, 80)).toBe(800);
    expect(clearBytesOf(LIMIT, 80)).toBe(700);
    expect(clearBytesOf(LIMIT, 11)).toBe(10);
  });

  it('lets growth in below the high mark and refuses it with 503 unavailable at it', () => {
    const mark = new MemoryWatermark();
    expect(mark.refuseGrowth()).toBeNull(); // no sample yet: nothing to refuse on
    expect(mark.observe(sample(799))).toBeNull();
    expect(mark.refuseGrowth()).toBeNull();
    expect(mark.observe(sample(800))).toBe('raised');
    const refusal = mark.refuseGrowth();
    expect(refusal?.kind).toBe('unavailable');
    expect(refusal?.status).toBe(503);
    expect(refusal?.details).toMatchObject({
      reason: 'memory_high',
      retryAfterSeconds: 1,
      usedBytes: 800,
      limitBytes: LIMIT,
    });
    expect(refusal?.message).toMatch(/receive, ack and delete still work/);
  });

  it('clears only below the clear mark (hysteresis), and counts raises and refusals', () => {
    const mark = new MemoryWatermark(80);
    expect(mark.observe(sample(900))).toBe('raised');
    mark.refuseGrowth();
    mark.refuseGrowth();
    expect(mark.observe(sample(790))).toBeNull(); // below high, above clear: still refusing
    expect(mark.alarmed).toBe(true);
    expect(mark.observe(sample(700))).toBeNull(); // the clear mark itself is not below it
    expect(mark.observe(sample(699))).toBe('cleared');
    expect(mark.refuseGrowth()).toBeNull();
    expect(mark.observe(sample(750))).toBeNull(); // back between the marks: stays down
    expect(mark.observe(sample(820))).toBe('raised');
    expect(mark.status()).toEqual({
      alarm: true,
      usedBytes: 820,
      limitBytes: LIMIT,
      highPercent: 80,
      highBytes: 800,
      clearBytes: 700,
      raisedTotal: 2,
      refusedTotal: 2,
    });
  });

  it('follows the limit of each sample and takes a configured high mark', () => {
    const mark = new MemoryWatermark(50);
    expect(mark.observe({ usedBytes: 600, limitBytes: 2000 })).toBeNull();
    expect(mark.observe({ usedBytes: 600, limitBytes: 1000 })).toBe('raised');
    expect(mark.status()).toMatchObject({ highBytes: 500, clearBytes: 400 });
  });

  it('reports nulls before the first sample', () => {
    expect(new MemoryWatermark().status()).toMatchObject({
      alarm: false,
      usedBytes: null,
      limitBytes: null,
      highBytes: null,
      clearBytes: null,
      highPercent: 80,
    });
  });

  it('refuses a high mark outside 11-99', () => {
    for (const bad of [0, 10, 100, 80.5, Number.NaN]) {
      expect(() => new MemoryWatermark(bad)).toThrow(/highPercent/);
    }
  });
});
