import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { getHeapStatistics } from 'node:v8';
import { MemoryMonitor, oldSpaceLimitOf, v8HeapSampler } from '../../src/host/memory-monitor.js';

/** A heap whose use the test sets, against a limit of 1,000 bytes; counts its samples. */
function fakeHeap() {
  const heap = { usedBytes: 100, samples: 0 };
  const sampler = () => {
    heap.samples++;
    return { usedBytes: heap.usedBytes, limitBytes: 1000 };
  };
  return { heap, sampler };
}

describe('MemoryMonitor', () => {
  it('samples at start, then at most once per pollMs of the clock when asked', async () => {
    const clock = new ManualClock();
    const { heap, sampler } = fakeHeap();
    const changes: string[] = [];
    const monitor = new MemoryMonitor({
      clock,
      sampler,
      pollMs: 100,
      onChange: (change, status) => changes.push(`${change}@${status.usedBytes}`),
    });
    heap.usedBytes = 850;
    monitor.start();
    expect(monitor.alarmed).toBe(true); // a member starting above the mark refuses at once
    expect(monitor.refuseGrowth()?.kind).toBe('unavailable');
    heap.usedBytes = 600;
    await clock.advance(99);
    expect(monitor.refuseGrowth()?.kind).toBe('unavailable'); // not due: the last sample holds
    expect(heap.samples).toBe(1);
    await clock.advance(1);
    expect(monitor.refuseGrowth()).toBeNull();
    expect(heap.samples).toBe(2);
    heap.usedBytes = 990;
    await clock.advance(100);
    expect(monitor.status()).toMatchObject({ raisedTotal: 2, refusedTotal: 2, alarm: true });
    expect(changes).toEqual(['raised@850', 'cleared@600', 'raised@990']);
  });

  it('runs no timer: an idle member changes state only when looked at', async () => {
    const clock = new ManualClock();
    const { heap, sampler } = fakeHeap();
    const monitor = new MemoryMonitor({ clock, sampler, pollMs: 10, highPercent: 50 });
    monitor.start();
    heap.usedBytes = 900;
    await clock.advance(1000);
    expect(heap.samples).toBe(1);
    expect(monitor.alarmed).toBe(false);
    expect(monitor.status().alarm).toBe(true); // reading the status samples
  });

  it('refuses a poll interval that is not a positive integer', () => {
    const clock = new ManualClock();
    expect(() => new MemoryMonitor({ clock, pollMs: 0 })).toThrow(/pollMs/);
  });

  it('reads the real V8 heap by default, against the old space\'s limit', () => {
    const sample = v8HeapSampler();
    expect(sample.usedBytes).toBeGreaterThan(0);
    expect(sample.limitBytes).toBeGreaterThan(sample.usedBytes);
    expect(sample.limitBytes).toBe(oldSpaceLimitOf(getHeapStatistics().heap_size_limit));
  });

  it('watches major collections of the real heap until closed', () => {
    const monitor = new MemoryMonitor({ clock: new ManualClock() });
    monitor.start();
    monitor.start(); // one observer, not two
    expect(monitor.status().usedBytes).toBeGreaterThan(0);
    monitor.close();
    monitor.close();
  });

  it('takes the young generation off the heap limit (--max-old-space-size=96: 144 MiB)', () => {
    const MiB = 1024 ** 2;
    expect(oldSpaceLimitOf(144 * MiB)).toBe(96 * MiB);
    expect(oldSpaceLimitOf(4144 * MiB)).toBe(4096 * MiB);
    expect(oldSpaceLimitOf(96 * MiB)).toBe(48 * MiB); // --max-old-space-size=48
    expect(oldSpaceLimitOf(60 * MiB)).toBe(30 * MiB); // a smaller build: at most half
  });
});
