// Replica moves: the pure next-step rule, then in-process clusters moving a spool's replicas
// while sends run (member removal, the spool's primary removed, move-replica, no spare member,
// the driver and the metadata leader closed halfway).

import { afterEach, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { nextMoveStep } from '../../src/cluster/replica-mover.js';
import type { Member } from '../../src/cluster/member.js';
import { spoolGroup } from '../../src/cluster/spool-replica.js';
import { TestCluster, expectError, waitFor } from './helpers.js';

const SPOOL = 'acme/default';
const QUEUE = 'jobs';

let cluster: TestCluster | null = null;
let sender: Sender | null = null;

afterEach(async () => {
  await sender?.stop();
  sender = null;
  await cluster?.close();
  cluster = null;
});

describe('nextMoveStep', () => {
  const config = (voters: string[], learners: string[] = []) => ({ voters, learners });

  it('adds the new voter, then removes the old one, then finishes', () => {
    const move = { from: 'n2', to: 'n4' };
    expect(nextMoveStep(move, config(['n1', 'n2', 'n3']), 'n1')).toEqual({ kind: 'addVoter', id: 'n4' });
    expect(nextMoveStep(move, config(['n1', 'n2', 'n3'], ['n4']), 'n1')).toEqual({ kind: 'addVoter', id: 'n4' });
    expect(nextMoveStep(move, config(['n1', 'n2', 'n3', 'n4']), 'n1')).toEqual({ kind: 'remove', id: 'n2' });
    expect(nextMoveStep(move, config(['n1', 'n3', 'n4']), 'n1')).toEqual({ kind: 'finish' });
  });

  it('hands leadership away before removing the leader itself', () => {
    expect(nextMoveStep({ from: 'n1', to: 'n4' }, config(['n1', 'n2', 'n3', 'n4']), 'n1')).toEqual({ kind: 'transfer', to: 'n4' });
    expect(nextMoveStep({ from: 'n1', to: '' }, config(['n1', 'n2', 'n3']), 'n1')).toEqual({ kind: 'transfer', to: 'n2' });
    expect(nextMoveStep({ from: 'n2', to: '' }, config(['n1', 'n2', 'n3']), 'n1')).toEqual({ kind: 'remove', id: 'n2' });
  });
});

/** Sends numbered payloads through whichever member serves the spool; keeps the acknowledged. */
class Sender {
  readonly acked = new Set<number>();
  private next = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly c: TestCluster) {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      const n = this.next++;
      const payload = new TextEncoder().encode(String(n));
      for (;;) {
        if (!this.running) return;
        const outcome = await this.sendOnce(payload);
        if (outcome === 'acked') this.acked.add(n);
        if (outcome !== 'retry') break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  /** One attempt on every running member: `retry` when none serves the spool now. */
  private async sendOnce(payload: Uint8Array): Promise<'acked' | 'unknown' | 'retry'> {
    for (const member of [...this.c.members.values()]) {
      try {
        await member.service.send(SPOOL, QUEUE, { payload, delayMs: 0, wantHandle: false });
        return 'acked';
      } catch (error) {
        if (!(error instanceof MqError)) throw error;
        if (error.kind === 'operation_unconfirmed') return 'unknown';
        if (error.kind !== 'unavailable') throw error;
      }
    }
    return 'retry';
  }
}

async function start(ids: string[]): Promise<TestCluster> {
  const c = await TestCluster.start(ids);
  cluster = c;
  await Promise.all([...c.members.values()].map((member) => member.ready()));
  await waitFor(() => [...c.members.values()].some((m) => m.meta.node.isLeader()));
  await metaLeader(c).admin.createAccount('acme', undefined);
  const primary = await c.primary(SPOOL);
  await primary.service.createQueue(SPOOL, QUEUE, {});
  return c;
}

function metaLeader(c: TestCluster): Member {
  let leader: Member | undefined;
  for (const member of c.members.values()) if (member.meta.node.isLeader()) leader = member;
  if (leader === undefined) throw new Error('no metadata leader');
  return leader;
}

function replicasOf(member: Member, spool = SPOOL): string[] {
  return [...(member.meta.state.spools.get(spool)?.replicas ?? [])].sort();
}

/** Starts sending and waits until `count` sends were acknowledged. */
async function sending(c: TestCluster, count: number): Promise<Sender> {
  const s = new Sender(c);
  sender = s;
  await waitFor(() => s.acked.size >= count);
  return s;
}

/** Stops the sender once `more` further sends were acknowledged; returns what was acknowledged. */
async function stopAfter(s: Sender, more: number): Promise<Set<number>> {
  const target = s.acked.size + more;
  await waitFor(() => s.acked.size >= target);
  await s.stop();
  sender = null;
  return s.acked;
}

/**
 * Receives (and acks) everything in the queue through the spool's primary. A 503 (the primary
 * renewing its lease under load, or moved) is retried on the primary found again, as a client
 * retries it: nothing was done.
 */
async function drain(c: TestCluster, among: readonly string[]): Promise<Set<number>> {
  const seen = new Set<number>();
  const onPrimary = async <T>(call: (member: Member) => Promise<T>): Promise<T> => {
    const deadline = performance.now() + 15_000;
    for (;;) {
      try {
        return await call(await c.primary(SPOOL, among));
      } catch (error) {
        const retry = error instanceof MqError && error.kind === 'unavailable';
        if (!retry || performance.now() > deadline) throw error;
      }
    }
  };
  for (;;) {
    const delivery = await onPrimary((m) => m.service.receive(SPOOL, QUEUE, { waitMs: 0 }));
    if (delivery === null) return seen;
    seen.add(Number(new TextDecoder().decode(delivery.payload)));
    await onPrimary((m) => m.service.ack(SPOOL, delivery.lease));
  }
}

async function expectNothingLost(c: TestCluster, acked: ReadonlySet<number>, among: readonly string[]): Promise<void> {
  await c.converged(SPOOL, among);
  const received = await drain(c, among);
  const lost = [...acked].filter((n) => !received.has(n));
  expect(lost, 'acknowledged sends not received').toEqual([]);
}

/** Member `id` closed its replica of the spool and dropped the group from its storage. */
async function expectDropped(c: TestCluster, id: string, gen: number): Promise<void> {
  await waitFor(() => c.member(id).replica(SPOOL) === undefined);
  const group = spoolGroup(SPOOL, gen);
  let groups: string[] = [group];
  const deadline = performance.now() + 15_000;
  while (groups.includes(group) && performance.now() < deadline) {
    groups = await c.storedGroups(id);
    if (groups.includes(group)) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(groups).not.toContain(group);
}

describe('member removal moves its replicas', () => {
  it('moves a follower replica to the spare member while sends run', async () => {
    const c = await start(['n1', 'n2', 'n3', 'n4']);
    const record = c.member('n1').meta.state.spools.get(SPOOL)!;
    const primary = (await c.primary(SPOOL)).id;
    const victim = record.replicas.find((id) => id !== primary)!;
    const spare = ['n1', 'n2', 'n3', 'n4'].find((id) => !record.replicas.includes(id))!;
    const admin = [...c.members.values()].find((m) => m.id !== victim)!.admin;
    const s = await sending(c, 20);

    const shape = await admin.removeMember(victim);

    const acked = await stopAfter(s, 20);
    const rest = ['n1', 'n2', 'n3', 'n4'].filter((id) => id !== victim);
    expect(shape.members).toEqual(rest);
    for (const id of rest) await waitFor(() => replicasOf(c.member(id)).join() === [...record.replicas.filter((r) => r !== victim), spare].sort().join());
    expect(metaLeader(c).meta.node.status().config.voters).not.toContain(victim);
    const config = (await c.primary(SPOOL, rest)).replica(SPOOL)!.node.status().config;
    expect([...config.voters].sort()).toEqual(replicasOf(c.member(spare)));
    await expectDropped(c, victim, record.gen);
    await expectNothingLost(c, acked, rest);
  });

  it('moves the replica of the spool primary, whose leadership goes first', async () => {
    const c = await start(['n1', 'n2', 'n3', 'n4']);
    const record = c.member('n1').meta.state.spools.get(SPOOL)!;
    const victim = (await c.primary(SPOOL)).id;
    const s = await sending(c, 20);

    await c.member(victim === 'n1' ? 'n2' : 'n1').admin.removeMember(victim);

    const acked = await stopAfter(s, 20);
    const rest = ['n1', 'n2', 'n3', 'n4'].filter((id) => id !== victim);
    for (const id of rest) await waitFor(() => replicasOf(c.member(id)).length === 3 && !replicasOf(c.member(id)).includes(victim));
    expect(replicasOf(c.member(rest[0]!))).toEqual(rest);
    await expectDropped(c, victim, record.gen);
    await expectNothingLost(c, acked, rest);
  });

  it('refuses without a spare member, and shrinks the replica set with allowShrink', async () => {
    const c = await start(['n1', 'n2', 'n3']);
    const gen = c.member('n1').meta.state.spools.get(SPOOL)!.gen;
    const s = await sending(c, 10);
    const refused = await expectError(c.member('n1').admin.removeMember('n2'), 'conflict');
    expect(refused.message).toMatch(/--allow-shrink/);
    expect(c.member('n1').meta.state.members).toEqual(['n1', 'n2', 'n3']);
    expect(c.member('n1').meta.state.spools.get(SPOOL)!.moving).toBeNull();

    const shape = await c.member('n1').admin.removeMember('n2', { allowShrink: true });

    const acked = await stopAfter(s, 10);
    expect(shape.members).toEqual(['n1', 'n3']);
    for (const id of ['n1', 'n3']) await waitFor(() => replicasOf(c.member(id)).join() === 'n1,n3');
    await expectDropped(c, 'n2', gen);
    await expectNothingLost(c, acked, ['n1', 'n3']);
  });
});

describe('move-replica', () => {
  it('moves one replica onto another member, and a re-run is a no-op', async () => {
    const c = await start(['n1', 'n2', 'n3', 'n4']);
    const record = c.member('n1').meta.state.spools.get(SPOOL)!;
    const from = record.replicas[1]!;
    const to = ['n1', 'n2', 'n3', 'n4'].find((id) => !record.replicas.includes(id))!;
    const s = await sending(c, 20);
    const admin = c.member('n3').admin;

    const view = await admin.moveReplica('acme', 'default', from, to);

    const expected = record.replicas.map((id) => (id === from ? to : id));
    expect(view.replicas).toEqual(expected);
    expect((await admin.moveReplica('acme', 'default', from, to)).replicas).toEqual(expected);
    const acked = await stopAfter(s, 20);
    await expectDropped(c, from, record.gen);
    expect(c.member(from).meta.state.members).toContain(from); // still a member, hosting less
    await expectNothingLost(c, acked, expected);
  });

  it('refuses unknown spools and members, a from without the replica and a to with one', async () => {
    const c = await start(['n1', 'n2', 'n3', 'n4']);
    const record = c.member('n1').meta.state.spools.get(SPOOL)!;
    const spare = ['n1', 'n2', 'n3', 'n4'].find((id) => !record.replicas.includes(id))!;
    const admin = c.member('n1').admin;
    await expectError(admin.moveReplica('acme', 'nope', record.replicas[0]!, spare), 'not_found');
    await expectError(admin.moveReplica('acme', 'default', record.replicas[0]!, 'n9'), 'not_found');
    await expectError(admin.moveReplica('acme', 'default', spare, spare), 'invalid_argument');
    await expectError(admin.moveReplica('acme', 'default', record.replicas[0]!, record.replicas[1]!), 'invalid_argument');
  });
});

describe('resuming a move', () => {
  it('finishes after the metadata leader, also the spool primary driving the move, is closed', async () => {
    const c = await start(['n1', 'n2', 'n3', 'n4']);
    const record = c.member('n1').meta.state.spools.get(SPOOL)!;
    // The metadata leader leads the spool too, so closing it stops the move's driver as well.
    let leader = metaLeader(c);
    if (!record.replicas.includes(leader.id)) {
      await leader.meta.node.transferLeadership(record.replicas[0]!);
      await waitFor(() => c.member(record.replicas[0]!).meta.node.isLeader());
      leader = c.member(record.replicas[0]!);
    }
    const primary = await c.primary(SPOOL);
    if (primary.id !== leader.id) await primary.replica(SPOOL)!.node.transferLeadership(leader.id);
    await waitFor(() => leader.replica(SPOOL)?.isServing() === true);
    const victim = record.replicas.find((id) => id !== leader.id)!;
    const spare = ['n1', 'n2', 'n3', 'n4'].find((id) => !record.replicas.includes(id))!;
    const other = ['n1', 'n2', 'n3', 'n4'].find((id) => id !== leader.id && id !== victim && id !== spare)!;
    const s = await sending(c, 20);

    // The command runs on the metadata leader, which closes once the spare joined the spool and
    // every move off the victim is recorded: the command then only waits for the moves, so the
    // close answers 503 (closed while it still recorded a move, the `default` spool's, its
    // accepted proposal would answer 500 unconfirmed). Nothing reaches the spare from the leader
    // meanwhile, so the spool's move cannot finish before the close.
    c.network.cut(leader.id, spare);
    const first = expectError(leader.admin.removeMember(victim), 'unavailable');
    const config = () => leader.replica(SPOOL)!.node.status().config;
    await waitFor(() => config().learners.includes(spare) || config().voters.includes(spare));
    const spools = () => [...leader.meta.state.spools.values()];
    await waitFor(() => spools().every((s) => !s.replicas.includes(victim) || s.moving !== null));
    await c.stopMember(leader.id);
    c.network.heal();
    await first;
    // The spool's next leader finishes its move without the closed member.
    const expected = [leader.id, other, spare].sort();
    await waitFor(() => replicasOf(c.member(other)).join() === expected.join());
    // A move towards the closed member (the `default` spool's, perhaps) waits for it: it comes
    // back, and the operator runs the command again once the metadata has a leader.
    await c.startMember(leader.id);
    await waitFor(() => {
      const known = c.member(other).meta.node.leaderId();
      return known !== null && c.members.get(known)?.meta.node.isLeader() === true;
    });

    const shape = await c.member(other).admin.removeMember(victim);

    expect(shape.members).not.toContain(victim);
    const acked = await stopAfter(s, 20);
    await expectDropped(c, victim, record.gen);
    await expectNothingLost(c, acked, expected);
  });
});
