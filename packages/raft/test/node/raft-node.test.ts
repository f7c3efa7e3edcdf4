import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RaftConfigError } from '../../src/core/config.js';
import { LogBudget } from '../../src/node/log-budget.js';
import { RaftError } from '../../src/node/raft-error.js';
import { RaftNode } from '../../src/node/raft-node.js';
import { LevelStorageEngine } from '../../src/storage/level-storage.js';
import { MemoryStorageEngine } from '../../src/storage/memory-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { MessageType, type GroupStorage, type Message, type Transport } from '../../src/types.js';
import { GROUP, KvStore, TestCluster, set, waitFor } from './cluster.js';

const ids = ['n1', 'n2', 'n3'];
let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

/** A running cluster's follower, with the reasons of the messages it drops collected. */
async function followerWatchingRejections() {
  cluster = await TestCluster.start(ids);
  const leader = await cluster.leader();
  const follower = ids.find((id) => id !== leader.id)!;
  const node = cluster.node(follower);
  const rejections: string[] = [];
  node.on('rejected', (rejection) => rejections.push(rejection.reason));
  return { leader, follower, node, rejections };
}

async function rejection(promise: Promise<unknown>): Promise<RaftError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RaftError);
    return error as RaftError;
  }
  throw new Error('expected a rejection');
}

describe('RaftNode', () => {
  it('elects a leader; a proposal resolves once committed and applied', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const first = await leader.propose(set('k', 'v1'));
    expect(first.result).toBeNull();
    const second = await leader.propose(set('k', 'v2'));
    expect(second).toMatchObject({ index: first.index + 1, term: first.term, result: 'v1' });
    await waitFor(() => ids.every((id) => cluster!.member(id).store.map.get('k') === 'v2'));
  });

  it('resolves appliedThrough on the turn that applies the index, and rejects once closed', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const follower = cluster.node(ids.find((id) => id !== leader.id)!);
    await expect(follower.appliedThrough(0)).resolves.toBeUndefined();
    const target = follower.status().appliedIndex + 1;
    let applied = -1;
    const waiting = follower.appliedThrough(target).then(() => (applied = follower.status().appliedIndex));
    await leader.propose(set('k', 'v'));
    await waiting;
    expect(applied).toBeGreaterThanOrEqual(target);
    const never = follower.appliedThrough(target + 1_000);
    await follower.close();
    expect((await rejection(never)).kind).toBe('closed');
    expect((await rejection(follower.appliedThrough(target + 1_000))).kind).toBe('closed');
  });

  it('refuses a proposal on a follower with not_leader and the leader\'s id', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const follower = ids.find((id) => id !== leader.id)!;
    await waitFor(() => cluster!.node(follower).leaderId() === leader.id);
    const error = await rejection(cluster.node(follower).propose(set('k', 'v')));
    expect(error.kind).toBe('not_leader');
    expect(error.leaderId).toBe(leader.id);
  });

  it('puts everything proposed in one turn into one append', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const member = cluster.member(leader.id);
    const appends: number[] = [];
    const transport = (leader as unknown as { opts: { transport: Transport } }).opts.transport;
    const send = transport.send.bind(transport);
    transport.send = (group: string, messages: readonly Message[]) => {
      for (const m of messages) {
        if (m.type !== MessageType.AppendEntries || m.entries.length === 0) continue;
        appends.push(m.entries.length);
      }
      send(group, messages);
    };
    const proposals = Array.from({ length: 50 }, (_, i) => leader.propose(set(`k${i}`, 'v')));
    await Promise.all(proposals);
    expect(appends.slice(0, 2)).toEqual([50, 50]); // one append per follower, all 50 entries
    expect(member.store.map.size).toBe(50);
  });

  it('answers busy beyond proposalsPendingMax, appending nothing', async () => {
    cluster = await TestCluster.start(ids, { proposalsPendingMax: 3 });
    const leader = await cluster.leader();
    const accepted = [1, 2, 3].map((i) => leader.propose(set(`k${i}`, 'v')));
    const error = await rejection(leader.propose(set('k4', 'v')));
    expect(error.kind).toBe('busy');
    await Promise.all(accepted);
    expect(cluster.member(leader.id).store.map.has('k4')).toBe(false);
  });

  it('rejects with leadership_lost when the leader is cut off after appending', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    cluster.network.isolate(leader.id);
    const error = await rejection(leader.propose(set('lost', 'v')));
    expect(error.kind).toBe('leadership_lost');
    expect(leader.isLeader()).toBe(false);
    cluster.network.heal();
  });

  it('holds the leader lease only on the leader, and loses it when cut off', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    for (const id of ids) expect(cluster.node(id).hasLeaderLease()).toBe(id === leader.id);
    cluster.network.isolate(leader.id);
    await waitFor(() => !leader.hasLeaderLease());
    cluster.network.heal();
  });

  it('transfers leadership and reports the change', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const target = ids.find((id) => id !== leader.id)!;
    const changes: (string | null)[] = [];
    cluster.node(target).on('leader-change', (id) => changes.push(id));
    await leader.transferLeadership(target);
    await waitFor(() => cluster!.node(target).isLeader());
    expect(changes.at(-1)).toBe(target);
    expect((await cluster.node(target).propose(set('after', 'transfer'))).result).toBeNull();
  });

  it('recovers from storage after a crash that loses unsynced writes', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    for (let i = 0; i < 20; i += 1) await leader.propose(set(`k${i}`, `v${i}`));
    const victim = ids.find((id) => id !== leader.id)!;
    await waitFor(() => cluster!.member(victim).store.map.size === 20);
    const { storage, node } = cluster.member(victim);
    storage.crash();
    await node.close();
    const restarted = await cluster.startMember(victim, true);
    // The restarted state machine replays the committed log (bootstrap is ignored: not empty).
    await waitFor(() => restarted.store.map.size === 20);
    expect(restarted.store.map.get('k19')).toBe('v19');
    await (await cluster.leader()).propose(set('k20', 'v20'));
    await waitFor(() => restarted.store.map.get('k20') === 'v20');
  });

  it('snapshots every snapshotEntries entries; a new member catches up from it', async () => {
    cluster = await TestCluster.start(ids, { snapshotEntries: 10, retainEntries: 0 });
    const leader = await cluster.leader();
    // Five keys rewritten: the state stays smaller than the log between two snapshots.
    for (let i = 0; i < 25; i += 1) await leader.propose(set(`k${i % 5}`, `v${i}`));
    expect(leader.status().snapshotIndex).toBeGreaterThanOrEqual(20);
    const joiner = await cluster.startMember('n4', false);
    const configs: string[][] = [];
    joiner.node.on('config-change', (_change, config) => configs.push([...config.voters]));
    await leader.addVoter('n4');
    expect(leader.status().config.voters).toContain('n4');
    await waitFor(() => joiner.store.map.get('k4') === 'v24');
    expect([...joiner.store.map.values()]).toEqual(['v20', 'v21', 'v22', 'v23', 'v24']);
    // From a snapshot (the leader may cut a newer one meanwhile), not replaying from index 1.
    expect(joiner.store.restores).toBeGreaterThanOrEqual(1);
    expect(joiner.store.appliedIndexes.length).toBeLessThan(25);
    await waitFor(() => configs.some((voters) => voters.includes('n4')));
  });

  it('defers a snapshot until the log since the last one holds as many bytes as it', async () => {
    cluster = await TestCluster.start(ids, { snapshotEntries: 10, retainEntries: 0 });
    const leader = await cluster.leader();
    const big = 'v'.repeat(100);
    // Distinct keys of 100 bytes until the first snapshot (at about 10 entries).
    for (let i = 0; leader.status().snapshotIndex === 0; i += 1) {
      expect(i).toBeLessThan(20);
      await leader.propose(set(`k${i}`, big));
    }
    const first = leader.status().snapshotIndex;
    // Enough entries, too few bytes: the state (some 800 bytes) would be encoded again for
    // some 200 logged bytes.
    for (let i = 0; i < 20; i += 1) await leader.propose(set('k0', `s${i}`));
    expect(leader.status().snapshotIndex).toBe(first);
    const large = 'w'.repeat(200);
    for (let i = 0; i < 10; i += 1) await leader.propose(set('k1', `${large}${i}`));
    expect(leader.status().snapshotIndex).toBeGreaterThan(first);
  });

  it('snapshots before snapshotEntries once the log since the last one holds snapshotLogBytes', async () => {
    cluster = await TestCluster.start(ids, { snapshotEntries: 1000, snapshotLogBytes: 2000, retainEntries: 0 });
    const leader = await cluster.leader();
    const big = 'v'.repeat(300);
    // One key rewritten with 300-byte values: the state stays small, the log grows fast.
    for (let i = 0; i < 6; i += 1) await leader.propose(set('k', `${big}${i}`));
    expect(leader.status().snapshotIndex).toBe(0);
    for (let i = 6; i < 12; i += 1) await leader.propose(set('k', `${big}${i}`));
    expect(leader.status().snapshotIndex).toBeGreaterThan(0);
  });

  it('snapshots early once a shared log budget is over and it holds its share', async () => {
    const budget = new LogBudget(2000);
    const other = budget.join(); // another group of the process
    other.set(5000);
    const overrides = { snapshotEntries: 1000, snapshotLogBytes: 1_000_000, logBudget: budget };
    cluster = await TestCluster.start(['n1'], overrides);
    const leader = await cluster.leader();
    const big = 'v'.repeat(300);
    // Over budget all along, but the other group holds more: this one keeps its log.
    for (let i = 0; i < 12; i += 1) await leader.propose(set('k', `${big}${i}`));
    expect(leader.status().snapshotIndex).toBe(0);
    expect(budget.heldBytes).toBeGreaterThan(5000 + 12 * 300);
    other.set(1000); // the other one snapshotted: this one now holds more than half
    await leader.propose(set('k', `${big}x`));
    expect(leader.status().snapshotIndex).toBeGreaterThan(0);
    await leader.propose(set('k', `${big}y`));
    expect(budget.heldBytes).toBeLessThan(1000 + 2 * 400); // counted from the snapshot on
    await cluster.node('n1').close();
    expect(budget.heldBytes).toBe(1000); // a closed group holds nothing
  });

  it('removes a member, which is told so', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const victim = ids.find((id) => id !== leader.id)!;
    let removed = false;
    cluster.node(victim).on('removed', () => {
      removed = true;
    });
    await leader.removeMember(victim);
    expect(leader.status().config.voters).not.toContain(victim);
    await waitFor(() => removed);
    await cluster.node(victim).close();
    expect((await leader.propose(set('k', 'v'))).result).toBeNull(); // two voters commit
  });

  it('refuses a second membership change while one is uncommitted', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    await cluster.startMember('n4', false);
    await cluster.startMember('n5', false);
    const first = leader.addLearner('n4');
    const error = await rejection(leader.addLearner('n5'));
    expect(error.kind).toBe('conf_change_pending');
    await first;
  });

  it('gives up adding a voter that never catches up (thesis 4.2.1 rounds)', async () => {
    cluster = await TestCluster.start(ids, { catchUpRoundsMax: 2 });
    const leader = await cluster.leader();
    const error = await rejection(leader.addVoter('ghost')); // never started
    expect(error.kind).toBe('catch_up_failed');
    expect(leader.status().config).toEqual({ voters: ids, learners: ['ghost'] });
  });

  it('a stalled event loop ends the lease at once but causes no step-down by itself', async () => {
    let skewMs = 0;
    cluster = await TestCluster.start(ids, { nowMs: () => performance.now() + skewMs });
    const leader = await cluster.leader();
    expect(leader.hasLeaderLease()).toBe(true);
    // Every member's clock jumps a whole second, as if their loops had been blocked that long.
    skewMs = 1_000;
    expect(leader.hasLeaderLease()).toBe(false); // lease clock caught up before answering
    expect(leader.isLeader()).toBe(true); // missed ticks do not fire check-quorum
    await waitFor(() => leader.hasLeaderLease()); // fresh acknowledgements bring it back
    expect(leader.isLeader()).toBe(true);
  });

  it('fails every pending operation with closed on close', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    cluster.network.isolate(leader.id);
    // The handler is attached before close: close awaits writes in flight, and a proposal it
    // rejects without one is an unhandled rejection meanwhile.
    const pending = rejection(leader.propose(set('k', 'v')));
    await leader.close();
    expect((await pending).kind).toBe('closed');
    expect((await rejection(leader.propose(set('k', 'v')))).kind).toBe('closed');
    cluster.network.heal();
  });

  it('calls afterApply once after each run of applies; a throw there stops the node', async () => {
    const network = new MemoryNetwork();
    const store = new KvStore();
    const runs: number[][] = [];
    let seen = 0;
    let failAfter = false;
    const machine = Object.assign(store, {
      afterApply(): void {
        runs.push(store.appliedIndexes.slice(seen));
        seen = store.appliedIndexes.length;
        if (failAfter) throw new Error('payload write failed');
      },
    });
    const node = await RaftNode.start({
      id: 'n1',
      group: GROUP,
      storage: new MemoryStorageEngine().group(GROUP),
      transport: network.transport('n1'),
      stateMachine: machine,
      bootstrap: ['n1'],
      tickMs: 5,
    });
    const errors: Error[] = [];
    node.on('error', (error) => errors.push(error));
    await waitFor(() => node.isLeader());
    // Proposed in one turn: one append, one commit, one run of three applies.
    await Promise.all(['a', 'b', 'c'].map((key) => node.propose(set(key, '1'))));
    const applied = store.appliedIndexes.slice(-3);
    expect(runs).toContainEqual(applied);
    // Every apply belongs to exactly one run, in order.
    expect(runs.flat()).toEqual(store.appliedIndexes);
    failAfter = true;
    await node.propose(set('d', '4')).catch(() => undefined);
    await waitFor(() => errors.length > 0);
    expect(errors.map((e) => e.message)).toEqual(['payload write failed']);
    expect((await rejection(node.propose(set('e', '5')))).kind).toBe('closed');
    await network.close();
  });

  it('stops (fail-stop) when storage fails, and reports it', async () => {
    const network = new MemoryNetwork();
    const engine = new MemoryStorageEngine();
    const real = engine.group(GROUP);
    let failWrites = false;
    const storage: GroupStorage = {
      group: GROUP,
      load: () => real.load(),
      save: (hs, entries) =>
        failWrites ? Promise.reject(new Error('disk on fire')) : real.save(hs, entries),
      saveSnapshot: (s) => real.saveSnapshot(s),
      compact: (i) => real.compact(i),
      destroy: () => real.destroy(),
    };
    const node = await RaftNode.start({
      id: 'n1',
      group: GROUP,
      storage,
      transport: network.transport('n1'),
      stateMachine: new KvStore(),
      bootstrap: ['n1'],
      tickMs: 5,
    });
    const errors: Error[] = [];
    node.on('error', (error) => errors.push(error));
    await waitFor(() => node.isLeader());
    failWrites = true;
    const error = await rejection(node.propose(set('k', 'v')));
    expect(error.kind).toBe('closed');
    expect(errors.map((e) => e.message)).toEqual(['disk on fire']);
    await network.close();
  });

  it('restarts from LevelDB on disk (single member)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raft-node-'));
    const network = new MemoryNetwork();
    try {
      const open = async (engine: LevelStorageEngine, store: KvStore) =>
        RaftNode.start({
          id: 'n1',
          group: GROUP,
          storage: engine.group(GROUP),
          transport: network.transport('n1'),
          stateMachine: store,
          bootstrap: ['n1'],
          tickMs: 5,
          snapshotEntries: 8,
        });
      let engine = await LevelStorageEngine.open(dir);
      const node = await open(engine, new KvStore());
      await waitFor(() => node.isLeader());
      for (let i = 0; i < 20; i += 1) await node.propose(set(`k${i}`, `v${i}`));
      await node.close();
      await engine.close();
      engine = await LevelStorageEngine.open(dir);
      const store = new KvStore();
      const reopened = await open(engine, store);
      await waitFor(() => store.map.size === 20);
      expect(store.restores).toBe(1); // from the stored snapshot, then the log after it
      expect(reopened.term()).toBeGreaterThanOrEqual(2);
      await reopened.close();
      await engine.close();
    } finally {
      await network.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('validates its options', async () => {
    const network = new MemoryNetwork();
    const base = {
      id: 'n1',
      group: GROUP,
      storage: new MemoryStorageEngine().group(GROUP),
      transport: network.transport('n1'),
      stateMachine: new KvStore(),
    };
    await expect(RaftNode.start({ ...base, tickMs: 0 })).rejects.toThrow(RaftConfigError);
    await expect(RaftNode.start({ ...base, leaseTicks: 10 })).rejects.toThrow(/leaseTicks/);
    await network.close();
  });
});

describe('messages from a broken or hostile peer', () => {
  it('drops an AppendEntries contradicting the committed log; the group keeps serving', async () => {
    cluster = await TestCluster.start(ids);
    const leader = await cluster.leader();
    const committed = await leader.propose(set('k', 'v1'));
    const follower = ids.find((id) => id !== leader.id)!;
    const node = cluster.node(follower);
    await waitFor(() => node.status().commitIndex >= committed.index);
    const rejections: string[] = [];
    node.on('rejected', (rejection) => rejections.push(rejection.reason));
    // The audit's forgery: a newer term, rewriting an entry the follower committed.
    const forgedTerm = committed.term + 1;
    const forged: Message = {
      type: MessageType.AppendEntries,
      from: leader.id,
      to: follower,
      term: forgedTerm,
      prevLogIndex: committed.index - 1,
      prevLogTerm: committed.term,
      leaderCommit: committed.index,
      leaderTick: 0,
      entries: [{ index: committed.index, term: forgedTerm, type: 0, data: set('k', 'evil') }],
    };
    node.receive(forged);
    expect(rejections).toEqual([
      `entry ${committed.index} (term ${forgedTerm}) contradicts the committed log (term ${committed.term})`,
    ]);
    expect(node.status().term).toBe(committed.term);
    expect(node.status().rejectedMessages).toBe(1);
    // Not closed: it goes on replicating what the real leader commits.
    const next = await leader.propose(set('k', 'v2'));
    await waitFor(() => cluster!.member(follower).store.map.get('k') === 'v2');
    expect(node.status().commitIndex).toBeGreaterThanOrEqual(next.index);
  });

  it('drops entries that are not contiguous or whose terms go backwards', async () => {
    const { leader, follower, node, rejections } = await followerWatchingRejections();
    const base = { type: MessageType.AppendEntries, from: leader.id, to: follower, leaderCommit: 0, leaderTick: 0 } as const;
    const term = node.status().term;
    const last = node.status().lastIndex;
    const entry = (index: number, t: number) => ({ index, term: t, type: 0, data: set('x', 'y') });
    node.receive({ ...base, term, prevLogIndex: last, prevLogTerm: term, entries: [entry(last + 2, term)] });
    node.receive({ ...base, term, prevLogIndex: last, prevLogTerm: term, entries: [entry(last + 1, term + 1)] });
    expect(rejections).toEqual([
      `entries not contiguous at index ${last + 2}`,
      `entry ${last + 1} has term ${term + 1} out of order`,
    ]);
    await leader.propose(set('k', 'after'));
    await waitFor(() => cluster!.member(follower).store.map.get('k') === 'after');
  });

  it('drops a repair request without an origin or from a log that covers its damage', async () => {
    const { leader, follower, node, rejections } = await followerWatchingRejections();
    const request = {
      type: MessageType.RepairRequest,
      from: leader.id,
      to: follower,
      term: node.status().term,
      origin: leader.id,
      damageIndex: 9,
      damageTerm: 2,
      lastLogIndex: 4,
      lastLogTerm: 1,
      snapshotIndex: 0,
      snapshotOffset: 0,
    } as const;
    node.receive({ ...request, origin: '' });
    node.receive({ ...request, lastLogTerm: 3 });
    expect(rejections).toEqual([
      'repair request without an origin',
      'repair request from a log that covers its damage',
    ]);
  });
});
