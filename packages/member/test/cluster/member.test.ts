// Members in process: bootstrap, replication to every replica, routing answers, placement,
// status, and restarts from storage (single member over gRPC, and a whole cluster on LevelDB).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type SpoolService, isMqError } from '@spoolmq/engine';
import { NotPrimaryError, ManualClock } from '@spoolmq/protocol';
import { INSECURE_CLUSTER, MemoryStorageEngine } from '@spoolmq/raft';
import { Member } from '../../src/cluster/member.js';
import { FAST_RAFT, TestCluster, bytes, expectError, receiveNow, send, waitFor, waitForAsync } from './helpers.js';

let cluster: TestCluster | null = null;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await cluster?.close();
  cluster = null;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The member leading the metadata group (waits for one). */
async function metaLeader(c: TestCluster): Promise<Member> {
  let found: Member | undefined;
  await waitFor(() => (found = [...c.members.values()].find((m) => m.meta.node.isLeader())) !== undefined);
  return found!;
}

/**
 * Runs `fn` on the current primary of `default`, again (on the primary then) while it answers
 * 503 unavailable: nothing happened, the primary lost its lease for a moment or moved, and a
 * client retries, as the gateway does. Bounded by the primary lookup's own deadline.
 */
async function onPrimary<T>(c: TestCluster, fn: (service: SpoolService) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const primary = await c.primary();
    try {
      return await fn(primary.service);
    } catch (error) {
      if (!isMqError(error) || error.status !== 503 || attempt >= 20) throw error;
    }
  }
}

async function readyCluster(ids: string[], options: Parameters<typeof TestCluster.start>[1] = {}): Promise<TestCluster> {
  const started = await TestCluster.start(ids, options);
  await Promise.all([...started.members.values()].map((member) => member.ready()));
  return started;
}

describe('Member', () => {
  it('replicates sends, receives and acks to every replica', async () => {
    cluster = await readyCluster(['n1', 'n2', 'n3']);
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await send(primary.service, 'q', bytes(i)));
    const first = await receiveNow(primary.service, 'q');
    expect(first.messageId).toBe(ids[0]);
    await primary.service.ack('default', first.lease);
    const second = await receiveNow(primary.service, 'q');
    expect(second.messageId).toBe(ids[1]);
    await cluster.converged();
    for (const member of cluster.members.values()) {
      const queue = member.replica('default')!.engine.queue('q')!;
      // The ack is replicated; the lease of the second delivery lives only on the primary.
      expect(queue.total, member.id).toBe(4);
    }
  });

  it('answers on a follower with 503 notPrimary and the leader hint, nothing appended', async () => {
    cluster = await readyCluster(['n1', 'n2', 'n3']);
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const follower = [...cluster.members.values()].find((m) => m !== primary)!;
    await waitFor(() => follower.replica('default')!.leaderId() === primary.id);
    const error = await expectError(send(follower.service, 'q', bytes(1)), 'unavailable');
    expect(error).toMatchObject({ leaderId: primary.id, replicas: [] });
    expect(error).toBeInstanceOf(NotPrimaryError);
    await expectError(follower.service.describeSpool('default'), 'unavailable');
    await expectError(follower.service.checkTarget('missing'), 'spool_not_found');
    await cluster.converged();
    expect(primary.replica('default')!.engine.queue('q')!.total).toBe(0);
    expect(follower.service.ready()).toBe(true);
  });

  it('initializes the cluster once: every member holds the same secret and the default spool', async () => {
    cluster = await readyCluster(['n1', 'n2', 'n3']);
    const states = [...cluster.members.values()].map((m) => m.meta.state);
    await waitFor(() => states.every((s) => s.secret !== null));
    for (const state of states) {
      expect(Buffer.from(state.secret!).equals(Buffer.from(states[0]!.secret!))).toBe(true);
      expect(state.members).toEqual(['n1', 'n2', 'n3']);
      expect(state.spools.get('default')?.replicas.slice().sort()).toEqual(['n1', 'n2', 'n3']);
      expect(state.spools.get('default')?.gen).toBe(1);
    }
    const status = cluster.member('n1').status();
    expect(status.initialized).toBe(true);
    expect(status.meta.group).toBe('meta');
    expect(status.spools.map((s) => [s.spool, s.group])).toEqual([['default', 'spool:default#1']]);
    expect(status.spools[0]!.commitIndex).toBeGreaterThan(0);
  });

  it('places a new spool on three of four members; the fourth points at them', async () => {
    cluster = await readyCluster(['n1', 'n2', 'n3', 'n4']);
    const leader = await metaLeader(cluster);
    expect(await leader.createSpool('orders')).toEqual({ kind: 'ok' });
    expect(await leader.createSpool('orders')).toEqual({ kind: 'exists' });
    const replicas = leader.meta.state.spools.get('orders')!.replicas;
    expect(replicas).toHaveLength(3);
    const outsider = cluster.ids.find((id) => !replicas.includes(id))!;
    await waitFor(() => cluster!.member(outsider).meta.state.spools.has('orders'));
    const error = await expectError(cluster.member(outsider).service.describeSpool('orders'), 'unavailable');
    expect(error).toBeInstanceOf(NotPrimaryError);
    expect(error).toMatchObject({ leaderId: null, replicas });
    expect(cluster.member(outsider).replica('orders')).toBeUndefined();
    const primary = await cluster.primary('orders', replicas);
    await primary.service.createQueue('orders', 'q', {});
    await send(primary.service, 'q', bytes(7), 'orders');
    await cluster.converged('orders', replicas);
  });

  it('stops the replicas of a deleted spool and drops their storage', async () => {
    cluster = await readyCluster(['n1', 'n2', 'n3']);
    const leader = await metaLeader(cluster);
    await leader.createSpool('tmp');
    const primary = await cluster.primary('tmp');
    await primary.service.createQueue('tmp', 'q', {});
    expect(await leader.meta.propose({ type: 'deleteSpool', name: 'tmp' })).toEqual({ kind: 'ok' });
    await waitFor(() => [...cluster!.members.values()].every((m) => m.replica('tmp') === undefined));
    for (const member of cluster.members.values()) {
      await expectError(member.service.describeSpool('tmp'), 'spool_not_found');
    }
    const gen = leader.meta.state.nextSpoolGen - 1;
    const stored = async (): Promise<string[][]> => Promise.all(cluster!.ids.map((id) => cluster!.storedGroups(id)));
    await waitForAsync(async () => (await stored()).every((groups) => !groups.includes(`spool:tmp#${gen}`)));
    // Created again under the name, it is a new group (a new generation) starting from nothing.
    await leader.createSpool('tmp');
    expect(leader.meta.state.spools.get('tmp')!.gen).toBe(gen + 1);
    const again = await cluster.primary('tmp');
    expect((await again.service.listQueues('tmp', { limit: 10 })).items).toEqual([]);
    expect(again.replica('tmp')!.group).toBe(`spool:tmp#${gen + 1}`);
  });

  it('single member: serves over its own fsync and recovers from LevelDB after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mq-single-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const clock = new ManualClock();
    const options = {
      id: 'solo',
      peers: { solo: '127.0.0.1:0' },
      dataDir: dir,
      clock,
      raft: FAST_RAFT,
      security: INSECURE_CLUSTER,
    };
    let member = await Member.start(options);
    cleanups.push(() => member.close());
    await member.ready();
    expect(member.address).toMatch(/^127\.0\.0\.1:\d+$/);
    await member.service.createQueue('default', 'q', {});
    const sent = [await send(member.service, 'q', bytes(1)), await send(member.service, 'q', bytes(2))];
    const leased = await receiveNow(member.service, 'q');
    await member.service.ack('default', leased.lease);
    // Its memory bounds in its status (and so on /metrics): defaults, and what they hold.
    const bounds = member.status().bounds!;
    expect([bounds.payloadCacheBytesMax, bounds.logBytesMax]).toEqual([2 ** 25, 2 ** 26]);
    expect(bounds.payloadCacheBytes).toBeGreaterThan(256); // the unacked payload, overhead too
    expect(bounds.payloadCacheHits).toBeGreaterThanOrEqual(1); // the receive read from memory
    expect(bounds.logBytes).toBeGreaterThan(2);
    const before = await member.service.describeSpool('default');
    await member.close();

    clock.set(clock.nowMs() + 60_000);
    member = await Member.start(options);
    await member.ready();
    const after = await member.service.describeSpool('default');
    expect(after.stats.total).toBe(1);
    expect(after.stats.startedAtMs).toBeGreaterThan(before.stats.startedAtMs);
    const left = await receiveNow(member.service, 'q');
    expect(left.messageId).toBe(sent[1]);
    // A lease from before the restart belongs to an earlier term.
    const error = await expectError(member.service.ack('default', leased.lease), 'gone');
    expect(error.details.reason).toBe('primary_changed');
  });

  it('restarts a whole cluster from LevelDB: nothing acknowledged is lost', async () => {
    cluster = await readyCluster(['n1', 'n2', 'n3'], { level: true });
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push(await onPrimary(cluster, (service) => send(service, 'q', bytes(i))));
    const acked = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const delivery = await receiveNow(primary.service, 'q');
      await primary.service.ack('default', delivery.lease);
      acked.add(delivery.messageId);
    }
    for (const id of cluster.ids) await cluster.stopMember(id);

    for (const id of cluster.ids) await cluster.startMember(id);
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    const stats = await onPrimary(cluster, (service) => service.spoolStats('default', { limit: 10 }));
    expect(stats.stats.total).toBe(15);
    const received: string[] = [];
    for (let i = 0; i < 15; i++) {
      received.push((await onPrimary(cluster, (service) => receiveNow(service, 'q'))).messageId);
    }
    expect(received).toEqual(sent.filter((id) => !acked.has(id)));
    expect(await onPrimary(cluster, (service) => service.receive('default', 'q', { waitMs: 0 }))).toBeNull();
    // Recovered, not bootstrapped again: the secret survived (tokens keep verifying).
    const secrets = [...cluster.members.values()].map((m) => Buffer.from(m.meta.state.secret!).toString('hex'));
    expect(new Set(secrets).size).toBe(1);
  });

  it('three members over gRPC on loopback: replicate, fail over, keep serving', async () => {
    const ids = ['g1', 'g2', 'g3'];
    const placeholder = Object.fromEntries(ids.map((id) => [id, '127.0.0.1:1']));
    const members: Member[] = [];
    cleanups.push(async () => {
      for (const member of members) await member.close();
    });
    for (const id of ids) {
      const storage = new MemoryStorageEngine();
      cleanups.push(() => storage.close());
      members.push(await Member.start({
          id,
          peers: placeholder,
          listen: '127.0.0.1:0',
          storage,
          raft: FAST_RAFT,
          security: INSECURE_CLUSTER,
        }));
    }
    const peers = Object.fromEntries(members.map((m) => [m.id, m.address!]));
    for (const member of members) member.setPeerAddresses(peers);
    await Promise.all(members.map((m) => m.ready()));
    expect(members.every((m) => m.grpcServer !== null)).toBe(true);
    const servingOf = (): Member[] => members.filter((m) => m.replica('default')?.isServing() === true);
    await waitFor(() => servingOf().length === 1);
    const primary = servingOf()[0]!;
    await primary.service.createQueue('default', 'q', {});
    for (let i = 0; i < 10; i++) await send(primary.service, 'q', bytes(i));
    await waitFor(() => members.every((m) => m.replica('default')!.engine.queue('q')?.total === 10));

    await primary.close();
    const rest = members.filter((m) => m !== primary);
    await waitFor(() => rest.some((m) => m.replica('default')!.isServing()), 20_000);
    const next = rest.find((m) => m.replica('default')!.isServing())!;
    const stats = await next.service.describeSpool('default');
    expect(stats.stats.total).toBe(10);
    await send(next.service, 'q', bytes(10));
  });
});
