// Storage recovery: the loop on its own (a fake target on a manual clock), and a member whose
// LevelDB writes fail with ENOSPC (the engine's writeFault hook): the send in flight answers
// 500 operation_unconfirmed, the member recovers in process once the disk does, and every
// acknowledged message is still there.

import { writevSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MqError, type SpoolService } from '@spoolmq/engine';
import { LevelStorageEngine, MemoryNetwork } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, settle, systemClock } from '@spoolmq/protocol';
import { Member } from '../../src/cluster/member.js';
import type { MemberOptions } from '../../src/cluster/member-options.js';
import { type RecoveryEvent, StorageRecovery } from '../../src/cluster/storage-recovery.js';
import { FAST_RAFT, bytes, receiveNow, send, waitFor } from './helpers.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('StorageRecovery', () => {
  it('stops, reopens and starts; retries every retryMs while the disk fails; reports each step', async () => {
    const clock = new ManualClock();
    const calls: string[] = [];
    let reopenFailures = 2;
    const events: RecoveryEvent[] = [];
    const recovery = new StorageRecovery(
      {
        stopGroups: async () => void calls.push('stop'),
        reopenStorage: async () => {
          calls.push('reopen');
          if (reopenFailures-- > 0) throw new Error('ENOSPC: no space left on device');
        },
        startGroups: async () => void calls.push('start'),
      },
      clock,
      (event) => events.push(event),
      500,
    );
    expect(recovery.recovering).toBe(false);
    recovery.trigger('spool:a#1', new Error('raft storage: batch write failed'));
    recovery.trigger('meta', new Error('again')); // while running: one more round at most
    expect(recovery.recovering).toBe(true);
    await settle();
    expect(calls).toEqual(['stop', 'reopen']);
    await clock.advance(499);
    expect(calls).toEqual(['stop', 'reopen']);
    await clock.advance(1);
    await clock.advance(500);
    await recovery.settled();
    // Two failed rounds, one good one, then the extra round asked for by the second trigger.
    expect(calls).toEqual(['stop', 'reopen', 'stop', 'reopen', 'stop', 'reopen', 'start', 'stop', 'reopen', 'start']);
    expect(events.map((e) => e.kind)).toEqual(['started', 'retrying', 'retrying', 'recovered']);
    expect(events[3]).toMatchObject({ kind: 'recovered', attempts: 4, downMs: 1000 });
    expect(recovery.status()).toEqual({ recovering: false, startedTotal: 1, retriesTotal: 2 });
  });

  it('waits retryMs before restarting groups that fail again right after a recovery', async () => {
    const clock = new ManualClock();
    const calls: string[] = [];
    const events: RecoveryEvent[] = [];
    const recovery = new StorageRecovery(
      {
        stopGroups: async () => void calls.push('stop'),
        reopenStorage: async () => void calls.push('reopen'),
        startGroups: async () => void calls.push('start'),
      },
      clock,
      (event) => events.push(event),
      500,
    );
    recovery.trigger('spool:a#1', new Error('payload store: ENOSPC'));
    await recovery.settled();
    expect(calls).toEqual(['stop', 'reopen', 'start']);
    // The replay of a group just started fails on the same medium: a relapse.
    await clock.advance(10);
    recovery.trigger('spool:a#1', new Error('payload store: ENOSPC'));
    await settle();
    expect(calls).toEqual(['stop', 'reopen', 'start']);
    expect(events.map((e) => e.kind)).toEqual(['started', 'recovered', 'started', 'retrying']);
    expect(events[3]).toMatchObject({ kind: 'retrying', attempt: 0 });
    await clock.advance(500);
    await recovery.settled();
    expect(calls).toEqual(['stop', 'reopen', 'start', 'stop', 'reopen', 'start']);
    // A failure long after the last recovery is a new one: its round runs at once.
    await clock.advance(501);
    recovery.trigger('meta', new Error('EIO'));
    await recovery.settled();
    expect(calls).toHaveLength(9);
    expect(recovery.status()).toEqual({ recovering: false, startedTotal: 3, retriesTotal: 1 });
  });

  it('close() ends the retries', async () => {
    const clock = new ManualClock();
    const recovery = new StorageRecovery(
      {
        stopGroups: async () => undefined,
        reopenStorage: async () => {
          throw new Error('EIO');
        },
        startGroups: async () => undefined,
      },
      clock,
    );
    recovery.trigger('meta', new Error('EIO'));
    await settle();
    recovery.close();
    await recovery.settled();
    expect(recovery.recovering).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    recovery.trigger('meta', new Error('EIO')); // closed: nothing starts
    expect(recovery.recovering).toBe(false);
  });
});

const enospc = (): Error =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** A temporary directory, removed after the test. */
async function scratchDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A ready single member (closed after the test), its recovery events and group failures. */
async function soloMember(where: Pick<MemberOptions, 'storage' | 'dataDir' | 'payloadWritev'>) {
  const events: RecoveryEvent[] = [];
  const failures: string[] = [];
  const member = await Member.start({
    id: 'solo',
    peers: { solo: 'in-process:0' },
    transport: new MemoryNetwork().transport('solo'),
    ...where,
    clock: systemClock,
    raft: FAST_RAFT,
    onStorageRecovery: (event) => events.push(event),
    onGroupFailure: (group) => failures.push(group),
  });
  cleanups.push(() => member.close());
  await member.ready();
  return { member, events, failures };
}

/** Receives and acks everything in queue `q` of `default`; the payloads in hex, in order. */
async function drainHex(service: SpoolService): Promise<string[]> {
  const left: string[] = [];
  for (;;) {
    const got = await service.receive('default', 'q', { waitMs: 0 });
    if (got === null) return left;
    left.push(Buffer.from(got.payload).toString('hex'));
    await service.ack('default', got.lease);
  }
}

describe('a member whose disk fills up', () => {
  /** A single member on LevelDB whose batch writes fail with ENOSPC while `disk.full`. */
  async function memberOnFullDisk(written: boolean) {
    const dir = await scratchDir('mq-enospc-');
    const disk = { full: false, faults: 0 };
    const error = enospc();
    const storage = await LevelStorageEngine.open(dir, {
      writeFault: () => {
        if (!disk.full) return null;
        disk.faults++;
        return { error, written };
      },
    });
    cleanups.push(() => storage.close());
    return { ...(await soloMember({ storage })), disk, storage };
  }

  for (const written of [false, true]) {
    it(`answers the send in flight 500 operation_unconfirmed, 503 meanwhile, and recovers without a restart (${written ? 'the failed write reached the disk' : 'it did not'})`, async () => {
      const { member, disk, events, failures, storage } = await memberOnFullDisk(written);
      const service = member.service;
      await service.createQueue('default', 'q', {});
      const acknowledged = [await send(service, 'q', bytes(1)), await send(service, 'q', bytes(2))];
      const first = await receiveNow(service, 'q');
      await service.ack('default', first.lease);
      // Quiet first (the ack's trailing commit-index write is done), so the batch that fails
      // is the next send's entry.
      await waitFor(() => storage.stats().pendingCalls === 0);
      await settle();

      disk.full = true;
      const lost = service.send('default', 'q', { payload: bytes(3), delayMs: 0, wantHandle: false });
      const error = await lost.then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(MqError);
      expect((error as MqError).kind).toBe('operation_unconfirmed');
      await waitFor(() => events.length > 0);
      expect(events[0]).toMatchObject({ kind: 'started' });
      // While the disk is full: 503 (nothing appended), never a dead member.
      const during = await service.send('default', 'q', { payload: bytes(4), delayMs: 0, wantHandle: false })
        .then(() => null, (e: unknown) => e);
      expect((during as MqError).kind).toBe('unavailable');
      expect(service.ready()).toBe(false);
      await waitFor(() => events.some((e) => e.kind === 'retrying'));

      disk.full = false; // space freed
      await waitFor(() => events.some((e) => e.kind === 'recovered'), 20_000);
      expect(failures).toEqual([]); // never reported as a group failure (no process exit)
      await member.ready();
      expect(service.ready()).toBe(true);
      // Every acknowledged message that was not acked is still there; the unconfirmed send is
      // there only if its write reached the disk.
      const left = await drainHex(service);
      expect(left).toEqual(written ? ['02', '03'] : ['02']);
      expect(acknowledged[1]).toBeTypeOf('string');
      const after = await send(service, 'q', bytes(5));
      expect((await receiveNow(service, 'q')).messageId).toBe(after);
      expect(member.status().storageRecovery).toMatchObject({ recovering: false, startedTotal: 1 });
    });
  }
});

describe('a member whose payload writes fail (the volume full under the segment files)', () => {
  it('recovers in process once they succeed again, every acknowledged message intact', async () => {
    const dataDir = await scratchDir('mq-payload-enospc-');
    const disk = { full: false, faults: 0 };
    const payloadWritev = (fd: number, buffers: Uint8Array[], position: number): number => {
      if (!disk.full) return writevSync(fd, buffers, position);
      disk.faults++;
      throw enospc();
    };
    const { member, events, failures } = await soloMember({ dataDir, payloadWritev });
    const service = member.service;
    await service.createQueue('default', 'q', {});
    const acknowledged = [await send(service, 'q', bytes(1)), await send(service, 'q', bytes(2))];
    expect(acknowledged).toHaveLength(2);

    disk.full = true;
    // The entry is in the Raft log (LevelDB) before its payload is written: a 201 is true, and
    // the log applies it again once the group is back.
    const inFlight = await service.send('default', 'q', { payload: bytes(3), delayMs: 0, wantHandle: false })
      .then(() => 'created', (e: unknown) => (e as MqError).kind);
    expect(['created', 'operation_unconfirmed']).toContain(inFlight);
    // The groups started, their replay's appends failed again: a relapse, which waits a retry
    // before the groups start again (before, they restarted about 100 times a second).
    await waitFor(() => events.some((e) => e.kind === 'retrying'));
    expect(events.find((e) => e.kind === 'retrying')).toMatchObject({ attempt: 0 });
    expect(disk.faults).toBeGreaterThan(1);
    const during = await service.send('default', 'q', { payload: bytes(4), delayMs: 0, wantHandle: false })
      .then(() => null, (e: unknown) => e);
    expect((during as MqError).kind).toBe('unavailable');

    disk.full = false;
    await waitFor(() => events.some((e) => e.kind === 'recovered'), 20_000);
    expect(failures).toEqual([]);
    await member.ready();
    const left = await drainHex(service);
    // The unconfirmed send is there only if its entry reached the log; a 201 always is.
    if (inFlight === 'created') expect(left).toEqual(['01', '02', '03']);
    else expect([['01', '02'], ['01', '02', '03']]).toContainEqual(left);
    const after = await send(service, 'q', bytes(5));
    expect((await receiveNow(service, 'q')).messageId).toBe(after);
  });
});
