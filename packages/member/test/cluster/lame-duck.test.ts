// The graceful hand-off of a stopping member (lame duck), in process: the groups it leads move
// to its peers, the spool's leases move with them (their tokens settle on the next primary), a
// rolling restart of every member voids none and redelivers nothing, failure leases of the
// handed-off primary still recover, and an unplanned failover still voids leases as before.

import type { Delivery } from '@spoolmq/engine';
import { NotPrimaryError } from '@spoolmq/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseHeir, handOffGroups } from '../../src/cluster/lame-duck.js';
import { META_GROUP } from '../../src/cluster/meta-replica.js';
import type { Member } from '../../src/cluster/member.js';
import { TestCluster, bytes, expectError, receiveNow, send, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

async function readyCluster(): Promise<TestCluster> {
  const started = await TestCluster.start(['n1', 'n2', 'n3']);
  await Promise.all([...started.members.values()].map((member) => member.ready()));
  return started;
}

function others(c: TestCluster, id: string): string[] {
  return c.ids.filter((other) => other !== id);
}

/**
 * `call` on `primary`, again while it answers that it is the primary but renewing its leader
 * lease (a tick late on a busy machine: 503 notPrimary naming itself), as a gateway would retry.
 */
async function on<T>(primary: Member, call: () => Promise<T>): Promise<T> {
  const deadline = performance.now() + 5_000;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const renewing = error instanceof NotPrimaryError && error.leaderId === primary.id;
      if (!renewing || performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

/** Sends `count` messages to `q` (created with `leaseTimeoutSeconds`) and leases `leased`. */
async function leasesOn(primary: Member, count: number, leased: number): Promise<Delivery[]> {
  await primary.service.createQueue('default', 'q', { leaseTimeoutSeconds: 60, maxRetries: 5 });
  for (let i = 0; i < count; i++) await send(primary.service, 'q', bytes(i));
  const out: Delivery[] = [];
  for (let i = 0; i < leased; i++) out.push(await receiveNow(primary.service, 'q'));
  return out;
}

describe('Member.handOff', () => {
  it('moves the spool with its leases: old tokens settle on the next primary, nothing redelivered', async () => {
    cluster = await readyCluster();
    const old = await cluster.primary();
    const [a, b, c] = await leasesOn(old, 5, 3);
    const before = await old.service.describeSpool('default');
    cluster.clock.set(cluster.clock.nowMs() + 1_000);

    const report = await old.handOff();
    expect(report.complete).toBe(true);
    const spool = report.groups.find((g) => g.group === old.replica('default')!.group);
    expect(spool?.moved).toBe(true);
    expect(old.replica('default')!.isServing()).toBe(false);
    expect(old.service.ready()).toBe(false); // out of rotation while it stops
    const next = await cluster.primary('default', others(cluster, old.id));
    expect(spool?.to).toBe(next.id);
    if (report.groups.some((g) => g.group === META_GROUP)) {
      expect(old.meta.node.isLeader()).toBe(false);
    }
    const refused = await expectError(send(old.service, 'q', bytes(9)), 'unavailable');
    expect(refused).toBeInstanceOf(NotPrimaryError);
    expect(refused).toMatchObject({ leaderId: next.id });

    // The leases of the old primary are the new primary's: pending, not handed out again.
    const after = await on(next, () => next.service.describeSpool('default'));
    expect(after.stats).toMatchObject({ total: 5, pending: 3, visible: 2 });
    // startedAt is the new primary's opening, as after any change of serving member.
    expect(after.stats.startedAtMs).toBeGreaterThan(before.stats.startedAtMs);
    const renewed = await on(next, async () => next.service.renew('default', b!.lease));
    expect(renewed.leaseExpiresAtMs).toBe(cluster.clock.nowMs() + 60_000);
    await on(next, () => next.service.ack('default', a!.lease));
    await on(next, () => next.service.nack('default', b!.lease));
    await on(next, () => next.service.release('default', c!.lease, 0));
    expect((await expectError(next.service.ack('default', a!.lease), 'gone')).details.reason).toBe('settled');
    const rest = [];
    for (let i = 0; i < 4; i++) rest.push(await on(next, () => receiveNow(next.service, 'q')));
    expect(rest.map((d) => d.messageId)).toEqual([b!.messageId, c!.messageId, ...rest.slice(2).map((d) => d.messageId)]);
    expect(rest.map((d) => d.retries)).toEqual([1, 0, 0, 0]);
    expect(new Set([a!.messageId, ...rest.map((d) => d.messageId)]).size).toBe(5);
    expect(await next.service.receive('default', 'q', { waitMs: 0 })).toBeNull();
  });

  it('a rolling restart of every member voids no lease or failure lease taken before it', async () => {
    cluster = await readyCluster();
    const first = await cluster.primary();
    const held = await leasesOn(first, 6, 4);
    await first.service.createQueue('default', 'f', { maxRetries: 0 });
    const failedId = await send(first.service, 'f', bytes(7));
    await first.service.fail('default', (await receiveNow(first.service, 'f')).lease);
    const failure = (await first.service.failureHead('default', 'f'))!.lease;
    const acked = new Set<string>();
    const primaries = [first.id];
    for (const id of [...cluster.ids]) {
      const report = await cluster.member(id).handOff();
      expect(report.complete, JSON.stringify(report)).toBe(true);
      await cluster.stopMember(id);
      const primary = await cluster.primary('default', others(cluster, id));
      primaries.push(primary.id);
      // One lease settles on each primary on the way.
      const delivery = held[acked.size]!;
      await on(primary, () => primary.service.ack('default', delivery.lease));
      acked.add(delivery.messageId);
      await cluster.startMember(id);
      await cluster.member(id).ready();
    }
    const primary = await cluster.primary();
    for (const delivery of held.slice(acked.size)) {
      await on(primary, () => primary.service.ack('default', delivery.lease));
      acked.add(delivery.messageId);
    }
    expect(acked.size).toBe(4);
    // The failure lease taken before the first hand-off recovers after the last.
    await on(primary, () => primary.service.recover('default', { lease: failure }, 0));
    const recovered = await on(primary, () => receiveNow(primary.service, 'f'));
    expect(recovered).toMatchObject({ messageId: failedId, retries: 0 });
    // Only the two messages never leased come out; the queue is then empty.
    const rest = [
      await on(primary, () => receiveNow(primary.service, 'q')),
      await on(primary, () => receiveNow(primary.service, 'q')),
    ];
    expect(rest.every((d) => !acked.has(d.messageId) && d.retries === 0)).toBe(true);
    expect(await primary.service.receive('default', 'q', { waitMs: 0 })).toBeNull();
    expect(new Set(primaries.slice(1)).size).toBeGreaterThan(1); // the spool did move around
  });

  it('an unplanned failover after a hand-off still voids the leases (410 primary_changed)', async () => {
    cluster = await readyCluster();
    const old = await cluster.primary();
    const [a] = await leasesOn(old, 2, 1);
    expect((await old.handOff()).complete).toBe(true);
    const next = await cluster.primary('default', others(cluster, old.id));
    const b = await on(next, () => receiveNow(next.service, 'q')); // the new primary's own lease
    await cluster.stopMember(old.id);
    await (await cluster.startMember(old.id)).ready();
    // The new primary is cut off without a hand-off: whoever takes over voids every lease.
    cluster.network.isolate(next.id);
    const third = await cluster.primary('default', others(cluster, next.id));
    for (const lease of [a!.lease, b.lease]) {
      const gone = await expectError(on(third, () => third.service.ack('default', lease)), 'gone');
      expect(gone.details.reason).toBe('primary_changed');
    }
    const again = [
      await on(third, () => receiveNow(third.service, 'q')),
      await on(third, () => receiveNow(third.service, 'q')),
    ];
    expect(again.map((d) => d.messageId).sort()).toEqual([a!.messageId, b.messageId].sort());
    expect(again.map((d) => d.retries)).toEqual([0, 0]);
    cluster.network.heal();
  });

  it('failure leases taken before a hand-off still recover after it; an unplanned failover voids them', async () => {
    cluster = await readyCluster();
    const old = await cluster.primary();
    const heads = new Map<string, string>();
    for (const queue of ['f', 'g']) {
      await old.service.createQueue('default', queue, { maxRetries: 0 });
      const id = await send(old.service, queue, bytes(1));
      await old.service.fail('default', (await receiveNow(old.service, queue)).lease);
      const head = (await old.service.failureHead('default', queue))!;
      expect(head.messageId).toBe(id);
      heads.set(queue, head.lease);
    }
    expect((await old.handOff()).complete).toBe(true);
    const next = await cluster.primary('default', others(cluster, old.id));
    await on(next, () => next.service.recover('default', { lease: heads.get('f')! }, 0));
    const recovered = await on(next, () => receiveNow(next.service, 'f'));
    expect(recovered.retries).toBe(0);
    const own = (await on(next, () => next.service.failureHead('default', 'g')))!.lease;
    await cluster.stopMember(old.id);
    await (await cluster.startMember(old.id)).ready();
    // The new primary is cut off without a hand-off: whoever takes over voids them all.
    cluster.network.isolate(next.id);
    const third = await cluster.primary('default', others(cluster, next.id));
    for (const lease of [heads.get('g')!, own]) {
      const gone = await expectError(on(third, () => third.service.discard('default', { lease })), 'gone');
      expect(gone.details.reason).toBe('primary_changed');
    }
    // Still failed, and a failure lease of the new primary takes it.
    const fresh = (await on(third, () => third.service.failureHead('default', 'g')))!.lease;
    await on(third, () => third.service.discard('default', { lease: fresh }));
    cluster.network.heal();
  });

  it('a primary that loses its quorum keeps its leases only if it wins the leadership back', async () => {
    cluster = await readyCluster();
    const old = await cluster.primary();
    const [a] = await leasesOn(old, 2, 1);
    const followers = others(cluster, old.id);
    for (const id of followers) await cluster.stopMember(id);
    await waitFor(() => !old.replica('default')!.isServing()); // check-quorum: it steps down
    for (const id of followers) await cluster.startMember(id);
    const next = await cluster.primary();
    if (next.id === old.id) {
      // Nobody served in between: its leases are still its own.
      await on(next, () => next.service.ack('default', a!.lease));
      expect((await on(next, () => receiveNow(next.service, 'q'))).messageId).not.toBe(a!.messageId);
    } else {
      const gone = await expectError(on(next, () => next.service.ack('default', a!.lease)), 'gone');
      expect(gone.details.reason).toBe('primary_changed');
    }
    expect(old.replica('default')!.status().openings).toBe(next.id === old.id ? 2 : 1);
  });

  it('with no peer to take over, reports the groups it still leads', async () => {
    cluster = await TestCluster.start(['solo']);
    const solo = cluster.member('solo');
    await solo.ready();
    await waitFor(() => solo.replica('default')?.isServing() === true);
    const report = await solo.handOff(2_000);
    expect(report.complete).toBe(false);
    expect(report.groups.length).toBeGreaterThanOrEqual(2);
    for (const group of report.groups) {
      expect(group).toMatchObject({ moved: false, to: null, error: 'no up-to-date peer to hand over to' });
    }
  });
});

describe('handOffGroups', () => {
  const progress = (match: number, recentActive = true, state = 'replicate') => ({ match, recentActive, state });

  it('chooses an active, replicating voter: fewest groups given, then most log, then id', () => {
    const node = {
      isLeader: () => true,
      leaderId: () => 'a',
      status: () => ({
        config: { voters: ['a', 'b', 'c', 'd', 'e'] },
        progress: { b: progress(9), c: progress(10), d: progress(12, false), e: progress(12, true, 'probe') },
      }),
    };
    expect(chooseHeir('a', node, new Map(), new Set())).toBe('c');
    expect(chooseHeir('a', node, new Map([['c', 1]]), new Set())).toBe('b');
    expect(chooseHeir('a', node, new Map(), new Set(['c']))).toBe('b');
    expect(chooseHeir('a', node, new Map(), new Set(['b', 'c']))).toBeNull();
  });

  it('tries the next heir when a transfer fails, within the bound', async () => {
    let leader = 'a';
    const tried: string[] = [];
    const group = {
      group: 'g',
      node: {
        isLeader: () => leader === 'a',
        leaderId: () => leader,
        status: () => ({ config: { voters: ['a', 'b', 'c'] }, progress: { b: progress(5), c: progress(5) } }),
      },
      handOver: (to: string) => {
        tried.push(to);
        if (to === 'b') return Promise.reject(new Error('transfer_failed'));
        leader = to;
        return Promise.resolve();
      },
    };
    const report = await handOffGroups('a', [group], 1_000);
    expect(tried).toEqual(['b', 'c']);
    expect(report).toMatchObject({ complete: true, groups: [{ group: 'g', to: 'c', moved: true }] });
  });

  it('gives up at the bound and leaves groups it does not lead alone', async () => {
    const stuck = {
      group: 'stuck',
      node: {
        isLeader: () => true,
        leaderId: () => 'a',
        status: () => ({ config: { voters: ['a', 'b'] }, progress: { b: progress(1) } }),
      },
      handOver: () => new Promise<void>(() => {}),
    };
    const follower = { ...stuck, group: 'follower', node: { ...stuck.node, isLeader: () => false } };
    const report = await handOffGroups('a', [stuck, follower], 50);
    expect(report.complete).toBe(false);
    expect(report.groups).toEqual([{ group: 'stuck', to: null, moved: false, error: 'hand-off bound reached' }]);
  });
});
