// One simulated replica: a pure RaftCore driven the way a real driver drives it, against a
// simulated clock (ticks with this replica's own drift), disk (writes durable when their
// simulated fsync completes, in order; some fsyncs are very slow) and network. A crash drops the
// core and the pending writes but a random oldest few, which reach the disk all the same; a
// restart builds a new core from what the disk holds.

import type { RaftConfig } from '../../src/core/config.js';
import { RaftCore } from '../../src/core/raft.js';
import { mustPersist, type Ready, snapshotMessages } from '../../src/core/ready.js';
import {
  ChunkedSnapshotData,
  MessageType,
  type Entry,
  type Message,
  type NodeId,
  type RestoredState,
} from '../../src/types.js';
import type { Checker } from './checker.js';
import type { EventQueue } from './event-queue.js';
import { HashStateMachine } from './hash-state-machine.js';
import type { Prng } from '../../src/prng.js';
import { SimDisk } from './sim-disk.js';
import type { SimNetwork } from './sim-network.js';

export interface SimNodeParams {
  readonly raft: Omit<RaftConfig, 'id' | 'random'>;
  readonly tickPeriodMs: number;
  readonly fsyncMinMs: number;
  readonly fsyncMaxMs: number;
  readonly snapshotEveryEntries: number;
  readonly retainEntries: number;
  readonly fillerBytesMax: number;
  /** Chance that one fsync takes 100-600 ms (a stalled device). */
  readonly slowFsyncRate: number;
}

export interface SimHost {
  readonly queue: EventQueue;
  readonly network: SimNetwork;
  readonly checker: Checker;
  onApplied(node: SimNode, entry: Entry): void;
  trace(line: string): void;
}

export class SimNode {
  core: RaftCore | null = null;
  readonly disk = new SimDisk();
  sm: HashStateMachine;
  /** Bumped by every start and crash; events of an older generation are void. */
  private generation = 0;
  removed = false;
  started = false;
  private writeTail = 0;
  /** Durable effects of the writes issued and not yet complete, oldest first. */
  private unsynced: (() => void)[] = [];
  private lastSnapshotIndex = 0;
  snapshotsTaken = 0;
  snapshotsRestored = 0;
  /** Damage ended by a repair from a peer, not by a leader (see src/core/repair.ts). */
  repairedWithoutLeader = 0;
  /** A stalled replica (event loop blocked) handles nothing until it resumes. */
  private stalled = false;
  private missedTicks = 0;
  private deferred: (() => void)[] = [];

  constructor(
    readonly id: NodeId,
    private readonly host: SimHost,
    private readonly params: SimNodeParams,
    private readonly prng: Prng,
  ) {
    this.sm = new HashStateMachine(params.fillerBytesMax);
  }

  isUp(): boolean {
    return this.core !== null;
  }

  /** Starts (or restarts) from the disk; `initial` is written first if the disk is empty. */
  start(initial: RestoredState | null): void {
    if (this.core !== null) return;
    this.started = true;
    if (initial !== null && this.disk.isEmpty()) this.disk.save(initial.hardState, initial.entries);
    const state = this.disk.load();
    const config = { ...this.params.raft, id: this.id, random: () => this.prng.next() };
    this.core = new RaftCore(config, state);
    this.sm = new HashStateMachine(this.params.fillerBytesMax);
    if (state.snapshot !== null) {
      this.sm.restore(state.snapshot.data);
      this.host.checker.onRestore(this.id, this.sm.state());
    }
    this.lastSnapshotIndex = state.snapshot?.meta.index ?? 0;
    this.generation += 1;
    this.writeTail = this.host.queue.now();
    this.scheduleTick(this.generation, this.prng.next() * this.params.tickPeriodMs);
    this.process();
  }

  /** Stops the replica; a random number of its oldest pending writes still reach the disk. */
  crash(): void {
    if (this.core === null) return;
    const through = this.prng.int(this.unsynced.length + 1);
    for (const write of this.unsynced.slice(0, through)) write();
    this.unsynced = [];
    this.core = null;
    this.generation += 1;
    this.stalled = false;
    this.missedTicks = 0;
    this.deferred = [];
  }

  isStalled(): boolean {
    return this.stalled;
  }

  /**
   * The replica's event loop blocks for `ms`: ticks are missed, messages and fsync completions
   * queue up. On resume it does what RaftNode does: the lease clock catches up
   * (`advanceClock`), one real tick, then the queued I/O in arrival order.
   */
  stall(ms: number): void {
    if (this.core === null || this.stalled) return;
    this.stalled = true;
    const generation = this.generation;
    this.host.queue.after(ms, () => {
      if (generation === this.generation) this.resume();
    });
  }

  private resume(): void {
    const core = this.core!;
    this.stalled = false;
    if (this.missedTicks > 0) {
      core.advanceClock(this.missedTicks - 1);
      core.tick();
      this.missedTicks = 0;
      this.process();
    }
    const deferred = this.deferred;
    this.deferred = [];
    for (const run of deferred) run();
  }

  deliver(m: Message): void {
    const core = this.core;
    if (core === null) return;
    if (this.stalled) {
      this.deferred.push(() => this.deliver(m));
      return;
    }
    const damaged = core.storageDamage() !== null;
    core.step(m);
    const repair = m.type === MessageType.AppendEntries || m.type === MessageType.InstallSnapshot;
    if (damaged && repair && m.repair === true && core.storageDamage() === null) {
      this.repairedWithoutLeader += 1;
      this.host.trace(`${this.id} repaired by ${m.from} without a leader`);
    }
    this.process();
  }

  private scheduleTick(generation: number, delayMs: number): void {
    this.host.queue.after(delayMs, () => {
      if (generation !== this.generation || this.core === null) return;
      if (this.stalled) {
        this.missedTicks += 1;
      } else {
        this.core.tick();
        this.process();
      }
      this.scheduleTick(generation, this.params.tickPeriodMs);
    });
  }

  /** Handles every Ready: restore, send, apply, persist (completion scheduled), snapshot. */
  process(): void {
    const core = this.core;
    if (core === null) return;
    for (let ready = core.ready(); ready !== null; ready = core.ready()) {
      this.host.checker.onReadyEntries(this.id, core, ready.entries);
      if (ready.snapshot !== null) {
        this.sm.restore(ready.snapshot.data);
        this.host.checker.onRestore(this.id, this.sm.state());
        this.lastSnapshotIndex = ready.snapshot.meta.index;
        this.snapshotsRestored += 1;
      }
      for (const m of ready.messages) this.host.network.send(m);
      for (const m of snapshotMessages(ready.snapshotSends)) this.host.network.send(m);
      for (const entry of ready.committed) {
        this.sm.apply(entry);
        this.host.checker.onApply(this.id, entry, this.sm.state(), core.currentTerm());
        this.host.onApplied(this, entry);
      }
      this.persist(core, ready);
      this.maybeSnapshot(core);
    }
  }

  /** Writes issued and not yet durable (an I/O error is likelier to hit a busy replica). */
  pendingWrites(): number {
    return this.unsynced.length;
  }

  private fsyncDelay(): number {
    const { fsyncMinMs, fsyncMaxMs, slowFsyncRate } = this.params;
    if (this.prng.chance(slowFsyncRate)) return this.prng.range(100, 600);
    return fsyncMinMs + this.prng.next() * (fsyncMaxMs - fsyncMinMs);
  }

  /** Schedules this Ready's writes after every earlier write of this replica. */
  private persist(core: RaftCore, ready: Ready): void {
    const generation = this.generation;
    const now = this.host.queue.now();
    const done = Math.max(this.writeTail, now + (mustPersist(ready) ? this.fsyncDelay() : 0));
    this.writeTail = done;
    let writeDone = false;
    const write = (): void => {
      if (writeDone) return;
      writeDone = true;
      if (ready.snapshot !== null) this.disk.saveSnapshot(ready.snapshot);
      if (ready.hardState !== null || ready.entries.length > 0) {
        this.disk.save(ready.hardState, ready.entries);
      }
    };
    this.unsynced.push(write);
    const complete = (): void => {
      if (generation !== this.generation) return; // crashed first: written or lost by crash()
      this.synced(write);
      if (this.stalled) {
        this.deferred.push(complete); // durable, but the callback waits for the loop
        return;
      }
      core.onPersisted(ready);
      for (const m of ready.messagesAfterPersist) this.host.network.send(m);
      this.process();
    };
    this.host.queue.at(done, complete);
  }

  private maybeSnapshot(core: RaftCore): void {
    const due = this.sm.index - this.lastSnapshotIndex >= this.params.snapshotEveryEntries;
    // As RaftNode: a follower waiting for released payloads is served by a snapshot alone.
    if (!due && !(core.snapshotWanted() && this.sm.index > this.lastSnapshotIndex)) return;
    const { retainEntries } = this.params;
    // In chunks of a size that varies between snapshots, as a state machine's slices come:
    // InstallSnapshot chunks then straddle them.
    const chunkBytes = 1 + ((this.snapshotsTaken * 7919 + this.sm.index) % 300);
    const chunks = splitChunks(this.sm.snapshot(), chunkBytes);
    const snapshot = core.snapshotTaken(this.sm.index, new ChunkedSnapshotData(chunks), retainEntries);
    this.lastSnapshotIndex = this.sm.index;
    this.snapshotsTaken += 1;
    const generation = this.generation;
    const done = Math.max(this.writeTail, this.host.queue.now() + this.fsyncDelay());
    this.writeTail = done;
    let written = false;
    const write = (): void => {
      if (written) return;
      written = true;
      this.disk.saveSnapshot(snapshot);
    };
    this.unsynced.push(write);
    this.host.queue.at(done, () => {
      if (generation === this.generation) this.synced(write);
    });
  }

  /** A pending write completes: durable now, and no longer pending. */
  private synced(write: () => void): void {
    write();
    const position = this.unsynced.indexOf(write);
    if (position >= 0) this.unsynced.splice(position, 1);
  }
}

/** `data` in chunks of `chunkBytes` (the last shorter), each a view of it. */
function splitChunks(data: Uint8Array, chunkBytes: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += chunkBytes) out.push(data.subarray(at, at + chunkBytes));
  return out;
}
