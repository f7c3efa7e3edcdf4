// A spool's replicas across members: failover to a new primary, what time changes (lease
// timeouts, retention expiry) reaching followers, and snapshots bringing a lagging follower back.

import type { Queue } from '@spoolmq/engine';
import { NotPrimaryError } from '@spoolmq/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { type Member } from '../../src/cluster/member.js';
import { parseSpoolGroup, spoolGroup } from '../../src/cluster/spool-replica.js';
import { FAST_RAFT, TestCluster, bytes, expectError, receiveNow, send, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

async function readyCluster(options: Parameters<typeof TestCluster.start>[1] = {}): Promise<TestCluster> {
  const started = await TestCluster.start(['n1', 'n2', 'n3'], options);
  await Promise.all([...started.members.values()].map((member) => member.ready()));
  return started;
}

/** `check` holds for queue `q` of the default spool on every member. */
function everyReplica(check: (queue: Queue) => boolean): boolean {
  return [...cluster!.members.values()].every((member) => {
    const queue = member.replica('default')!.engine.queue('q');
    return queue !== undefined && check(queue);
  });
}

function others(c: TestCluster, member: Member): string[] {
  return c.ids.filter((id) => id !== member.id);
}

describe('spool group ids', () => {
  it('name the spool and its incarnation, and parse back', () => {
    expect(spoolGroup('default', 1)).toBe('spool:default#1');
    for (const [name, gen] of [['default', 1], ['a:b:c', 7], ['x_-', 2 ** 40]] as const) {
      expect(parseSpoolGroup(spoolGroup(name, gen))).toEqual({ name, gen });
    }
    for (const other of ['meta', 'spool:default', 'spool:#1', 'spool:a#0', 'spool:a#x', 'spool:a#1.5']) {
      expect(parseSpoolGroup(other), other).toBeNull();
    }
  });
});

describe('SpoolReplica failover', () => {
  it('only the primary caches payloads; a follower that becomes primary starts caching', async () => {
    cluster = await readyCluster({ level: true, raft: { ...FAST_RAFT, electionTicks: 50 } });
    const cacheBytes = (member: Member) => member.status().bounds!.payloadCacheBytes;
    const old = await cluster.primary();
    await old.service.createQueue('default', 'q', {});
    for (let i = 0; i < 5; i++) await send(old.service, 'q', bytes(i));
    await cluster.converged('default');
    const followers = cluster.ids.filter((id) => id !== old.id);
    expect(cacheBytes(old)).toBeGreaterThan(5 * 100);
    expect(followers.map((id) => cacheBytes(cluster!.member(id)))).toEqual([0, 0]);

    await cluster.stopMember(old.id);
    const next = await cluster.primary('default', followers);
    const id = await send(next.service, 'q', bytes(9));
    expect(cacheBytes(next)).toBeGreaterThan(100);
    for (let i = 0; i < 5; i++) expect((await receiveNow(next.service, 'q')).payload).toEqual(bytes(i));
    expect((await receiveNow(next.service, 'q')).messageId).toBe(id);
  });

  it('a new primary opens: old tokens 410 primary_changed, pending visible again, startedAt moved', async () => {
    cluster = await readyCluster();
    const old = await cluster.primary();
    await old.service.createQueue('default', 'q', { maxRetries: 5 });
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) sent.push(await send(old.service, 'q', bytes(i)));
    const first = await receiveNow(old.service, 'q');
    const second = await receiveNow(old.service, 'q');
    await old.service.nack('default', second.lease); // one retry spent, logged
    const again = await receiveNow(old.service, 'q');
    expect(again.messageId).toBe(second.messageId);
    expect(again.retries).toBe(1);
    const handle = (await old.service.send('default', 'q', { payload: bytes(9), delayMs: 0, wantHandle: true })).handle!;
    sent.push((await old.service.peek('default', handle)).messageId);
    const before = await old.service.describeSpool('default');
    await old.service.createQueue('default', 'idle', {});
    const page = await old.service.listQueues('default', { limit: 1 });
    expect(page.items.map((q) => q.name)).toEqual(['idle']);
    const parked = old.service.receive('default', 'idle', { waitMs: 20_000 }).catch((e: unknown) => e);
    await cluster.converged();

    cluster.clock.set(cluster.clock.nowMs() + 5_000);
    cluster.network.isolate(old.id);
    // Written on the cut-off primary: accepted by Raft, never committed.
    const lost = old.service
      .send('default', 'q', { payload: bytes(99), delayMs: 0, wantHandle: false })
      .then(() => Promise.reject(new Error('the write on a cut-off primary resolved')), (e: unknown) => Promise.reject(e));
    lost.catch(() => undefined); // asserted below, after the failover
    const fresh = await cluster.primary('default', others(cluster, old));
    expect((await expectError(lost, 'operation_unconfirmed')).status).toBe(500);
    await waitFor(() => !old.replica('default')!.isServing());
    expect(await parked).toBeNull(); // the long poll ended when the old primary stepped down

    const after = await fresh.service.describeSpool('default');
    expect(after.stats.startedAtMs).toBe(cluster.clock.nowMs());
    expect(after.stats.startedAtMs).toBeGreaterThan(before.stats.startedAtMs);
    expect(after.stats.total).toBe(5);
    expect(after.stats.pending).toBe(0);
    expect(after.stats.visible).toBe(5);
    expect(after.stats.releasedTotal + after.stats.nackedTotal).toBe(0); // counters restarted

    // Tokens verify on the new primary (shared cluster secret) but belong to an earlier term.
    for (const lease of [first.lease, again.lease]) {
      const gone = await expectError(fresh.service.ack('default', lease), 'gone');
      expect(gone.details.reason).toBe('primary_changed');
    }
    expect((await expectError(fresh.service.peek('default', handle), 'gone')).details.reason).toBe('primary_changed');
    // A listing cursor minted by the old primary resumes on the new one.
    const rest = await fresh.service.listQueues('default', { limit: 10, after: page.next! });
    expect(rest.items.map((q) => q.name)).toEqual(['q']);

    // Every message pending before is visible again, in send order, retries unchanged.
    const redelivered = [];
    for (let i = 0; i < 5; i++) redelivered.push(await receiveNow(fresh.service, 'q'));
    expect(redelivered.map((d) => d.messageId)).toEqual(sent);
    expect(redelivered.map((d) => d.retries)).toEqual([0, 1, 0, 0, 0]);

    // The cut-off member comes back as a follower and converges; the lost write is nowhere.
    cluster.network.heal();
    const snapshot = await cluster.converged();
    expect(snapshot.byteLength).toBeGreaterThan(0);
    expect(old.replica('default')!.engine.queue('q')!.total).toBe(5);
    await waitFor(() => old.replica('default')!.leaderId() === fresh.id);
    const error = await expectError(send(old.service, 'q', bytes(1)), 'unavailable');
    expect(error).toBeInstanceOf(NotPrimaryError);
    expect(error).toMatchObject({ leaderId: fresh.id });
  });

  it('hands out no message without the leader lease', async () => {
    cluster = await readyCluster();
    const old = await cluster.primary();
    await old.service.createQueue('default', 'q', {});
    await send(old.service, 'q', bytes(1));
    cluster.network.isolate(old.id);
    await waitFor(() => !old.replica('default')!.node.hasLeaderLease());
    const refused = await expectError(old.service.receive('default', 'q', { waitMs: 0 }), 'unavailable');
    expect(refused).toBeInstanceOf(NotPrimaryError);
    cluster.network.heal();
    const primary = await cluster.primary();
    expect((await receiveNow(primary.service, 'q')).retries).toBe(0);
  });
});

describe('SpoolReplica time', () => {
  it('lease timeouts and retention expiry proposed by the primary reach followers identically', async () => {
    cluster = await readyCluster();
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', { leaseTimeoutSeconds: 5, maxRetries: 1, retentionSeconds: 60 });
    const id = await send(primary.service, 'q', bytes(1));
    await send(primary.service, 'q', bytes(2));
    const leased = await receiveNow(primary.service, 'q');
    expect(leased.messageId).toBe(id);

    await cluster.clock.advance(5_000); // the lease times out: an automatic nack is logged
    await waitFor(() => everyReplica((queue) => queue.order.find(1)?.retries === 1));
    await cluster.converged();
    await expectError(primary.service.ack('default', leased.lease), 'gone');

    const twice = await receiveNow(primary.service, 'q');
    expect(twice).toMatchObject({ messageId: id, retries: 1 });
    await cluster.clock.advance(5_000); // retries exhausted: failed
    await waitFor(() => everyReplica((queue) => queue.failed === 1));
    await cluster.converged();

    // Retention (60 s): the message never delivered expires 60 s after its send; the failed one
    // 60 s after it failed (failing restarts the clock). The manual clock fires only timers due
    // when it advances, so it advances to each deadline in turn.
    await cluster.clock.advance(50_000);
    await waitFor(() => everyReplica((queue) => queue.total === 1 && queue.failed === 1));
    await cluster.converged();
    await cluster.clock.advance(10_000);
    await waitFor(() => everyReplica((queue) => queue.total === 0));
    await cluster.converged();
    const stats = await primary.service.describeSpool('default');
    expect(stats.stats).toMatchObject({ total: 0, nackedTotal: 2, failedTotal: 1, expiredTotal: 2 });
  });
});

describe('SpoolReplica snapshots', () => {
  it('compacts the log; a lagging follower catches up through InstallSnapshot', async () => {
    cluster = await readyCluster({ raft: { ...FAST_RAFT, snapshotEntries: 20, retainEntries: 5 } });
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const lagging = others(cluster, primary)[0]!;
    cluster.network.isolate(lagging);
    const writes: Promise<string>[] = [];
    for (let i = 0; i < 60; i++) writes.push(send(primary.service, 'q', bytes(i % 256)));
    await Promise.all(writes);
    for (let i = 0; i < 10; i++) {
      const delivery = await receiveNow(primary.service, 'q');
      await primary.service.ack('default', delivery.lease);
    }
    const leader = primary.replica('default')!.status();
    expect(leader.snapshotIndex).toBeGreaterThan(20);
    expect(cluster.member(lagging).replica('default')!.status().appliedIndex).toBeLessThan(leader.snapshotIndex);

    cluster.network.heal();
    await cluster.converged();
    const follower = cluster.member(lagging).replica('default')!;
    expect(follower.status().restores).toBeGreaterThan(0);
    expect(follower.engine.queue('q')!.total).toBe(50);

    // The restarted follower recovers from its stored snapshot and log.
    await cluster.stopMember(lagging);
    const restarted = await cluster.startMember(lagging);
    await restarted.ready();
    await cluster.converged();
    expect(restarted.replica('default')!.engine.queue('q')!.total).toBe(50);
  });
});
