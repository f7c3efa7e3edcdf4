// The emergency ballast: deleted when the volume has less room than it holds (before storage
// opens), written again through the disk monitor once there is room above where the alarm
// clears. The volume's free space is a fake probe; the file is real.

import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { type BallastEvent, DiskBallast } from '../../src/host/disk-ballast.js';
import { DiskMonitor } from '../../src/host/disk-monitor.js';
import type { DiskSpace } from '../../src/host/disk-watermark.js';

const BALLAST_BYTES = 3 * 1024 * 1024 + 5; // more than one write chunk, not a multiple of it

const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

async function setup(): Promise<{ path: string; free: { bytes: number }; events: string[]; ballast: DiskBallast }> {
  const directory = await mkdtemp(join(tmpdir(), 'mq-ballast-'));
  directories.push(directory);
  const path = join(directory, 'disk-ballast');
  const free = { bytes: 100 * 1024 * 1024 };
  const events: string[] = [];
  const probe = async (): Promise<DiskSpace> => ({ freeBytes: free.bytes, totalBytes: 1024 ** 3 });
  const onEvent = (event: BallastEvent): void => {
    events.push(event.kind === 'restore_failed' ? event.kind : `${event.kind} ${event.bytes}`);
  };
  return { path, free, events, ballast: new DiskBallast(path, BALLAST_BYTES, probe, onEvent) };
}

/** Polls `condition` until it holds (a sample reads the file system: more than microtasks). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const sizeOf = (path: string): Promise<number | null> => stat(path).then((s) => s.size, () => null);

describe('DiskBallast', () => {
  it('is written only with room for it above what must stay free, then kept', async () => {
    const { path, events, ballast } = await setup();
    const keep = 10 * 1024 * 1024;
    expect(await ballast.restoreIfRoom({ freeBytes: keep + BALLAST_BYTES - 1, totalBytes: 0 }, keep)).toBe(false);
    expect(await sizeOf(path)).toBeNull();
    expect(await ballast.restoreIfRoom({ freeBytes: keep + BALLAST_BYTES, totalBytes: 0 }, keep)).toBe(true);
    expect(await sizeOf(path)).toBe(BALLAST_BYTES);
    expect((await stat(path)).blocks * 512).toBeGreaterThanOrEqual(BALLAST_BYTES); // not sparse
    expect(await ballast.restoreIfRoom({ freeBytes: 1024 ** 3, totalBytes: 0 }, keep)).toBe(false);
    expect(events).toEqual([`restored ${BALLAST_BYTES}`]);
  });

  it('is released when the volume has less room than it holds, and only then', async () => {
    const { path, free, events, ballast } = await setup();
    expect(await ballast.releaseIfLow()).toBe(0); // none yet
    await ballast.restoreIfRoom({ freeBytes: 1024 ** 3, totalBytes: 0 }, 0);
    free.bytes = BALLAST_BYTES;
    expect(await ballast.releaseIfLow()).toBe(0);
    expect(await sizeOf(path)).toBe(BALLAST_BYTES);
    free.bytes = 0; // filled to the last byte
    expect(await ballast.releaseIfLow()).toBe(BALLAST_BYTES);
    expect(await sizeOf(path)).toBeNull();
    expect(events).toEqual([`restored ${BALLAST_BYTES}`, `released ${BALLAST_BYTES}`]);
  });

  it('comes back through the disk monitor once free space clears the alarm with room to spare', async () => {
    const { path, free, ballast } = await setup();
    const clock = new ManualClock();
    const reserve = 8 * 1024 * 1024;
    const monitor = new DiskMonitor({
      probe: async () => ({ freeBytes: free.bytes, totalBytes: 1024 ** 3 }),
      clock,
      pollMs: 1000,
      reserveBytes: reserve,
      ballast,
    });
    free.bytes = 0;
    expect(await monitor.releaseBallast()).toBe(0); // nothing to release yet
    await monitor.start();
    await until(() => monitor.status().freeBytes !== null);
    expect(monitor.alarmed).toBe(true);
    expect(await sizeOf(path)).toBeNull(); // never written under the alarm
    // Above where the alarm clears (reserve + 10%), but not with the missing ballast counted.
    const clear = Math.ceil(reserve * 1.1);
    free.bytes = clear + 1024 * 1024;
    await clock.advance(1000);
    await until(() => monitor.status().freeBytes === clear + 1024 * 1024 - BALLAST_BYTES);
    expect(monitor.alarmed).toBe(true);
    expect(await sizeOf(path)).toBeNull();
    free.bytes = clear + BALLAST_BYTES; // room for both: the alarm clears and the ballast returns
    await clock.advance(1000);
    await until(() => !monitor.alarmed);
    free.bytes = 3 * BALLAST_BYTES; // the write takes its room; releaseIfLow waits for it
    await ballast.releaseIfLow();
    expect(await sizeOf(path)).toBe(BALLAST_BYTES);
    await clock.advance(1000);
    await until(() => monitor.status().freeBytes === 3 * BALLAST_BYTES); // nothing missing now
    free.bytes = 1;
    expect(await monitor.releaseBallast()).toBe(BALLAST_BYTES);
    expect(await sizeOf(path)).toBeNull();
    monitor.close();
  });

  it('refuses a size that is not a positive integer', () => {
    const probe = async (): Promise<DiskSpace> => ({ freeBytes: 0, totalBytes: 0 });
    expect(() => new DiskBallast('/nonexistent', 0, probe)).toThrow(/positive integer/);
  });
});
