// RaftNode: the I/O shell around the pure RaftCore. It turns milliseconds into ticks, batches
// everything proposed or received in one event-loop turn into one core round, persists each
// Ready through GroupStorage (whose group commit makes one fsync serve every group), sends
// through the Transport (the leader's appends go out before its own fsync completes, thesis
// 10.2.1), applies committed entries to the StateMachine, answers proposers, snapshots and
// compacts every `snapshotEntries` entries (in slices over several turns when the state machine
// offers `beginSnapshot`), and drives membership changes and transfers.
//
// Ordering rules it keeps (see core/ready.ts): storage calls are issued in Ready order;
// `core.onPersisted(ready)` and the Ready's after-persist messages happen only once that Ready's
// writes and all earlier ones are durable.

import { EventEmitter } from 'node:events';
import { assert } from '../core/assert.js';
import { refuseIncoming } from '../core/incoming-check.js';
import { bootstrapState, isEmptyState } from '../core/bootstrap.js';
import { ConfChangeType, decodeConfChange, type ConfChange } from '../core/conf-change.js';
import { RaftCore, type ProgressView, type ProposeResult, type Role } from '../core/raft.js';
import { type Ready, type SnapshotSend, snapshotMessages } from '../core/ready.js';
import {
  ChunkedSnapshotData,
  EntryType,
  type ClusterConfig,
  type Entry,
  type GroupId,
  type Message,
  type MessageType,
  type NodeId,
  type RestoredState,
  type Snapshot,
  type SnapshotData,
  type SnapshotSink,
  type StorageDamage,
} from '../types.js';
import { asStorageError } from '../storage/storage-error.js';
import { resolveOptions, type RaftNodeOptions, type ResolvedOptions } from './options.js';
import type { LogShare } from './log-budget.js';
import { RaftError } from './raft-error.js';
import type { SnapshotWork } from './state-machine.js';

/** What a successful `propose` resolves to: where the entry landed and what apply returned. */
export interface Proposed {
  readonly index: number;
  readonly term: number;
  readonly result: unknown;
}

export interface RaftNodeStatus {
  readonly id: NodeId;
  readonly group: GroupId;
  readonly role: Role;
  readonly term: number;
  readonly leaderId: NodeId | null;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly lastIndex: number;
  readonly snapshotIndex: number;
  readonly config: ClusterConfig;
  /** Leader only: each follower's replication progress. */
  readonly progress: Readonly<Record<NodeId, ProgressView>>;
  /** Proposals buffered or awaiting commit. */
  readonly proposalsPending: number;
  /** Messages from the network dropped unseen because the core would assert on them. */
  readonly rejectedMessages: number;
  /** Entries lost to bad bytes here and not yet repaired from the leader (RaftCore), or null. */
  readonly storageDamage: StorageDamage | null;
}

export interface RaftNodeEvents {
  /** The known leader or its term changed (`leaderId` null: no leader known). */
  'leader-change': [leaderId: NodeId | null, term: number];
  /** A membership change was applied (change null: configuration restored from a snapshot). */
  'config-change': [change: ConfChange | null, config: ClusterConfig];
  /** This member's removal from the group was applied. */
  removed: [];
  /**
   * The node stopped on an unexpected error; it is closed. A StorageError `io` or `busy`
   * (isRecoverableStorageError) is the disk's; anything else is a bug.
   */
  error: [error: Error];
  /** A message from the network was dropped: it contradicts what this node holds. */
  rejected: [rejection: { from: NodeId; type: MessageType; reason: string }];
  /** The entries this replica lost to bad bytes are held again (see RaftRepair). */
  repaired: [repair: RaftRepair];
}

/**
 * A replica's damage ended: the entries it lost to bad bytes up to `damage` are held again, sent
 * by the leader, or, with no leader, by a peer holding them (`fromPeer`, see core/repair.ts).
 */
export interface RaftRepair {
  readonly damage: StorageDamage;
  readonly from: NodeId;
  readonly fromPeer: boolean;
}

interface Waiter {
  readonly term: number;
  readonly resolve: (value: Proposed) => void;
  readonly reject: (error: Error) => void;
}

interface Buffered {
  readonly data: Uint8Array;
  readonly resolve: (value: Proposed) => void;
  readonly reject: (error: Error) => void;
}

interface Watcher {
  /** Returns true when finished (settled its promise). */
  readonly check: () => boolean;
  readonly cancel: (error: Error) => void;
}

/** A snapshot the state machine produces in slices, and the applied index it describes. */
interface SnapshotInProgress {
  readonly work: SnapshotWork;
  readonly index: number;
  /** appliedBytesTotal at `index`: once taken, the log holds what was applied after it. */
  readonly appliedBytesAtIndex: number;
  /** Storage writing the chunks as they come (GroupStorage.beginSnapshot), or null. */
  readonly sink: SnapshotSink | null;
  /** Without a sink: the chunks produced so far, saved together at the end. */
  readonly chunks: Uint8Array[];
  /** The chunk being written to the sink; the next slice waits for it (flow control). */
  writing: Promise<void> | null;
  /** The scheduled next slice; cleared on cancel so nothing runs after it. */
  next: NodeJS.Immediate | null;
}

const noop = (): void => undefined;

export class RaftNode {
  private rejectedMessages = 0;
  readonly id: NodeId;
  readonly group: GroupId;
  private readonly opts: ResolvedOptions;
  private readonly core: RaftCore;
  private readonly events = new EventEmitter();
  private buffered: Buffered[] = [];
  private readonly waiting = new Map<number, Waiter>();
  private readonly watchers = new Set<Watcher>();
  private flushScheduled = false;
  /** Resolves once every Ready handed out so far is durable and acknowledged to the core. */
  private persistTail: Promise<void> = Promise.resolve();
  /** Snapshot writes (not on the acknowledgement path). */
  private background: Promise<void> = Promise.resolve();
  private closed = false;
  private readonly ticker: NodeJS.Timeout;
  private lastTickMs: number;
  private applied: number;
  private lastSnapshotIndex: number;
  /** Size of the latest snapshot taken or restored, bytes. */
  private lastSnapshotBytes: number;
  /**
   * Index the snapshot rule counts from: that of the latest snapshot taken, restored or begun
   * (a sliced snapshot describes the state where it began, so the next one counts from there).
   */
  private snapshotBaseIndex: number;
  /**
   * Entry bytes ever applied, and that total at `snapshotBaseIndex` and at the index the log was
   * last compacted to. Applied minus the first is what the snapshot rule counts; applied minus
   * the second is what the log keeps in memory, reported to the log budget. They differ while a
   * sliced snapshot is being written: the rule counts from where the work began, but the entries
   * stay in memory until the snapshot is stored.
   */
  private appliedBytesTotal = 0;
  private snapshotBaseBytesTotal = 0;
  private compactedBytesTotal = 0;
  /** This group's part of the process's log budget, if it shares one. */
  private readonly logShare: LogShare | null;
  /** A snapshot being produced in slices (StateMachine.beginSnapshot); at most one. */
  private snapshotWork: SnapshotInProgress | null = null;
  /**
   * A finished work's snapshot is being stored and not yet taken. No other begins meanwhile:
   * the core still holds the previous snapshot, so the rule or snapshotWanted would ask again,
   * at the same index when nothing was applied since, and storing that second file removes the
   * first while the core, which skips a snapshot not newer than its own, still reads it.
   */
  private snapshotStoring = false;
  private lastLeader: NodeId | null = null;
  private lastTerm = 0;

  /**
   * Loads the group from storage (bootstrapping it from `options.bootstrap` when storage is
   * empty), restores the state machine from the latest snapshot, and starts ticking. Committed
   * entries after the snapshot are re-applied during the first turns. Throws `RaftConfigError`
   * for invalid options and whatever storage throws on load.
   */
  static async start(options: RaftNodeOptions): Promise<RaftNode> {
    const opts = resolveOptions(options);
    // A corrupt snapshot is repaired from a peer; a sole member has none, and its load fails
    // (the group stays down: what the snapshot held is lost, and starting empty would hide it).
    let state = await opts.storage.load({ dropCorruptSnapshot: !opts.soleMember });
    const damaged = (state.hardState.damage ?? null) !== null;
    if (isEmptyState(state) && !damaged && opts.bootstrap !== null) {
      state = bootstrapState(opts.bootstrap);
      await opts.storage.save(state.hardState, state.entries);
    }
    if (state.snapshot !== null) opts.stateMachine.restore(state.snapshot.data);
    return new RaftNode(opts, state);
  }

  private constructor(opts: ResolvedOptions, state: RestoredState) {
    this.opts = opts;
    this.logShare = opts.logBudget?.join() ?? null;
    this.id = opts.id;
    this.group = opts.group;
    this.core = new RaftCore(
      {
        id: opts.id,
        electionTicks: opts.electionTicks,
        heartbeatTicks: opts.heartbeatTicks,
        leaseTicks: opts.leaseTicks,
        inflightMessagesMax: opts.inflightMessagesMax,
        appendBytesMax: opts.appendBytesMax,
        snapshotChunkBytes: opts.snapshotChunkBytes,
        preVote: opts.preVote,
        checkQuorum: opts.checkQuorum,
        guardLostStorage: opts.guardLostStorage,
        soleMember: opts.soleMember,
        releaseAppliedPayloads: opts.releaseAppliedPayloads,
        payloadTailEntries: opts.retainEntries,
        payloadTailBytes: opts.retainBytes,
        random: opts.random,
      },
      state,
    );
    this.applied = state.snapshot?.meta.index ?? 0;
    this.lastSnapshotIndex = this.applied;
    this.lastSnapshotBytes = state.snapshot?.data.dataBytes ?? 0;
    this.snapshotBaseIndex = this.applied;
    this.lastTickMs = opts.nowMs();
    this.ticker = setInterval(() => this.onTimer(), opts.tickMs);
    this.scheduleFlush();
  }

  // ------------------------------------------------------------------ public API

  /**
   * Replicates `data`. Resolves once the entry is committed (durable on a majority) and applied
   * here, with apply's result. Rejects with RaftError: `not_leader` (with the leader's id, when
   * known) or `busy` when nothing was appended; `leadership_lost` when it was appended but this
   * node lost leadership before it committed (it may still commit); `closed`.
   */
  propose(data: Uint8Array): Promise<Proposed> {
    if (this.closed) return Promise.reject(new RaftError('closed', 'node closed'));
    if (!this.core.isLeader()) return Promise.reject(this.notLeader());
    if (this.buffered.length + this.waiting.size >= this.opts.proposalsPendingMax) {
      return Promise.reject(new RaftError('busy', 'too many proposals pending'));
    }
    return new Promise((resolve, reject) => {
      this.buffered.push({ data, resolve, reject });
      this.scheduleFlush();
    });
  }

  /** Hands an incoming message (from the transport, via GroupRouter) to the core. */
  receive(message: Message): void {
    if (this.closed || message.to !== this.id) return;
    const refusal = refuseIncoming(this.core, message);
    if (refusal !== null) {
      // A broken or hostile peer: drop its message, keep the group (the core would assert).
      this.rejectedMessages += 1;
      this.emit('rejected', { from: message.from, type: message.type, reason: refusal });
      return;
    }
    const damage = this.core.storageDamage();
    try {
      this.core.step(message);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (damage !== null && this.core.storageDamage() === null) {
      const fromPeer = 'repair' in message && message.repair === true;
      this.emit('repaired', { damage, from: message.from, fromPeer });
    }
    this.scheduleFlush();
  }

  isLeader(): boolean {
    return this.core.isLeader();
  }

  leaderId(): NodeId | null {
    return this.core.leaderId();
  }

  term(): number {
    return this.core.currentTerm();
  }

  /**
   * True when this node may serve reads from its own state without a round trip: it is the
   * leader, holds the leader lease (a quorum acknowledged it within `leaseTicks`, see
   * RaftCore.hasLeaderLease) and has applied everything up to its term's first entry.
   */
  hasLeaderLease(): boolean {
    if (this.closed) return false;
    this.catchUpTicks();
    return this.core.hasLeaderLease() && this.applied >= this.core.termStartIndex();
  }

  /** Subscribes to node events; returns a function that unsubscribes. */
  on<E extends keyof RaftNodeEvents>(
    event: E,
    listener: (...args: RaftNodeEvents[E]) => void,
  ): () => void {
    const wrapped = listener as (...args: unknown[]) => void;
    this.events.on(event, wrapped);
    return () => this.events.off(event, wrapped);
  }

  /**
   * Hands leadership to voter `to` (thesis 3.10). Resolves once `to` is known to lead; rejects
   * `not_leader`, `invalid_conf_change` (not a voter) or `transfer_failed` after two election
   * timeouts.
   */
  transferLeadership(to: NodeId): Promise<void> {
    if (this.closed) return Promise.reject(new RaftError('closed', 'node closed'));
    if (to === this.id && this.core.isLeader()) return Promise.resolve();
    const result = this.core.transferLeadership(to);
    if (!result.ok) return Promise.reject(this.refusal(result));
    this.scheduleFlush();
    const deadlineMs = this.opts.nowMs() + 2 * this.electionMs();
    return this.watch((resolve, reject) => {
      if (this.core.leaderId() === to) return resolve();
      if (this.opts.nowMs() > deadlineMs) {
        reject(new RaftError('transfer_failed', `leadership did not move to ${to}`));
      }
    });
  }

  /** Adds a non-voting member; resolves once the change is committed and applied here. */
  addLearner(id: NodeId): Promise<void> {
    return this.proposeConfChange({ type: ConfChangeType.AddLearner, node: id });
  }

  /**
   * Adds a voter the safe way (thesis 4.2.1): as a learner first, then rounds of replication
   * until a round completes within an election timeout, then promotion. Rejects
   * `catch_up_failed` after `catchUpRoundsMax` rounds, or as the changes themselves do.
   */
  async addVoter(id: NodeId): Promise<void> {
    const config = this.core.config();
    if (config.voters.includes(id)) {
      throw new RaftError('invalid_conf_change', `${id} is already a voter`);
    }
    if (!config.learners.includes(id)) await this.addLearner(id);
    await this.catchUp(id);
    await this.proposeConfChange({ type: ConfChangeType.PromoteLearner, node: id });
  }

  /** Removes a voter or learner; resolves once the change is committed and applied here. */
  removeMember(id: NodeId): Promise<void> {
    return this.proposeConfChange({ type: ConfChangeType.RemoveMember, node: id });
  }

  status(): RaftNodeStatus {
    const progress: Record<NodeId, ProgressView> = {};
    for (const [id, view] of this.core.progressAll()) progress[id] = view;
    return {
      id: this.id,
      group: this.group,
      role: this.core.role(),
      term: this.core.currentTerm(),
      leaderId: this.core.leaderId(),
      commitIndex: this.core.commitIndex(),
      appliedIndex: this.applied,
      lastIndex: this.core.lastIndex(),
      snapshotIndex: this.lastSnapshotIndex,
      config: this.core.config(),
      progress,
      proposalsPending: this.buffered.length + this.waiting.size,
      rejectedMessages: this.rejectedMessages,
      storageDamage: this.core.storageDamage(),
    };
  }

  /**
   * Stops ticking, abandons a snapshot in progress, fails everything pending with `closed` and
   * waits for writes in flight. Does not close the storage or the transport (they are shared).
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ticker);
    this.logShare?.leave();
    try {
      this.cancelSnapshotWork();
    } catch (error) {
      // A cancel that throws is a bug; the node is stopping anyway, so report it and go on.
      this.report(error);
    }
    const error = new RaftError('closed', 'node closed');
    for (const proposal of this.buffered) proposal.reject(error);
    this.buffered = [];
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
    for (const watcher of this.watchers) watcher.cancel(error);
    this.watchers.clear();
    await this.persistTail.catch(noop);
    await this.background.catch(noop);
  }

  // ------------------------------------------------------------------ the loop

  private onTimer(): void {
    if (this.closed) return;
    this.catchUpTicks();
    this.scheduleFlush();
  }

  /**
   * Advances the core by the ticks due since the last one, by the monotonic clock, so the lease
   * stays honest when the event loop stalls: a stalled leader's lease clock catches up before it
   * answers `hasLeaderLease`. Missed ticks move only the lease clock (`advanceClock`); the role
   * timers get one tick, so a stall alone starts no election and no step-down.
   */
  private catchUpTicks(): void {
    const now = this.opts.nowMs();
    const due = Math.floor((now - this.lastTickMs) / this.opts.tickMs);
    if (due <= 0) return;
    this.lastTickMs += due * this.opts.tickMs;
    try {
      this.core.advanceClock(due - 1);
      this.core.tick();
    } catch (error) {
      this.fail(error);
      return;
    }
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || this.closed) return;
    this.flushScheduled = true;
    // setImmediate, not a microtask: everything proposed or received during this turn's I/O
    // callbacks joins one append and one storage batch.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed) return;
    try {
      this.rejectLostLeadership();
      this.proposeBuffered();
      this.handleReadies();
      this.afterStateChange();
    } catch (error) {
      this.fail(error);
    }
  }

  private proposeBuffered(): void {
    if (this.buffered.length === 0) return;
    const batch = this.buffered;
    this.buffered = [];
    const result = this.core.propose(batch.map((proposal) => proposal.data));
    if (!result.ok) {
      const error = this.refusal(result);
      for (const proposal of batch) proposal.reject(error);
      return;
    }
    for (let i = 0; i < batch.length; i += 1) {
      const { resolve, reject } = batch[i]!;
      this.waiting.set(result.index + i, { term: result.term, resolve, reject });
    }
  }

  private handleReadies(): void {
    for (let ready = this.core.ready(); ready !== null; ready = this.core.ready()) {
      if (ready.snapshot !== null) this.restoreSnapshot(ready.snapshot);
      this.persist(ready);
      if (ready.messages.length > 0) this.opts.transport.send(this.group, ready.messages);
      if (ready.snapshotSends.length > 0) this.sendSnapshotChunks(ready.snapshotSends);
      this.applyCommitted(ready.committed);
      this.maybeSnapshot();
    }
  }

  /**
   * Reads each InstallSnapshot chunk from the snapshot's data (a stored one: a frame or two of
   * its file) and sends it. A read that fails (the file went bad) stops the node like a failed
   * write: its group is restarted, and a load that finds the file corrupt drops it for repair.
   */
  private sendSnapshotChunks(sends: readonly SnapshotSend[]): void {
    let messages: Message[];
    try {
      messages = snapshotMessages(sends);
    } catch (error) {
      this.fail(asStorageError(error));
      return;
    }
    this.opts.transport.send(this.group, messages);
  }

  /**
   * Saves `snapshot`; once it is durable, the core keeps the stored data (read from its file
   * when needed) instead of the chunks it was given, which can then go.
   */
  private saveSnapshot(snapshot: Snapshot): Promise<void> {
    return this.opts.storage.saveSnapshot(snapshot).then((data) => {
      if (!this.closed) this.core.snapshotStored(snapshot.meta.index, data);
    });
  }

  /** Issues the Ready's writes now; acknowledges them to the core in Ready order. */
  private persist(ready: Ready): void {
    const { storage } = this.opts;
    const writes: Promise<void>[] = [this.persistTail];
    if (ready.snapshot !== null) writes.push(this.saveSnapshot(ready.snapshot));
    if (ready.hardState !== null || ready.entries.length > 0) {
      writes.push(storage.save(ready.hardState, ready.entries));
    }
    this.persistTail = Promise.all(writes).then(
      () => this.onPersisted(ready),
      (error: unknown) => this.fail(asStorageError(error)),
    );
  }

  private onPersisted(ready: Ready): void {
    if (this.closed) return;
    try {
      this.core.onPersisted(ready);
    } catch (error) {
      this.fail(error);
      return;
    }
    if (ready.messagesAfterPersist.length > 0) {
      this.opts.transport.send(this.group, ready.messagesAfterPersist);
    }
    this.scheduleFlush();
  }

  private restoreSnapshot(snapshot: Snapshot): void {
    // The work describes a state the restore replaces (and the core could not take it: its
    // index is behind the restored snapshot's), so abandon it before the state goes.
    this.cancelSnapshotWork();
    this.opts.stateMachine.restore(snapshot.data);
    this.applied = snapshot.meta.index;
    this.lastSnapshotIndex = snapshot.meta.index;
    this.lastSnapshotBytes = snapshot.data.dataBytes;
    this.countSnapshotFromApplied();
    this.compactedTo(this.appliedBytesTotal);
    this.emit('config-change', null, snapshot.meta.config);
  }

  private applyCommitted(entries: readonly Entry[]): void {
    for (const entry of entries) {
      this.applied = entry.index;
      this.appliedBytesTotal += entry.data.length;
      let result: unknown;
      if (entry.type === EntryType.Normal) {
        const { index, term, data } = entry;
        result = this.opts.stateMachine.apply({ index, term, data });
      } else if (entry.type === EntryType.ConfChange) {
        this.onConfChangeApplied(decodeConfChange(entry.data));
      }
      const waiter = this.waiting.get(entry.index);
      if (waiter === undefined) continue;
      this.waiting.delete(entry.index);
      if (waiter.term === entry.term) {
        waiter.resolve({ index: entry.index, term: entry.term, result });
      } else {
        // Another leader's entry took this index: ours was never committed.
        waiter.reject(new RaftError('leadership_lost', 'proposal overwritten by another leader'));
      }
    }
    if (entries.length > 0) this.opts.stateMachine.afterApply?.();
  }

  private onConfChangeApplied(change: ConfChange): void {
    this.emit('config-change', change, this.core.config());
    if (change.type === ConfChangeType.RemoveMember && change.node === this.id) {
      this.emit('removed');
    }
  }

  /**
   * Snapshots once `snapshotEntries` entries (or entries of `snapshotLogBytes` bytes, or this
   * group's share of an exceeded `logBudget`) were applied since the last snapshot and their
   * bytes reach that snapshot's size. A snapshot costs
   * time and disk in proportion to the whole state (a queue's backlog of payloads), so taking
   * one only after as many bytes were logged keeps compaction amortized O(1) per logged byte:
   * a large backlog is not re-encoded every few thousand writes. A state machine with
   * `beginSnapshot` is snapshotted in slices over later turns (see beginSnapshotWork); one at a
   * time, and the rule counts from where it began.
   */
  private maybeSnapshot(): void {
    this.logShare?.set(this.appliedBytesTotal - this.compactedBytesTotal);
    if (this.snapshotWork !== null || this.snapshotStoring) return;
    const entriesDue = this.applied - this.snapshotBaseIndex >= this.opts.snapshotEntries;
    const bytesSinceSnapshot = this.appliedBytesTotal - this.snapshotBaseBytesTotal;
    const bytesDue =
      bytesSinceSnapshot >= this.opts.snapshotLogBytes ||
      (this.logShare?.due() ?? false);
    // A follower waiting for payloads the leader released is served by a snapshot alone.
    const wanted = this.core.snapshotWanted();
    if (!entriesDue && !bytesDue && !wanted) return;
    if (!wanted && bytesSinceSnapshot < this.lastSnapshotBytes) return;
    const { stateMachine } = this.opts;
    if (stateMachine.beginSnapshot !== undefined) {
      this.beginSnapshotWork(stateMachine.beginSnapshot());
      return;
    }
    const data = new ChunkedSnapshotData([stateMachine.snapshot()]);
    const snapshot = this.snapshotTaken(this.applied, data);
    this.countSnapshotFromApplied();
    this.compactedTo(this.appliedBytesTotal);
    this.keepSnapshot(snapshot);
  }

  /**
   * Starts the snapshot `work` of the state at `applied`, one slice per turn so ticks, appends
   * and applies run between slices instead of waiting for the whole encode. The accounting
   * restarts now: the snapshot will describe this index, whatever is applied meanwhile.
   */
  private beginSnapshotWork(work: SnapshotWork): void {
    const index = this.applied;
    const sink = this.opts.storage.beginSnapshot?.(this.core.snapshotMetaAt(index)) ?? null;
    const pending: SnapshotInProgress = {
      work,
      index,
      appliedBytesAtIndex: this.appliedBytesTotal,
      sink,
      chunks: [],
      writing: null,
      next: null,
    };
    this.snapshotWork = pending;
    this.countSnapshotFromApplied();
    this.scheduleSnapshotSlice(pending);
  }

  private scheduleSnapshotSlice(pending: SnapshotInProgress): void {
    // setImmediate, a macrotask: the I/O and flushes queued meanwhile run before the next slice.
    pending.next = setImmediate(() => this.snapshotSlice(pending));
  }

  /** One slice of the work; a step that throws is a bug, handled like an apply that throws. */
  private snapshotSlice(pending: SnapshotInProgress): void {
    pending.next = null;
    try {
      // Cancelling clears the scheduled slice, so only the live work of an open node gets here.
      assert(this.snapshotWork === pending && !this.closed, 'slice of abandoned snapshot work');
      const { chunk, done } = pending.work.step(this.opts.snapshotSliceBytes);
      if (chunk.byteLength > 0 && pending.sink !== null) {
        this.writeSnapshotChunk(pending, chunk, done);
        return;
      }
      if (chunk.byteLength > 0) pending.chunks.push(chunk);
      this.afterSnapshotSlice(pending, done);
    } catch (error) {
      this.fail(error);
    }
  }

  private afterSnapshotSlice(pending: SnapshotInProgress, done: boolean): void {
    if (!done) {
      this.scheduleSnapshotSlice(pending);
      return;
    }
    this.snapshotWork = null;
    this.finishSnapshotWork(pending);
  }

  /**
   * Hands `chunk` to storage and goes on once it is written: the work runs no faster than the
   * disk takes it, so no more than a chunk waits in memory. An abandoned work stops here.
   */
  private writeSnapshotChunk(pending: SnapshotInProgress, chunk: Uint8Array, done: boolean): void {
    const writing = pending.sink!.append(chunk);
    pending.writing = writing;
    writing.then(
      () => {
        pending.writing = null;
        if (this.snapshotWork === pending && !this.closed) this.afterSnapshotSlice(pending, done);
      },
      (error: unknown) => {
        if (this.snapshotWork === pending) this.fail(asStorageError(error));
      },
    );
  }

  /** The core's snapshotTaken with this node's retention bounds. */
  private snapshotTaken(index: number, data: SnapshotData): Snapshot {
    return this.core.snapshotTaken(index, data, this.opts.retainEntries, this.opts.retainBytes);
  }

  /**
   * Takes the finished snapshot at the index where it began; entries applied since stay in the
   * log (compaction keeps at most `retainEntries` and `retainBytes` behind it). A restore
   * cancels the work, so the index is newer than the latest snapshot (the core asserts it).
   */
  private finishSnapshotWork(pending: SnapshotInProgress): void {
    const { index, sink } = pending;
    if (sink === null) {
      const data = new ChunkedSnapshotData(pending.chunks);
      this.keepSnapshot(this.snapshotTaken(index, data));
      this.compactedTo(pending.appliedBytesAtIndex);
      return;
    }
    // Taken once stored: the core then holds the file's handle, never the bytes. A snapshot
    // installed meanwhile is newer (it passed our commit index): this one is dropped.
    this.snapshotStoring = true;
    const stored = sink.finish().then((data) => {
      this.snapshotStoring = false;
      if (this.closed || this.core.snapshotIndex() >= index) return;
      this.snapshotTaken(index, data);
      this.lastSnapshotIndex = index;
      this.lastSnapshotBytes = data.dataBytes;
      this.compactedTo(pending.appliedBytesAtIndex);
    });
    this.inBackground(stored);
  }

  /** Abandons the snapshot in progress: the state it describes was replaced, or the node stops. */
  private cancelSnapshotWork(): void {
    const pending = this.snapshotWork;
    if (pending === null) return;
    this.snapshotWork = null;
    if (pending.next !== null) clearImmediate(pending.next);
    pending.next = null;
    pending.work.cancel();
    // After the chunk being written, if any: the file is removed, not left half written.
    const sink = pending.sink;
    if (sink === null) return;
    const written = (pending.writing ?? Promise.resolve()).then(noop, noop);
    // In `background`, which close awaits: the file's descriptor is closed before it resolves.
    this.inBackground(written.then(() => sink.abort()).then(noop, noop));
  }

  /** Work close awaits (snapshot writes and aborts); a failure of it fails the node. */
  private inBackground(work: Promise<unknown>): void {
    this.background = Promise.all([this.background, work]).then(noop, (error: unknown) =>
      this.fail(asStorageError(error)),
    );
  }

  /**
   * The log was compacted to the index where `appliedBytesTotal` was `bytesTotal` (entries kept
   * behind a snapshot for lagging followers, bounded by retainEntries and retainBytes, are not
   * counted): the log budget hears what the log now holds.
   */
  private compactedTo(bytesTotal: number): void {
    this.compactedBytesTotal = Math.max(this.compactedBytesTotal, bytesTotal);
    this.logShare?.set(this.appliedBytesTotal - this.compactedBytesTotal);
  }

  /** The snapshot rule counts entries and bytes from the applied index on. */
  private countSnapshotFromApplied(): void {
    this.snapshotBaseIndex = this.applied;
    this.snapshotBaseBytesTotal = this.appliedBytesTotal;
  }

  /** Records a snapshot taken here and writes it. */
  private keepSnapshot(snapshot: Snapshot): void {
    this.lastSnapshotIndex = snapshot.meta.index;
    this.lastSnapshotBytes = snapshot.data.dataBytes;
    // Off the acknowledgement path: a slow snapshot write must not hold up commits.
    this.inBackground(this.saveSnapshot(snapshot));
  }

  private afterStateChange(): void {
    const leader = this.core.leaderId();
    const term = this.core.currentTerm();
    if (leader !== this.lastLeader || (leader !== null && term !== this.lastTerm)) {
      this.lastLeader = leader;
      this.lastTerm = term;
      this.emit('leader-change', leader, term);
    }
    this.rejectLostLeadership();
    for (const watcher of this.watchers) {
      if (watcher.check()) this.watchers.delete(watcher);
    }
  }

  /** Proposals appended in a term this node no longer leads: their outcome is unknown. */
  private rejectLostLeadership(): void {
    if (this.waiting.size === 0) return;
    const leading = this.core.isLeader();
    const term = this.core.currentTerm();
    for (const [index, waiter] of this.waiting) {
      if (leading && waiter.term === term) continue;
      this.waiting.delete(index);
      const message = 'leadership lost before the proposal committed';
      waiter.reject(new RaftError('leadership_lost', message));
    }
  }

  // ------------------------------------------------------------------ membership helpers

  private proposeConfChange(change: ConfChange): Promise<void> {
    if (this.closed) return Promise.reject(new RaftError('closed', 'node closed'));
    const result = this.core.proposeConfChange(change);
    if (!result.ok) return Promise.reject(this.refusal(result));
    this.scheduleFlush();
    return new Promise((resolve, reject) => {
      this.waiting.set(result.index, { term: result.term, resolve: () => resolve(), reject });
    });
  }

  /** Thesis 4.2.1: rounds of replication until one completes within an election timeout. */
  private catchUp(id: NodeId): Promise<void> {
    let round = 1;
    let target = this.core.lastIndex();
    let roundStartMs = this.opts.nowMs();
    return this.watch((resolve, reject) => {
      if (!this.core.isLeader()) return reject(this.notLeader());
      const progress = this.core.progressOf(id);
      if (progress === null) {
        return reject(new RaftError('invalid_conf_change', `${id} is not a member`));
      }
      const elapsedMs = this.opts.nowMs() - roundStartMs;
      const done = progress.match >= target && progress.state === 'replicate';
      if (done && elapsedMs <= this.electionMs()) return resolve();
      if (!done && elapsedMs <= this.electionMs()) return;
      round += 1;
      if (round > this.opts.catchUpRoundsMax) {
        const message = `${id} did not catch up in ${round - 1} rounds`;
        return reject(new RaftError('catch_up_failed', message));
      }
      target = this.core.lastIndex();
      roundStartMs = this.opts.nowMs();
    });
  }

  /**
   * A promise settled by `check`, which runs after every turn of the loop (at least once per
   * tick) until it settles it. Closing the node rejects it with `closed`. Public so that the
   * application waits on what the node applies without polling.
   */
  watch(
    check: (resolve: () => void, reject: (error: Error) => void) => void,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void): void => {
        settled = true;
        fn();
      };
      this.watchers.add({
        check: () => {
          check(
            () => settle(resolve),
            (error) => settle(() => reject(error)),
          );
          return settled;
        },
        cancel: (error) => reject(error),
      });
      this.scheduleFlush();
    });
  }

  /**
   * Resolves once this node has applied entry `index` (at once when it has). Judged after every
   * turn (the turn that applies the entry settles it), so the application waits for an apply
   * without polling. Rejects with RaftError `closed` when the node is or becomes closed first.
   */
  appliedThrough(index: number): Promise<void> {
    if (this.applied >= index) return Promise.resolve();
    if (this.closed) return Promise.reject(new RaftError('closed', 'node closed'));
    return this.watch((resolve) => {
      if (this.applied >= index) resolve();
    });
  }

  // ------------------------------------------------------------------ small helpers

  private electionMs(): number {
    return this.opts.electionTicks * this.opts.tickMs;
  }

  private notLeader(): RaftError {
    const leader = this.core.leaderId();
    return new RaftError('not_leader', `not the leader (leader: ${leader ?? 'unknown'})`, leader);
  }

  private refusal(result: Extract<ProposeResult, { ok: false }>): RaftError {
    switch (result.reason) {
      case 'not_leader':
      case 'transferring':
        return new RaftError('not_leader', result.message, result.leaderId);
      case 'conf_change_pending':
      case 'invalid_conf_change':
        return new RaftError(result.reason, result.message);
    }
  }

  private emit<E extends keyof RaftNodeEvents>(event: E, ...args: RaftNodeEvents[E]): void {
    this.events.emit(event, ...args);
  }

  /**
   * Fail-stop: an unexpected error (storage, or a bug caught by an assertion) closes the node.
   * Proposals waiting for a commit are rejected `closed` (their outcome is unknown: a failed
   * write may or may not have reached the disk). A storage failure (StorageError `io`: the
   * disk was full or failed) is reported as such, so the owner can reopen the storage and start
   * the group again from what the disk holds (see StorageEngine.reopen); this node never
   * writes again, because its in-memory log was planned against a write that may not exist.
   */
  private fail(error: unknown): void {
    if (this.closed) return;
    void this.close();
    this.report(error);
  }

  /** Hands an unexpected error to the `error` listeners (dropped when there are none). */
  private report(error: unknown): void {
    const failure = error instanceof Error ? error : new Error(String(error));
    if (this.events.listenerCount('error') > 0) this.emit('error', failure);
  }
}
