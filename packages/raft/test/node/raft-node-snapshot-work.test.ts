// RaftNode driving a snapshot that the state machine produces in slices (beginSnapshot): the
// snapshot describes the applied index where it began, slices run on separate turns with Raft
// work in between, and a restore or a stop abandons it.

import { afterEach, describe, expect, it } from 'vitest';
import type { RaftCore } from '../../src/core/raft.js';
import { LogBudget } from '../../src/node/log-budget.js';
import { RaftError } from '../../src/node/raft-error.js';
import type { RaftNodeOptions } from '../../src/node/options.js';
import type { RaftNode } from '../../src/node/raft-node.js';
import type { AppliedEntry, SnapshotSlice, SnapshotWork } from '../../src/node/state-machine.js';
import type { NodeId, Snapshot } from '../../src/types.js';
import { joinChunks } from '../chunks.js';
import { GROUP, KvStore, TestCluster, set, waitFor, type Member } from './cluster.js';

const ids = ['n1', 'n2', 'n3'];
const SLICE_BYTES = 16;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

/**
 * The store's pairs frozen at begin, encoded (as KvStore.snapshot does) about `budgetBytes` per
 * step. While its store holds works, it keeps returning null after encoding everything, so a
 * test decides when it finishes; every step keeps being called, one per turn.
 */
class SlicedWork implements SnapshotWork {
  steps = 0;
  readonly budgetsBytes: number[] = [];
  finished = false;
  cancelled = false;
  /** Calls the interface forbids: a step or cancel after the work finished or was cancelled. */
  misuses = 0;
  /** Entries the store applied while this work was live, with the steps taken by then. */
  readonly appliedMeanwhile: { index: number; steps: number }[] = [];
  private next = 0;

  constructor(
    /** The node's applied index when the work began. */
    readonly index: number,
    private readonly frozen: readonly [string, string][],
    private readonly store: SlicedKvStore,
  ) {}

  live(): boolean {
    return !this.finished && !this.cancelled;
  }

  /** Each step's chunk is the JSON text of the entries it encoded (the first opens the list). */
  step(budgetBytes: number): SnapshotSlice {
    if (!this.live()) this.misuses += 1;
    this.steps += 1;
    this.budgetsBytes.push(budgetBytes);
    if (this.store.stepError !== null) throw this.store.stepError;
    let text = this.steps === 1 ? '[' : '';
    for (let used = 0; used < budgetBytes && this.next < this.frozen.length; this.next += 1) {
      const part = JSON.stringify(this.frozen[this.next]);
      text += (this.next === 0 ? '' : ',') + part;
      used += part.length;
    }
    if (this.next < this.frozen.length || this.store.hold) {
      return { chunk: encoder.encode(text), done: false };
    }
    this.finished = true;
    return { chunk: encoder.encode(text + ']'), done: true };
  }

  cancel(): void {
    if (!this.live()) this.misuses += 1;
    this.cancelled = true;
  }
}

/** A KvStore that snapshots in slices (its synchronous snapshot() must not be used). */
class SlicedKvStore extends KvStore {
  readonly works: SlicedWork[] = [];
  /** Keeps every work from finishing until released. */
  hold = false;
  /** Thrown by the next step when set. */
  stepError: Error | null = null;
  /** Live works at each restore: the node must cancel before the state is replaced. */
  readonly liveAtRestore: number[] = [];
  syncSnapshots = 0;

  constructor(private readonly appliedIndexNow: () => number) {
    super();
  }

  beginSnapshot(): SnapshotWork {
    const work = new SlicedWork(this.appliedIndexNow(), [...this.map], this);
    this.works.push(work);
    return work;
  }

  override apply(entry: AppliedEntry): unknown {
    for (const work of this.works) {
      if (work.live()) work.appliedMeanwhile.push({ index: entry.index, steps: work.steps });
    }
    return super.apply(entry);
  }

  override snapshot(): Uint8Array {
    this.syncSnapshots += 1;
    return super.snapshot();
  }

  override restore(chunks: Iterable<Uint8Array>): void {
    this.liveAtRestore.push(this.works.filter((work) => work.live()).length);
    super.restore(chunks);
  }
}

async function startSliced(
  voters: readonly NodeId[],
  retainEntries: number,
  more: Partial<RaftNodeOptions> = {},
): Promise<TestCluster> {
  const overrides = { snapshotEntries: 10, retainEntries, snapshotSliceBytes: SLICE_BYTES, ...more };
  return TestCluster.start(voters, overrides, (id) => {
    // Read when a work begins, inside the node's turn: the index the snapshot must describe.
    return new SlicedKvStore(() => cluster!.node(id).status().appliedIndex);
  });
}

function sliced(member: Member): SlicedKvStore {
  return member.store as SlicedKvStore;
}

function coreOf(node: RaftNode): RaftCore {
  return (node as unknown as { core: RaftCore }).core;
}

/** Every snapshot handed to the member's storage from now on (taken or installed). */
function recordSavedSnapshots(member: Member): Snapshot[] {
  const storage = member.storage.group(GROUP);
  const save = storage.saveSnapshot.bind(storage);
  const saved: Snapshot[] = [];
  storage.saveSnapshot = (snapshot) => {
    saved.push(snapshot);
    return save(snapshot);
  };
  return saved;
}

function decodeState(data: Uint8Array): Map<string, string> {
  return new Map(JSON.parse(decoder.decode(data)) as [string, string][]);
}

interface Written {
  readonly key: string;
  readonly value: string;
  readonly index: number;
}

/** The key-value state after every write at or below `index`, from what the proposals returned. */
function stateAt(writes: readonly Written[], index: number): Map<string, string> {
  const state = new Map<string, string>();
  for (const write of [...writes].sort((a, b) => a.index - b.index)) {
    if (write.index <= index) state.set(write.key, write.value);
  }
  return state;
}

async function write(leader: RaftNode, writes: Written[], key: string, value: string) {
  const { index } = await leader.propose(set(key, value));
  writes.push({ key, value, index });
}

/** Proposes distinct keys until the member's store has begun a sliced snapshot. */
async function writeUntilWorkBegins(leader: RaftNode, member: Member, writes: Written[]) {
  for (let i = 0; sliced(member).works.length === 0; i += 1) {
    expect(i).toBeLessThan(30);
    await write(leader, writes, `k${i}`, `v${i}`);
  }
  return sliced(member).works[0]!;
}

function sameState(a: Member, b: Member): boolean {
  if (a.store.map.size !== b.store.map.size) return false;
  for (const [key, value] of a.store.map) if (b.store.map.get(key) !== value) return false;
  return true;
}

/** Lets `turns` macrotask turns pass (each would run a slice that was still scheduled). */
async function turns(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

describe('RaftNode sliced snapshots (StateMachine.beginSnapshot)', () => {
  it('snapshots the state at the index where the work began, while later entries commit between slices', async () => {
    cluster = await startSliced(ids, 2);
    const leader = await cluster.leader();
    const member = cluster.member(leader.id);
    const store = sliced(member);
    const saved = recordSavedSnapshots(member);
    for (const m of cluster.members.values()) sliced(m).hold = true;
    const writes: Written[] = [];
    const work = await writeUntilWorkBegins(leader, member, writes);
    expect(work.index).toBeGreaterThanOrEqual(10); // bootstrap and leader entries count too

    // Entries proposed while the work is held commit and apply on the leader.
    for (let i = 0; i < 5; i += 1) await write(leader, writes, `late${i}`, `w${i}`);
    expect(work.live()).toBe(true);
    expect(store.works).toHaveLength(1); // no second work while one is in progress
    const late = writes.filter((w) => w.index > work.index);
    expect(late.length).toBeGreaterThanOrEqual(5);
    expect(work.appliedMeanwhile.map((a) => a.index)).toEqual(
      expect.arrayContaining(late.map((w) => w.index)),
    );
    // Slices ran between those applies: one slice per turn, not the whole work in one.
    const first = work.appliedMeanwhile[0]!;
    const last = work.appliedMeanwhile.at(-1)!;
    expect(first.steps).toBeGreaterThanOrEqual(1);
    expect(last.steps).toBeGreaterThan(first.steps);
    expect(leader.status().snapshotIndex).toBe(0); // nothing taken before the work finishes

    for (const m of cluster.members.values()) sliced(m).hold = false;
    await waitFor(() => leader.status().snapshotIndex !== 0);
    expect(work.finished).toBe(true);
    expect(work.steps).toBeGreaterThan(1);
    expect(work.budgetsBytes.every((b) => b === SLICE_BYTES)).toBe(true);
    expect(work.misuses).toBe(0);
    expect(store.syncSnapshots).toBe(0);

    // Taken at the index where it began, holding the state at that index, not the later one.
    expect(leader.status().snapshotIndex).toBe(work.index);
    expect(leader.status().appliedIndex).toBeGreaterThan(work.index);
    expect(saved.map((s) => s.meta.index)).toEqual([work.index]);
    const state = decodeState(joinChunks(saved[0]!.data));
    expect(state).toEqual(stateAt(writes, work.index));
    for (const w of late) expect(state.has(w.key)).toBe(false);
    // The log is compacted to work.index, as every follower holds it: the later entries stay.
    const core = coreOf(leader);
    expect(core.logBaseIndex()).toBe(work.index);
    for (const w of late) expect(core.entryAt(w.index).index).toBe(w.index);
    expect(core.latestSnapshot()?.meta.index).toBe(work.index);
  });

  it('reports every entry it keeps to the log budget until the sliced snapshot is stored', async () => {
    const budget = new LogBudget(1_000_000);
    cluster = await startSliced(['n1'], 0, { logBudget: budget });
    const leader = await cluster.leader();
    const member = cluster.member(leader.id);
    sliced(member).hold = true;
    const writes: Written[] = [];
    const work = await writeUntilWorkBegins(leader, member, writes);
    for (let i = 0; i < 5; i += 1) await write(leader, writes, `late${i}`, `w${i}`);
    const core = coreOf(leader);
    /** Bytes of the applied entries after `base`, as the log holds them. */
    const bytesAfter = (base: number): number => {
      let bytes = 0;
      for (let i = base + 1; i <= leader.status().appliedIndex; i += 1) {
        bytes += core.entryAt(i).data.length;
      }
      return bytes;
    };
    // The work began at work.index, but nothing is compacted before it is stored: the budget
    // hears of every entry in memory, not only of those applied since the work began.
    expect(core.logBaseIndex()).toBe(0);
    expect(bytesAfter(work.index)).toBeLessThan(bytesAfter(0));
    expect(budget.heldBytes).toBe(bytesAfter(0));

    sliced(member).hold = false;
    await waitFor(() => leader.status().snapshotIndex !== 0);
    expect(core.logBaseIndex()).toBe(work.index);
    expect(budget.heldBytes).toBe(bytesAfter(work.index));
  });

  it('restarts a member from its sliced snapshot, and installs it on a new member', async () => {
    cluster = await startSliced(ids, 2);
    const leader = await cluster.leader();
    const members = [...cluster.members.values()];
    for (const m of members) sliced(m).hold = true;
    const writes: Written[] = [];
    await writeUntilWorkBegins(leader, cluster.member(leader.id), writes);
    await waitFor(() => members.every((m) => sliced(m).works.length === 1));
    for (let i = 0; i < 5; i += 1) await write(leader, writes, `late${i}`, `w${i}`);
    const lastLateIndex = writes.at(-1)!.index;
    for (const m of members) sliced(m).hold = false;
    await waitFor(() => members.every((m) => m.node.status().snapshotIndex !== 0));
    for (const m of members) {
      expect(m.node.status().snapshotIndex).toBe(sliced(m).works[0]!.index);
    }

    // A follower's storage: the snapshot at its work's index, then the log after it.
    const victimId = ids.find((id) => id !== leader.id)!;
    const victim = cluster.member(victimId);
    const workIndex = sliced(victim).works[0]!.index;
    await waitFor(() => victim.node.status().appliedIndex >= lastLateIndex);
    await victim.node.close();
    const stored = await victim.storage.group(GROUP).load();
    expect(stored.snapshot?.meta.index).toBe(workIndex);
    expect(decodeState(joinChunks(stored.snapshot!.data))).toEqual(stateAt(writes, workIndex));
    expect(stored.entries[0]?.index).toBe(workIndex + 1);
    expect(stored.entries.at(-1)!.index).toBeGreaterThanOrEqual(lastLateIndex);

    // Restarted: restores the snapshot, then re-applies only the entries after it.
    const restarted = await cluster.startMember(victimId, true);
    await waitFor(() => sameState(restarted, cluster!.member(leader.id)));
    expect(restarted.store.restores).toBe(1);
    expect(restarted.store.appliedIndexes.length).toBeGreaterThan(0);
    expect(restarted.store.appliedIndexes.every((index) => index > workIndex)).toBe(true);

    // A new member gets the leader's sliced snapshot by InstallSnapshot (its log starts past 1).
    const leaderWorkIndex = sliced(cluster.member(leader.id)).works[0]!.index;
    expect(coreOf(leader).logBaseIndex()).toBeGreaterThan(1);
    const joiner = await cluster.startMember('n4', false);
    await leader.addVoter('n4');
    await write(leader, writes, 'final', 'x');
    const all = [...cluster.members.values()];
    await waitFor(() => all.every((m) => m.store.map.get('final') === 'x'));
    for (const m of all) expect(m.store.map).toEqual(stateAt(writes, Infinity));
    expect(joiner.store.restores).toBe(1);
    expect(joiner.store.appliedIndexes.every((index) => index > leaderWorkIndex)).toBe(true);
  });

  it('cancels a follower\'s work in progress when it installs the leader\'s snapshot', async () => {
    cluster = await startSliced(ids, 0);
    const leader = await cluster.leader();
    const followerId = ids.find((id) => id !== leader.id)!;
    const follower = cluster.member(followerId);
    const store = sliced(follower);
    const saved = recordSavedSnapshots(follower);
    const errors: Error[] = [];
    follower.node.on('error', (error) => errors.push(error));
    store.hold = true; // only the follower's work stays in progress
    const writes: Written[] = [];
    await writeUntilWorkBegins(leader, follower, writes);
    const work = store.works[0]!;
    await waitFor(() => work.steps >= 2);

    // Cut off, the follower falls behind the leader's newer snapshots (retainEntries 0).
    cluster.network.isolate(followerId);
    const behind = follower.node.status().lastIndex;
    const value = 'x'.repeat(40); // five keys rewritten: enough bytes for the byte rule
    for (let i = 0; leader.status().snapshotIndex <= behind; i += 1) {
      expect(i).toBeLessThan(200);
      await write(leader, writes, `r${i % 5}`, `${value}${i}`);
    }
    expect(work.live()).toBe(true);
    cluster.network.heal();
    await waitFor(() => store.restores === 1 && sameState(follower, cluster!.member(leader.id)));

    expect(work.cancelled).toBe(true);
    expect(work.finished).toBe(false);
    expect(store.liveAtRestore).toEqual([0]); // cancelled before the state was replaced
    const stepsAtRestore = work.steps;
    // No snapshot was taken at the abandoned work's index; the installed one is newer.
    expect(saved.map((s) => s.meta.index)).not.toContain(work.index);
    expect(follower.node.status().snapshotIndex).toBeGreaterThan(work.index);
    expect(coreOf(follower.node).latestSnapshot()?.meta.index).toBeGreaterThan(work.index);

    // The follower carries on: it applies new entries, and the old work gets no more slices.
    await write(leader, writes, 'after', 'restore');
    await waitFor(() => follower.store.map.get('after') === 'restore');
    expect(work.steps).toBe(stepsAtRestore);
    expect(work.misuses).toBe(0);
    expect(errors).toEqual([]);
    expect(follower.node.status().role).toBe('follower');
  });

  it('begins no second work while one is in progress; the next counts from where it began', async () => {
    cluster = await startSliced(['n1'], 2);
    const member = cluster.member('n1');
    const node = await cluster.leader();
    const store = sliced(member);
    store.hold = true;
    const writes: Written[] = [];
    const work = await writeUntilWorkBegins(node, member, writes);
    // Enough entries and bytes for the rule, all applied while the work is in progress.
    const big = 'y'.repeat(40);
    for (let i = 0; i < 15; i += 1) await write(node, writes, `late${i}`, big);
    expect(store.works).toHaveLength(1);
    store.hold = false;
    await waitFor(() => node.status().snapshotIndex === work.index);

    // Counted from work.index, the rule already holds: the next Ready after the first finished
    // begins the next one, at the latest with the next entry (counted from where the first
    // finished, it would take ten more entries).
    const lastLate = writes.at(-1)!.index;
    await write(node, writes, 'next', big);
    expect(store.works).toHaveLength(2);
    const second = store.works[1]!;
    expect(second.index).toBeGreaterThanOrEqual(lastLate);
    expect(second.index).toBeLessThanOrEqual(writes.at(-1)!.index);
    await waitFor(() => node.status().snapshotIndex === second.index);
    expect(decodeState(joinChunks(coreOf(node).latestSnapshot()!.data))).toEqual(stateAt(writes, second.index));
    // And the count restarted there: one more entry begins nothing.
    await write(node, writes, 'after', big);
    expect(store.works).toHaveLength(2);
  });

  it('begins no second work while the first is being stored, not yet taken', async () => {
    cluster = await startSliced(['n1'], 2);
    const member = cluster.member('n1');
    const node = await cluster.leader();
    const store = sliced(member);
    // Storage holds the finished snapshot until released.
    const storage = member.storage.group(GROUP);
    const begin = storage.beginSnapshot!.bind(storage);
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    storage.beginSnapshot = (meta) => {
      const sink = begin(meta);
      return { ...sink, finish: () => gate.then(() => sink.finish()) };
    };
    const writes: Written[] = [];
    const work = await writeUntilWorkBegins(node, member, writes);
    await waitFor(() => work.finished);
    // Enough for the rule again, counted from where the work began: still no second work.
    const big = 'y'.repeat(40);
    for (let i = 0; i < 15; i += 1) await write(node, writes, `late${i}`, big);
    await turns(3);
    expect(store.works).toHaveLength(1);
    expect(node.status().snapshotIndex).toBe(0);
    release();
    await waitFor(() => node.status().snapshotIndex === work.index);
    await write(node, writes, 'next', big);
    expect(store.works).toHaveLength(2);
    await waitFor(() => node.status().snapshotIndex === store.works[1]!.index);
  });

  it('cancels the work in progress on close; no slice runs afterwards', async () => {
    cluster = await startSliced(['n1'], 2);
    const member = cluster.member('n1');
    const node = await cluster.leader();
    const store = sliced(member);
    const saved = recordSavedSnapshots(member);
    // The stored file of the work is removed (its descriptor closed) before close resolves.
    const storage = member.storage.group(GROUP);
    const begin = storage.beginSnapshot!.bind(storage);
    let aborted = false;
    // Slices are stored only once released: close finds one being written.
    let releaseWrites = (): void => {};
    const writesGate = new Promise<void>((resolve) => (releaseWrites = resolve));
    storage.beginSnapshot = (meta) => {
      const sink = begin(meta);
      return {
        ...sink,
        append: (chunk) => writesGate.then(() => sink.append(chunk)),
        abort: () => sink.abort().then(() => void (aborted = true)),
      };
    };
    store.hold = true;
    const work = await writeUntilWorkBegins(node, member, []);
    await waitFor(() => work.steps >= 1); // its first slice waits for the write

    const closed = node.close();
    setImmediate(releaseWrites); // after close's own awaits, which are microtasks
    await closed;
    expect(work.cancelled).toBe(true);
    expect(aborted).toBe(true);
    const stepsAtClose = work.steps;
    await turns(20);
    store.hold = false; // a slice now would finish the work and take the snapshot
    await turns(20);
    expect(work.steps).toBe(stepsAtClose);
    expect(work.finished).toBe(false);
    expect(work.misuses).toBe(0);
    expect(node.status().snapshotIndex).toBe(0);
    expect(saved).toEqual([]);
  });

  it('stops the node when a slice throws, as an apply that throws does', async () => {
    cluster = await startSliced(['n1'], 2);
    const member = cluster.member('n1');
    const node = await cluster.leader();
    const store = sliced(member);
    const errors: Error[] = [];
    node.on('error', (error) => errors.push(error));
    store.hold = true;
    const work = await writeUntilWorkBegins(node, member, []);
    store.stepError = new Error('encode bug');
    await waitFor(() => errors.length > 0);

    expect(errors.map((e) => e.message)).toEqual(['encode bug']);
    const refused = await node.propose(set('k', 'v')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(RaftError);
    expect((refused as RaftError).kind).toBe('closed');
    expect(work.cancelled).toBe(true); // the stopping node abandons it
    const stepsAtFailure = work.steps;
    await turns(10);
    expect(work.steps).toBe(stepsAtFailure);
    expect(node.status().snapshotIndex).toBe(0);
  });
});
