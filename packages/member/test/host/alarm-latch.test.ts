import { describe, expect, it } from 'vitest';
import { AlarmLatch } from '../../src/host/alarm-latch.js';

describe('AlarmLatch', () => {
  it('raises past the high mark, holds between the marks, clears past the clear mark', () => {
    const latch = new AlarmLatch();
    expect(latch.refuse()).toBe(false);
    expect(latch.update(false, true)).toBeNull();
    expect(latch.update(true, false)).toBe('raised');
    expect(latch.update(true, false)).toBeNull();
    expect(latch.update(false, false)).toBeNull();
    expect(latch.alarmed).toBe(true);
    expect(latch.refuse()).toBe(true);
    expect(latch.update(false, true)).toBe('cleared');
    expect(latch.refuse()).toBe(false);
    expect([latch.raisedTotal, latch.refusedTotal]).toEqual([1, 1]);
  });
});
