// A small synchronous driver for scenario tests of the pure core: every replica's Ready is
// persisted into an in-memory "disk" at once (unless the test holds a replica's disk), messages
// are queued and delivered in FIFO order through links the test can cut, and committed entries
// are recorded per replica. `stabilize()` runs until nothing moves. Not the simulator: no
// randomness here beyond the injected election-timeout source, so scripts read top to bottom.

import { bootstrapState } from '../../src/core/bootstrap.js';
import { RAFT_CONFIG_DEFAULTS, type RaftConfig } from '../../src/core/config.js';
import { RaftCore } from '../../src/core/raft.js';
import { joinChunks } from '../chunks.js';
import { type Ready, snapshotMessages } from '../../src/core/ready.js';
import {
  ChunkedSnapshotData,
  EntryType,
  MessageType,
  type Entry,
  type HardState,
  type Message,
  type NodeId,
  type RestoredState,
  type Snapshot,
} from '../../src/types.js';

/** Durable state of one replica, with GroupStorage's semantics. */
export class Disk {
  hardState: HardState = { term: 0, vote: null, commit: 0 };
  snapshot: Snapshot | null = null;
  entries: Entry[] = [];

  save(hardState: HardState | null, entries: readonly Entry[]): void {
    if (hardState !== null) this.hardState = hardState;
    if (entries.length === 0) return;
    const first = entries[0]!.index;
    this.entries = this.entries.filter((e) => e.index < first).concat(entries);
  }

  saveSnapshot(snapshot: Snapshot): void {
    this.snapshot = snapshot;
    this.entries = this.entries.filter((e) => e.index > snapshot.meta.index);
  }

  compact(index: number): void {
    this.entries = this.entries.filter((e) => e.index > index);
  }

  load(): RestoredState {
    return { hardState: this.hardState, snapshot: this.snapshot, entries: [...this.entries] };
  }
}

export interface HarnessOptions {
  readonly config?: Partial<Omit<RaftConfig, 'id'>>;
  /** Members that start empty (not founding voters), to be added later. */
  readonly spares?: readonly NodeId[];
  /** Ticks given to every replica at construction (default: one election timeout). */
  readonly ageTicks?: number;
}

export interface Applied {
  readonly index: number;
  readonly term: number;
  readonly type: EntryType;
  readonly text: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

export class Harness {
  readonly cores = new Map<NodeId, RaftCore>();
  readonly disks = new Map<NodeId, Disk>();
  readonly applied = new Map<NodeId, Applied[]>();
  /** Every message delivered (or dropped) so far, for assertions on traffic. */
  readonly delivered: Message[] = [];
  private queue: Message[] = [];
  private readonly cut = new Set<string>();
  private readonly held = new Map<NodeId, Ready[]>();
  private readonly holding = new Set<NodeId>();
  private readonly down = new Set<NodeId>();
  private readonly configs = new Map<NodeId, RaftConfig>();
  /** Snapshot data a replica's state machine reports (the text of everything applied). */
  readonly restoredFrom = new Map<NodeId, string>();

  constructor(voters: readonly NodeId[], options: HarnessOptions = {}) {
    for (const id of voters) this.addReplica(id, bootstrapState(voters), options);
    for (const id of options.spares ?? []) {
      const empty = { hardState: { term: 0, vote: null, commit: 0 }, snapshot: null, entries: [] };
      this.addReplica(id, empty, options);
    }
    // Age every replica past its boot-time vote refusal (one election timeout) but not to its
    // own randomized timeout, so the first campaign comes from the replica a test ticks.
    if (options.ageTicks !== 0) {
      for (const id of this.cores.keys()) this.tick(id, options.ageTicks ?? this.electionTicks(id));
    }
  }

  electionTicks(id: NodeId): number {
    return this.configs.get(id)!.electionTicks;
  }

  private addReplica(id: NodeId, state: RestoredState, options: HarnessOptions): void {
    const config: RaftConfig = {
      ...RAFT_CONFIG_DEFAULTS,
      electionTicks: 10,
      heartbeatTicks: 1,
      leaseTicks: 8,
      ...options.config,
      id,
      // Deterministic but distinct per replica and per draw (so lockstep ticking cannot split
      // votes forever): randomized timeouts fall in [1.3 T, 2T), above the aging below, so
      // scripts choose who campaigns first by whom they tick.
      random: options.config?.random ?? lcg(this.configs.size + 1),
    };
    this.configs.set(id, config);
    const disk = new Disk();
    disk.save(state.hardState, state.entries);
    if (state.snapshot !== null) disk.saveSnapshot(state.snapshot);
    this.disks.set(id, disk);
    this.cores.set(id, new RaftCore(config, disk.load()));
    this.applied.set(id, []);
  }

  core(id: NodeId): RaftCore {
    return this.cores.get(id)!;
  }

  /** Ticks replica `id` `n` times, draining its output after each tick. */
  tick(id: NodeId, n = 1): void {
    for (let i = 0; i < n; i += 1) {
      if (this.down.has(id)) return;
      this.core(id).tick();
      this.drain(id);
    }
  }

  /** Ticks every live replica `n` times (one round each per tick), delivering in between. */
  tickAll(n = 1): void {
    for (let i = 0; i < n; i += 1) {
      for (const id of this.cores.keys()) this.tick(id);
      this.stabilize();
    }
  }

  /** Ticks the listed replicas `n` rounds, settling the cluster after each round. */
  tickSome(list: readonly NodeId[], n = 1): void {
    for (let i = 0; i < n; i += 1) {
      for (const id of list) this.tick(id);
      this.stabilize();
    }
  }

  /** Makes `id` campaign by running out its election timer, then settles the cluster. */
  elect(id: NodeId): void {
    const core = this.core(id);
    for (let i = 0; i < 4 * 10 + 100 && !core.isLeader(); i += 1) {
      core.tick();
      this.drain(id);
      this.stabilize();
    }
  }

  propose(id: NodeId, ...texts: string[]): ReturnType<RaftCore['propose']> {
    const result = this.core(id).propose(texts.map(bytes));
    this.drain(id);
    return result;
  }

  /** Cuts the link from `a` to `b` (one way). */
  cutLink(a: NodeId, b: NodeId): void {
    this.cut.add(`${a}>${b}`);
  }

  /** Cuts every link between `id` and the others, both ways. */
  isolate(id: NodeId): void {
    for (const other of this.cores.keys()) {
      if (other === id) continue;
      this.cutLink(id, other);
      this.cutLink(other, id);
    }
  }

  heal(): void {
    this.cut.clear();
  }

  /** Stops persisting `id`'s Readies until `release(id)`: its disk is "slow". */
  hold(id: NodeId): void {
    this.holding.add(id);
  }

  /** Completes `id`'s held writes in order. */
  release(id: NodeId): void {
    this.holding.delete(id);
    const readies = this.held.get(id) ?? [];
    this.held.delete(id);
    for (const ready of readies) this.complete(id, ready);
    this.drain(id);
  }

  /** Crash: the replica loses everything not on its disk (held writes included). */
  crash(id: NodeId): void {
    this.down.add(id);
    this.held.delete(id);
    this.holding.delete(id);
    this.queue = this.queue.filter((m) => m.to !== id && m.from !== id);
  }

  /** Restart from disk; the state machine restarts empty and replays what the core hands it. */
  restart(id: NodeId): void {
    this.down.delete(id);
    const disk = this.disks.get(id)!;
    this.cores.set(id, new RaftCore(this.configs.get(id)!, disk.load()));
    const list: Applied[] = [];
    const texts = disk.snapshot === null ? [] : decoder.decode(joinChunks(disk.snapshot.data)).split(',');
    for (const text of texts) {
      if (text !== '') list.push({ index: 0, term: 0, type: EntryType.Normal, text });
    }
    this.applied.set(id, list);
    this.drain(id);
  }

  isDown(id: NodeId): boolean {
    return this.down.has(id);
  }

  /** Processes every replica's output and delivers queued messages until quiet. */
  stabilize(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round += 1) {
      for (const id of this.cores.keys()) this.drain(id);
      if (this.queue.length === 0) return;
      const batch = this.queue;
      this.queue = [];
      for (const m of batch) this.deliver(m);
    }
    throw new Error('harness: cluster did not stabilize');
  }

  /**
   * Delivers queued messages one at a time (FIFO), handling the receiver's output after each,
   * until `done()` holds; returns false if the network went quiet first.
   */
  stabilizeUntil(done: () => boolean, maxMessages = 100_000): boolean {
    for (let i = 0; i < maxMessages; i += 1) {
      for (const id of this.cores.keys()) this.drain(id);
      if (done()) return true;
      const m = this.queue.shift();
      if (m === undefined) return done();
      this.deliver(m);
    }
    throw new Error('harness: stabilizeUntil did not finish');
  }

  /** Delivers only the queued messages matching `filter` (others stay queued). */
  deliverWhere(filter: (m: Message) => boolean): void {
    const keep: Message[] = [];
    const go: Message[] = [];
    for (const m of this.queue) (filter(m) ? go : keep).push(m);
    this.queue = keep;
    for (const m of go) this.deliver(m);
    for (const id of this.cores.keys()) this.drain(id);
  }

  /** Removes queued messages matching `filter` (lost in the network). */
  dropWhere(filter: (m: Message) => boolean): number {
    const before = this.queue.length;
    this.queue = this.queue.filter((m) => !filter(m));
    return before - this.queue.length;
  }

  pending(): readonly Message[] {
    return this.queue;
  }

  /** Texts of the Normal entries `id` applied, in order. */
  appliedTexts(id: NodeId): string[] {
    return this.applied.get(id)!.filter((a) => a.type === EntryType.Normal).map((a) => a.text);
  }

  leaders(): NodeId[] {
    return [...this.cores.entries()]
      .filter(([id, core]) => !this.down.has(id) && core.isLeader())
      .map(([id]) => id);
  }

  /** Takes a snapshot of `id` at its applied index; the data is the applied texts. */
  snapshot(id: NodeId, retainEntries = 0): Snapshot {
    const core = this.core(id);
    const data = bytes(this.appliedTexts(id).join(','));
    const snapshot = core.snapshotTaken(core.appliedIndex(), new ChunkedSnapshotData([data]), retainEntries);
    this.disks.get(id)!.saveSnapshot(snapshot);
    return snapshot;
  }

  private deliver(m: Message): void {
    this.delivered.push(m);
    if (this.down.has(m.to) || this.cut.has(`${m.from}>${m.to}`)) return;
    const core = this.cores.get(m.to);
    if (core === undefined) return;
    core.step(m);
  }

  /** Handles every Ready of `id`: persist (or hold), send, apply. */
  drain(id: NodeId): void {
    if (this.down.has(id)) return;
    const core = this.core(id);
    for (let ready = core.ready(); ready !== null; ready = core.ready()) {
      if (ready.snapshot !== null) this.restoredFrom.set(id, decoder.decode(joinChunks(ready.snapshot.data)));
      this.queue.push(...ready.messages, ...snapshotMessages(ready.snapshotSends));
      this.applyCommitted(id, ready);
      if (this.holding.has(id)) {
        const list = this.held.get(id) ?? [];
        list.push(ready);
        this.held.set(id, list);
      } else {
        this.complete(id, ready);
      }
    }
  }

  private complete(id: NodeId, ready: Ready): void {
    const disk = this.disks.get(id)!;
    if (ready.snapshot !== null) disk.saveSnapshot(ready.snapshot);
    disk.save(ready.hardState, ready.entries);
    this.core(id).onPersisted(ready);
    this.queue.push(...ready.messagesAfterPersist);
  }

  private applyCommitted(id: NodeId, ready: Ready): void {
    const list = this.applied.get(id)!;
    if (ready.snapshot !== null) {
      // The state machine restarts from the snapshot: record what it covers as one marker.
      list.length = 0;
      for (const text of decoder.decode(joinChunks(ready.snapshot.data)).split(',')) {
        if (text !== '') list.push({ index: 0, term: 0, type: EntryType.Normal, text });
      }
    }
    for (const e of ready.committed) {
      list.push({ index: e.index, term: e.term, type: e.type, text: decoder.decode(e.data) });
    }
  }
}

/** A tiny deterministic generator in [0.3, 1). */
function lcg(seed: number): () => number {
  let state = seed * 7919;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return 0.3 + (0.7 * state) / 2147483648;
  };
}

export function isType<T extends Message['type']>(type: T) {
  return (m: Message): m is Extract<Message, { type: T }> => m.type === type;
}

export { MessageType };

/**
 * Three voters n1-n3; n1 leads and 'x' is committed by n1 and n2 while n3 hears nothing (its
 * link from n1 is cut). For the scripts of replicas that lose what they acknowledged.
 */
export function commitWithoutN3(
  config: HarnessOptions['config'] = {},
): { h: Harness; index: number } {
  const h = new Harness(['n1', 'n2', 'n3'], { config });
  h.elect('n1');
  h.tickAll(1);
  h.cutLink('n1', 'n3');
  const proposed = h.propose('n1', 'x');
  if (!proposed.ok) throw new Error('n1 refused the proposal');
  h.stabilize();
  if (h.core('n1').commitIndex() !== proposed.index || h.core('n3').lastIndex() >= proposed.index) {
    throw new Error("setup: 'x' was not committed without n3");
  }
  return { h, index: proposed.index };
}
