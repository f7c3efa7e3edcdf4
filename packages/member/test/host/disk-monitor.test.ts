import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { DiskMonitor, statfsProbe } from '../../src/host/disk-monitor.js';
import type { DiskSpace } from '../../src/host/disk-watermark.js';

/** A probe reporting what the test sets; `fail` makes it reject. */
function fakeProbe(): { probe: () => Promise<DiskSpace>; set: (free: number) => void; fail: (on: boolean) => void } {
  let free = 10_000;
  let failing = false;
  return {
    probe: async () => {
      if (failing) throw new Error('EIO: statfs failed');
      return { freeBytes: free, totalBytes: 100_000 };
    },
    set: (bytes) => (free = bytes),
    fail: (on) => (failing = on),
  };
}

describe('DiskMonitor', () => {
  it('samples at start and every pollMs on the injected clock, and reports each change', async () => {
    const clock = new ManualClock();
    const disk = fakeProbe();
    const changes: string[] = [];
    const monitor = new DiskMonitor({
      probe: disk.probe,
      clock,
      pollMs: 1000,
      reserveBytes: 1000,
      onChange: (change, status) => changes.push(`${change}@${status.freeBytes}`),
    });
    disk.set(500);
    await monitor.start();
    expect(monitor.alarmed).toBe(true); // a member starting on a full volume refuses at once
    expect(monitor.refuseGrowth()?.kind).toBe('storage_full');
    disk.set(2000);
    await clock.advance(999);
    expect(monitor.alarmed).toBe(true);
    await clock.advance(1);
    expect(monitor.alarmed).toBe(false);
    expect(monitor.refuseGrowth()).toBeNull();
    disk.set(10);
    await clock.advance(1000);
    expect(changes).toEqual(['raised@500', 'cleared@2000', 'raised@10']);
    monitor.close();
    expect(clock.pendingTimers).toBe(0);
    disk.set(5000);
    await clock.advance(5000);
    expect(monitor.alarmed).toBe(true); // closed: no more samples
  });

  it('keeps the alarm as it was while the probe fails, and counts the failures', async () => {
    const clock = new ManualClock();
    const disk = fakeProbe();
    const monitor = new DiskMonitor({ probe: disk.probe, clock, pollMs: 100, reserveBytes: 1000 });
    disk.set(10);
    await monitor.start();
    disk.fail(true);
    disk.set(5000);
    await clock.advance(300);
    expect(monitor.alarmed).toBe(true);
    expect(monitor.status()).toMatchObject({ probeErrorsTotal: 3, probeError: 'EIO: statfs failed' });
    disk.fail(false);
    await clock.advance(100);
    expect(monitor.alarmed).toBe(false);
    expect(monitor.status().probeError).toBeNull();
    monitor.close();
  });

  it('rejects a poll interval that is not a positive integer', () => {
    const clock = new ManualClock();
    expect(() => new DiskMonitor({ probe: fakeProbe().probe, clock, pollMs: 0 })).toThrow(/pollMs/);
  });

  it('statfsProbe reads the volume of a real directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mq-statfs-'));
    try {
      const space = await statfsProbe(dir)();
      expect(space.totalBytes).toBeGreaterThan(0);
      expect(space.freeBytes).toBeGreaterThanOrEqual(0);
      expect(space.freeBytes).toBeLessThanOrEqual(space.totalBytes);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
