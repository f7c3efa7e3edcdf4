// One spool's replica on this member: its Raft group, the engine as the group's state machine,
// and, while this member is the spool's open primary, a SpoolHost serving it.
//
// Opening as primary: once the node leads, it proposes a barrier entry; when that is applied,
// every entry of earlier terms is applied too, and the host opens (engine.openPrimary: no leases,
// startedAt moves, counters restart) with tokens carrying the Raft term. Losing leadership closes
// the host at once: long polls answer null, later calls answer unavailable, proposals in flight
// get their errors from Raft. Primary-local engine state is rebuilt by the next opening.
//
// A planned hand-off (`handOff`, the member's lame duck) keeps the leases: the primary stops
// serving, logs the leases it holds (hand-off-record.ts), then transfers its leadership; the next
// primary opens with them when that record is the last thing before its barrier.

import {
  type ApplyResult,
  type MqError,
  type Plan,
  SpoolEngine,
  type SnapshotWriter,
} from '@spoolmq/engine';
import {
  type AppliedEntry,
  type GroupRouter,
  type GroupStorage,
  RaftNode,
  type Snapshot,
  type SnapshotData,
  type SnapshotMeta,
  type SnapshotSink,
  type SnapshotWork,
  type StateMachine,
  type StorageDamage,
  type Transport,
} from '@spoolmq/raft';
import {
  type AdminStepOf,
  type PayloadChunks,
  type PayloadItem,
  type Clock,
  type TimerHandle,
  afterTurn,
  monotonicClock,
} from '@spoolmq/protocol';
import type { CursorCodec } from '../host/cursors.js';
import type { PatternCache } from '../host/patterns.js';
import { SpoolHost } from '../host/spool-host.js';
import type { TokenCodec } from '../host/tokens.js';
import { HeldPayloadRecovery, recoverHeldPayloads } from '../store/held-payloads.js';
import { MemoryReplicaPayloads, type ReplicaPayloadStore } from '../store/replica-payloads.js';
import { notPrimary, unavailable } from './cluster-errors.js';
import { encodeBarrier, entryCommand, entryTimeMs, isBarrier } from './entry-codec.js';
import {
  type FetchAnswer,
  PayloadFetcher,
  type UnrepairedPayload,
  servePayloadChunks,
} from './payload-fetch.js';
import { HandOffTracker, encodeHandOff, isHandOffRecord } from './hand-off-record.js';
import { LackingLeaderHandOff } from './lacking-leader.js';
import { chooseHeir } from './lame-duck.js';
import { PayloadScrubber, type ScrubFinding } from './payload-scrub.js';
import { RaftCommandLog } from './raft-command-log.js';
import { RAFT_TICK_MS_DEFAULT, type RaftTuning, tuningOptions } from './raft-tuning.js';

/** What verifies tokens and cursors on every member: keyed by the cluster secret. */
export interface ClusterCodecs {
  readonly tokens: TokenCodec;
  readonly cursors: CursorCodec;
  readonly patterns: PatternCache;
}

/** Where a call to a spool runs: on this member's host, or on the member that leads. */
export type ReplicaRoute =
  | { readonly kind: 'local'; readonly host: SpoolHost }
  | { readonly kind: 'forward'; readonly member: string | null };

export interface SpoolReplicaOptions {
  readonly name: string;
  /** The spool's incarnation (metadata generation): part of the group id. */
  readonly gen: number;
  readonly memberId: string;
  readonly storage: GroupStorage;
  /**
   * Opens the store where the replica keeps its payloads (default: a new one in memory); the
   * replica closes it. What it throws fails the start.
   */
  readonly openPayloads?: () => ReplicaPayloadStore;
  /**
   * Asks another member for payloads this replica lacks (after another replica's snapshot was
   * installed here, or a copy failed its checksum). Without it, missing payloads stay missing.
   */
  readonly fetchPayloads?: (
    member: string,
    step: AdminStepOf<'payloads'>,
  ) => Promise<PayloadChunks>;
  readonly transport: Transport;
  readonly router: GroupRouter;
  /** Founding replicas, used only when the storage holds nothing for the group. */
  readonly bootstrap?: readonly string[];
  readonly clock: Clock;
  /** Time of the opening barrier's retry: Raft's (MemberOptions.clusterClock; monotonic). */
  readonly clusterClock?: Clock;
  readonly plan: Plan;
  readonly raft?: RaftTuning;
  /** Null until the cluster secret is known; the replica opens as primary only with codecs. */
  readonly codecs: ClusterCodecs | null;
  readonly waitersPerQueueMax?: number;
  /** Told when the role, the leader or the serving state changes (for readiness). */
  readonly onChange?: () => void;
  /**
   * Told once per payload that no other replica could give a good copy of (it failed its
   * checksum here, or was never fetched): its message stays unavailable, fetched again later.
   */
  readonly onPayloadUnrepaired?: (report: UnrepairedPayload) => void;
  /** Told of each payload record the background scrub found bad (payload-scrub.ts). */
  readonly onPayloadScrubBad?: (finding: ScrubFinding) => void;
}

export interface SpoolReplicaStatus {
  readonly spool: string;
  readonly group: string;
  readonly role: string;
  readonly term: number;
  readonly leaderId: string | null;
  readonly commitIndex: number;
  /** Entries lost to bad bytes here, awaiting repair from the leader (see RaftCore `damage`). */
  readonly storageDamage: StorageDamage | null;
  readonly appliedIndex: number;
  readonly lastIndex: number;
  readonly snapshotIndex: number;
  /** This member is the spool's open primary. */
  readonly serving: boolean;
  /** Times this replica opened as primary. */
  readonly openings: number;
  /** Snapshots restored into the engine (at start or installed from the leader). */
  readonly restores: number;
  /** Why the replica's node stopped (storage failure), null while it runs. */
  readonly failure: string | null;
  /** Messages whose payload this replica lacks now (being fetched; unavailable if visible). */
  readonly payloadsMissing: number;
  /** Of those, the ones no other replica had a good copy of at the last try. */
  readonly payloadsUnrepaired: number;
  /** Payload reads here that failed (checksum, seq or length mismatch, record gone). */
  readonly payloadReadFailures: number;
  /** Payloads fetched from other replicas, and fetched bytes rejected by their checksum. */
  readonly payloadsFetched: number;
  readonly payloadsRejected: number;
  /** Payloads a restored snapshot's messages lacked that this replica's own store still held. */
  readonly payloadsRecovered: number;
  /** Payload records the background scrub read and checked, and found bad. */
  readonly payloadsScrubbed: number;
  readonly payloadsScrubBad: number;
  /** Scrub passes completed over every live record since the start. */
  readonly scrubPasses: number;
  /** Leaderships handed to an up-to-date voter instead of opening with payloads lacking. */
  readonly lackingHandOffs: number;
}

const GROUP_PREFIX = 'spool:';
const GEN_SEPARATOR = '#';

/**
 * Group id of incarnation `gen` of a spool's Raft group: `spool:<name>#<gen>` (`#` is not allowed
 * in spool names, so the id parses back).
 */
export function spoolGroup(name: string, gen: number): string {
  return `${GROUP_PREFIX}${name}${GEN_SEPARATOR}${gen}`;
}

/** The spool name and generation of a spool group id, or null for any other group. */
export function parseSpoolGroup(group: string): { name: string; gen: number } | null {
  if (!group.startsWith(GROUP_PREFIX)) return null;
  const at = group.lastIndexOf(GEN_SEPARATOR);
  if (at <= GROUP_PREFIX.length) return null;
  const gen = Number(group.slice(at + 1));
  if (!Number.isSafeInteger(gen) || gen < 1) return null;
  return { name: group.slice(GROUP_PREFIX.length, at), gen };
}

export class SpoolReplica implements StateMachine {
  readonly name: string;
  readonly gen: number;
  readonly group: string;
  private readonly options: SpoolReplicaOptions;
  private engineValue: SpoolEngine;
  private nodeValue: RaftNode | null = null;
  private host: SpoolHost | null = null;
  private log: RaftCommandLog | null = null;
  private codecs: ClusterCodecs | null;
  /** Term whose barrier is proposed (0: none in flight). */
  private openingTerm = 0;
  private retryTimer: TimerHandle | null = null;
  private closed = false;
  /** Why the node stopped (a storage failure), or null. */
  private failure: Error | null = null;
  private openings = 0;
  private restores = 0;
  private payloadReadFailures = 0;
  /** Payloads found in this replica's own store after a restore (not fetched). */
  private payloadsRecovered = 0;
  private readonly payloads: ReplicaPayloadStore;
  /**
   * The payload-store checkpoint of the snapshot taken or installed here last, for its save:
   * the node saves each snapshot in the same turn as it finishes or restores it (snapshot(),
   * the last step of beginSnapshot's work, restore), so the next save is of that snapshot. A
   * snapshot that is never saved leaves an older checkpoint: reclaiming less is safe.
   */
  private pendingCheckpoint: number | null = null;
  private readonly fetcher: PayloadFetcher;
  private readonly lackingLeader: LackingLeaderHandOff;
  private readonly scrubber: PayloadScrubber;
  /** The scan of this replica's own store after a restore, while it runs (restorePayloads). */
  private recovery: HeldPayloadRecovery | null = null;
  /** Which hand-off record, if any, the next opening takes over. */
  private readonly handOffs = new HandOffTracker();
  /** The member is stopping: this replica never opens as primary again. */
  private lameDuck = false;
  /** The member this replica is handing its leadership to (the hint for callers meanwhile). */
  private heir: string | null = null;
  /** The lease record of a hand-off in progress, until it is committed. */
  private unsentRecord: Uint8Array[] | null = null;

  private constructor(options: SpoolReplicaOptions, payloads: ReplicaPayloadStore) {
    this.options = options;
    this.name = options.name;
    this.gen = options.gen;
    this.group = spoolGroup(options.name, options.gen);
    this.payloads = payloads;
    this.engineValue = SpoolEngine.over(this.payloads, options.plan);
    this.codecs = options.codecs;
    this.fetcher = new PayloadFetcher({
      group: this.group,
      engine: () => this.engineValue,
      sources: () => this.fetchSources(),
      fetch: (member, items) => {
        const fetch = this.options.fetchPayloads;
        if (fetch === undefined) return Promise.reject(new Error('no calls to other members'));
        return fetch(member, { op: 'payloads', group: this.group, items });
      },
      closed: () => this.closed || this.failure !== null,
      recovering: () => this.recovery !== null,
      clock: options.clock,
      filled: (queueGen) => this.payloadFilled(queueGen),
      unrepaired: (report) => this.options.onPayloadUnrepaired?.(report),
    });
    this.scrubber = new PayloadScrubber({
      group: this.group,
      clock: options.clock,
      engine: () => this.engineValue,
      store: payloads,
      closed: () => this.closed || this.failure !== null,
      found: (finding) => this.payloadScrubbedBad(finding),
    });
    this.lackingLeader = new LackingLeaderHandOff({
      clock: this.retryClock,
      tickMs: this.tickMs,
      lacking: () => this.payloadsFetching(),
      hasPeers: () => this.node.status().config.voters.length > 1,
      leads: (term) => {
        const node = this.nodeValue;
        const settled = this.closed || this.lameDuck || this.host !== null;
        return !settled && node !== null && node.isLeader() && node.term() === term;
      },
      open: (term) => this.beginOpening(term),
      heir: () => chooseHeir(this.options.memberId, this.node, new Map(), new Set()),
      transfer: (to) => this.node.transferLeadership(to),
    });
  }

  /** The scrub found a bad record (its location is dropped): fetch a good copy now. */
  private payloadScrubbedBad(finding: ScrubFinding): void {
    this.fetcher.kick();
    this.options.onPayloadScrubBad?.(finding);
  }

  /** A fetched payload was stored: receivers parked on its queue may take its message now. */
  private payloadFilled(queueGen: number): void {
    const queue = this.engineValue.queueByGen(queueGen);
    if (queue !== undefined) this.host?.payloadRestored(queue);
    // The member's readiness waits for the last missing payload (see Member.isServiceReady).
    if (this.engineValue.missingPayloadCount === 0) this.options.onChange?.();
  }

  /** A payload read failed here (the host dropped its location): fetch a good copy. */
  private payloadLost(): void {
    this.payloadReadFailures++;
    this.fetcher.kick();
  }

  /**
   * Loads the group from storage (bootstrapping it with `options.bootstrap` when empty), joins
   * the router and starts taking part in elections. Throws what RaftNode.start throws.
   */
  static async start(options: SpoolReplicaOptions): Promise<SpoolReplica> {
    const payloads = options.openPayloads?.() ?? new MemoryReplicaPayloads();
    const replica = new SpoolReplica(options, payloads);
    let node: RaftNode;
    try {
      node = await RaftNode.start({
        ...tuningOptions(options.raft),
        id: options.memberId,
        group: replica.group,
        storage: replica.guardedStorage(options.storage),
      transport: options.transport,
        stateMachine: replica,
        ...(options.bootstrap === undefined ? {} : { bootstrap: options.bootstrap }),
      });
    } catch (error) {
      await replica.payloads.close();
      throw error;
    }
    // The saved snapshot (if any) is restored: what it does not reference is dead.
    replica.payloads.sweep();
    replica.attach(node);
    options.router.add(replica.group, node);
    return replica;
  }

  private attach(node: RaftNode): void {
    this.nodeValue = node;
    node.on('leader-change', (leaderId, term) => this.onLeaderChange(leaderId, term));
    node.on('error', (error) => this.onNodeStopped(error));
    this.payloads.setCaching(node.isLeader());
    if (node.isLeader()) this.lackingLeader.lead(node.term());
    if (this.engineValue.missingPayloadCount > 0) this.fetcher.kick();
    this.scrubber.start();
  }

  /** Payloads this replica lacks and still hopes to fetch (missing, less unrepaired). */
  payloadsFetching(): number {
    // Reports are forgotten at the next pass once settled: never below 0 meanwhile.
    return Math.max(0, this.engineValue.missingPayloadCount - this.fetcher.unrepairedCount);
  }

  /** Payloads fetched from other replicas so far (after snapshots installed here). */
  get payloadsFetched(): number {
    return this.fetcher.fetched;
  }

  /**
   * Answers another replica's payload fetch (see payload-fetch.ts): chunks of the payloads it
   * names, from this replica's store. Throws Error for malformed items.
   */
  servePayloads(items: readonly PayloadItem[]): FetchAnswer {
    const missingBefore = this.engineValue.missingPayloadCount;
    const answer = servePayloadChunks(this.engineValue, items);
    const lost = this.engineValue.missingPayloadCount - missingBefore;
    if (lost > 0) {
      // Copies that failed their checksum here while serving: fetch good ones too.
      this.payloadReadFailures += lost;
      this.fetcher.kick();
    }
    return answer;
  }

  /** Who to fetch payloads from: the leader, then the other voters. */
  private fetchSources(): string[] {
    const node = this.nodeValue;
    if (node === null) return [];
    const self = this.options.memberId;
    const leader = node.leaderId();
    const others = node.status().config.voters.filter((id) => id !== self && id !== leader);
    return leader === null || leader === self ? others : [leader, ...others];
  }

  get node(): RaftNode {
    return this.nodeValue!;
  }

  /** The engine (replaced when a snapshot is installed). For reads and tests. */
  get engine(): SpoolEngine {
    return this.engineValue;
  }

  /** The cluster secret became known: the replica may open as primary now. */
  provideCodecs(codecs: ClusterCodecs): void {
    this.codecs = codecs;
    const node = this.nodeValue;
    if (node !== null && node.isLeader()) this.beginOpening(node.term());
  }

  // ---- StateMachine ------------------------------------------------------------------------

  /**
   * Applies a committed entry: barrier or hand-off record -> null (noted for the next opening);
   * command -> the engine's ApplyResult.
   */
  apply(entry: AppliedEntry): ApplyResult | null {
    const data = entry.data;
    if (isBarrier(data)) {
      this.handOffs.barrierApplied(entry.index);
      return null;
    }
    if (isHandOffRecord(data)) {
      this.handOffs.recordApplied(data);
      return null;
    }
    this.handOffs.commandApplied();
    return this.engineValue.apply(entryCommand(owned(data)), entryTimeMs(data));
  }

  /** The payloads the run of applies appended go to the store in one write. */
  afterApply(): void {
    this.payloads.flush();
  }

  snapshot(): Uint8Array {
    const checkpoint = this.payloads.checkpoint();
    const data = this.engineValue.snapshot();
    this.pendingCheckpoint = checkpoint;
    return data;
  }

  /**
   * A snapshot of the engine as it is now, encoded in slices while entries go on applying
   * (snapshot-writer.ts): a large backlog never blocks the member for the whole encode. It holds
   * payload locations: the payload store is synced before it is saved (guardedStorage), and
   * space released after this point is reclaimed only once it is saved.
   */
  beginSnapshot(): SnapshotWork {
    const checkpoint = this.payloads.checkpoint();
    // A mostly dead segment is emptied now; it goes once a snapshot after this one is saved.
    const target = this.payloads.compactionTarget?.() ?? null;
    if (target !== null) this.engineValue.relocatePayloads(target);
    // A payload found unreadable while relocating lost its location: fetch a good copy.
    if (this.engineValue.missingPayloadCount > 0) this.fetcher.kick();
    const writer: SnapshotWriter = this.engineValue.beginSnapshot();
    return {
      step: (budgetBytes) => {
        const slice = writer.step(budgetBytes);
        if (slice.done) this.pendingCheckpoint = checkpoint;
        return slice;
      },
      cancel: () => writer.cancel(),
    };
  }

  /**
   * Replaces the engine by the snapshot's (never while serving: a leader installs none). At
   * start it is this replica's saved snapshot, whose payload locations are valid here when it
   * took it itself; later it comes from the leader: nothing stored here is referenced any more
   * (the old records stay readable until the next snapshot is saved), the payloads the
   * snapshot's messages need are taken from this replica's own store where it holds them, and
   * the rest fetched (restorePayloads).
   */
  restore(chunks: Iterable<Uint8Array>): void {
    this.stepDown();
    const installed = this.nodeValue !== null;
    if (installed) {
      this.payloads.retireAll();
      this.pendingCheckpoint = this.payloads.checkpoint();
    }
    this.handOffs.reset();
    this.engineValue = SpoolEngine.fromSnapshot(chunks, this.options.plan, this.payloads);
    this.restores++;
    this.restorePayloads(installed);
  }

  /**
   * The payload part of a restore: the payloads the restored messages lack are first looked for
   * in this replica's own store by seq (held-payloads.ts), and only the rest fetched from peers.
   * At start too: the saved snapshot may be one installed from another replica.
   */
  private restorePayloads(installed: boolean): void {
    if (!installed) {
      // At start, whole: the saved snapshot's payloads must be found before `sweep` drops what
      // it does not reference, and the replica serves nothing yet.
      this.payloadsRecovered += recoverHeldPayloads(this.engineValue, this.payloads);
      return;
    }
    const engine = this.engineValue;
    const recovery = new HeldPayloadRecovery(engine, this.payloads, (queueGen) => {
      if (this.engineValue === engine) this.payloadFilled(queueGen);
    });
    this.recovery = recovery;
    // A step per event-loop turn (HELD_SCAN_STEP_BYTES each): Raft ticks, appends and calls run
    // between steps. The fetcher waits for the scan (see `recovering`): what this store still
    // holds is not fetched.
    const step = (): void => {
      if (this.closed || this.recovery !== recovery) return; // closed, or another restore
      const done = recovery.step();
      this.payloadsRecovered += recovery.taken - taken;
      taken = recovery.taken;
      if (!done) {
        afterTurn(step);
        return;
      }
      this.recovery = null;
      if (engine.missingPayloadCount > 0) this.fetcher.kick();
    };
    let taken = 0;
    step();
  }

  // ---- Serving -----------------------------------------------------------------------------

  /**
   * Where a call to this spool runs now: here (`local`) when this member is the spool's open
   * primary and holds the leader lease (so reads are current and no write starts on a primary
   * cut off from its quorum); otherwise on the member that leads (`forward`, null when none is
   * known), which names this member while it leads but is opening the spool or renewing its
   * lease (retry here shortly). Throws 503 unavailable when the replica was closed or its node
   * stopped.
   */
  route(): ReplicaRoute {
    const node = this.nodeValue;
    if (this.closed || node === null || this.failure !== null) {
      const cause = this.failure === null ? '' : ` (replica stopped: ${this.failure.message})`;
      throw unavailable(`spool ${this.name} is not served here now${cause}`);
    }
    const host = this.host;
    if (host !== null && node.term() === this.log!.term && node.hasLeaderLease()) {
      return { kind: 'local', host };
    }
    // While handing over, the heir is where the spool is about to be served.
    const member = this.heir !== null && node.isLeader() ? this.heir : node.leaderId();
    return { kind: 'forward', member };
  }

  /** The member believed to lead the group (null when none is known). */
  leaderId(): string | null {
    return this.nodeValue?.leaderId() ?? null;
  }

  /** A primary is known: another member leads, or this member leads and has opened the spool. */
  hasKnownPrimary(): boolean {
    const leader = this.leaderId();
    if (leader === null || this.failure !== null) return false;
    return leader !== this.options.memberId || this.host !== null;
  }

  isServing(): boolean {
    return this.host !== null;
  }

  status(): SpoolReplicaStatus {
    const status = this.node.status();
    return {
      spool: this.name,
      group: this.group,
      role: status.role,
      term: status.term,
      leaderId: status.leaderId,
      commitIndex: status.commitIndex,
      storageDamage: status.storageDamage,
      appliedIndex: status.appliedIndex,
      lastIndex: status.lastIndex,
      snapshotIndex: status.snapshotIndex,
      serving: this.host !== null,
      openings: this.openings,
      restores: this.restores,
      failure: this.failure?.message ?? null,
      payloadsMissing: this.engineValue.missingPayloadCount,
      payloadsUnrepaired: this.fetcher.unrepairedCount,
      payloadReadFailures: this.payloadReadFailures,
      payloadsFetched: this.fetcher.fetched,
      payloadsRejected: this.fetcher.rejected,
      payloadsRecovered: this.payloadsRecovered,
      payloadsScrubbed: this.scrubber.scrubbed,
      payloadsScrubBad: this.scrubber.bad,
      scrubPasses: this.scrubber.passes,
      lackingHandOffs: this.lackingLeader.handOffs,
    };
  }

  /** The member is stopping: never open as primary again (a hand-off may follow). */
  enterLameDuck(): void {
    this.lameDuck = true;
  }

  /**
   * Planned hand-off of the spool's leadership to voter `to`: stops serving at once (no lease
   * changes from here on), logs the leases held (once; again on a retry until it commits), then
   * transfers the leadership. Resolves once `to` leads; rejects as RaftNode.propose and
   * transferLeadership do (the replica stays stepped down: the member is stopping).
   *
   * Two primaries never hand out one message: this host stops before the record is proposed;
   * the next primary opens only once its barrier, after the record, is applied; and it takes
   * over exactly the recorded leases that no later command settled.
   */
  async handOff(to: string): Promise<void> {
    const node = this.node;
    this.lameDuck = true;
    this.heir = to;
    const host = this.host;
    const log = this.log;
    if (host !== null && log !== null && node.isLeader() && node.term() === log.term) {
      const atMs = Math.max(this.clock.nowMs(), this.engineValue.lastAppliedAtMs);
      this.unsentRecord = encodeHandOff(atMs, host.handingOff());
    }
    this.stepDown();
    const record = this.unsentRecord;
    if (record !== null) {
      await Promise.all(record.map((part) => node.propose(part)));
      this.unsentRecord = null;
    }
    await node.transferLeadership(to);
  }

  /** Stops serving, leaves the router and closes the node (storage stays, it is shared). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stepDown();
    this.scrubber.stop();
    this.lackingLeader.cancel();
    if (this.retryTimer !== null) this.retryClock.clearTimer(this.retryTimer);
    this.retryTimer = null;
    this.options.router.remove(this.group);
    await this.nodeValue?.close();
    await this.payloads.close();
  }

  /**
   * `storage` with snapshot saves ordered after the payload store: the payloads a snapshot
   * points to are synced before it is saved (so its log entries may go), and the space it no
   * longer needs is reclaimed after.
   */
  /**
   * Stores a snapshot (`store`) once the payloads it points to are synced, then lets the store
   * reclaim what that snapshot no longer needs. The checkpoint is taken now: the snapshot was
   * finished or restored in this same turn (see pendingCheckpoint).
   */
  private async afterPayloads(store: () => Promise<SnapshotData>): Promise<SnapshotData> {
    const checkpoint = this.pendingCheckpoint;
    this.pendingCheckpoint = null;
    await this.payloads.sync();
    const data = await store();
    if (checkpoint !== null) this.payloads.saved(checkpoint);
    return data;
  }

  private guardedStorage(storage: GroupStorage): GroupStorage {
    return {
      group: storage.group,
      load: (options) => storage.load(options),
      save: (hardState, entries) => storage.save(hardState, entries),
      saveSnapshot: (snapshot: Snapshot) => {
        return this.afterPayloads(() => storage.saveSnapshot(snapshot));
      },
      ...(storage.beginSnapshot === undefined
        ? {}
        : {
            beginSnapshot: (meta: SnapshotMeta): SnapshotSink => {
              const sink = storage.beginSnapshot!(meta);
              return {
                append: (chunk) => sink.append(chunk),
                finish: () => this.afterPayloads(() => sink.finish()),
                abort: () => sink.abort(),
              };
            },
          }),
      compact: (index) => storage.compact(index),
      destroy: () => storage.destroy(),
    };
  }

  // ---- Leadership --------------------------------------------------------------------------

  private onLeaderChange(leaderId: string | null, term: number): void {
    const self = this.options.memberId;
    if (this.log !== null && (leaderId !== self || term !== this.log.term)) {
      // Kept in case this member wins the leadership back with nobody serving in between.
      this.handOffs.rememberOwn(this.host!.handingOff());
      this.stepDown();
    }
    // Only the leader serves reads (it is or becomes the primary): a follower keeps no cache.
    this.payloads.setCaching(leaderId === self);
    if (leaderId === self) this.lackingLeader.lead(term);
    this.options.onChange?.();
  }

  private onNodeStopped(error: Error): void {
    this.failure = error;
    this.stepDown();
    this.options.onChange?.();
  }

  /** Proposes the barrier of `term`; the host opens once it is applied. */
  private beginOpening(term: number): void {
    const node = this.nodeValue;
    if (this.closed || this.lameDuck || node === null || this.codecs === null) return;
    if (this.openingTerm === term || this.log?.term === term) return;
    this.openingTerm = term;
    const atMs = Math.max(this.clock.nowMs(), this.engineValue.lastAppliedAtMs);
    node.propose(encodeBarrier(atMs)).then(
      (proposed) => this.openIfLeading(term, proposed.index),
      () => this.barrierFailed(term),
    );
  }

  /**
   * Opens the host once the barrier of `term` (at `barrierIndex`) is applied. startedAt moves
   * and the counters restart here even after a planned hand-off: the interface defines
   * startedAt as the spool's last opening on its serving member, and the counters are the
   * serving member's (its predecessor's stopped with it); only the leases carry over.
   */
  private openIfLeading(term: number, barrierIndex: number): void {
    if (this.openingTerm === term) this.openingTerm = 0;
    const node = this.node;
    const opens = !this.closed && !this.lameDuck && this.host === null && this.codecs !== null;
    if (!opens || !node.isLeader() || node.term() !== term) {
      // Not opening at this barrier: what it would have taken over waits for the next one.
      if (this.host === null) this.handOffs.carry(barrierIndex);
      return;
    }
    const codecs = this.codecs!; // `opens` checked it
    const { tokens, cursors, patterns } = codecs;
    const engine = this.engineValue;
    const log = new RaftCommandLog(this.name, node, term, this.clock, engine.lastAppliedAtMs);
    const host = new SpoolHost({
      name: this.name,
      engine,
      log,
      clock: this.clock,
      tokens,
      cursors,
      patterns,
      receiveGuard: () => this.leaseRefusal(),
      receiveGuardRetryMs: this.tickMs,
      onPayloadLost: () => this.payloadLost(),
      ...(this.options.waitersPerQueueMax === undefined
        ? {}
        : { waitersPerQueueMax: this.options.waitersPerQueueMax }),
    });
    this.log = log;
    this.host = host;
    host.openPrimary(this.handOffs.take(barrierIndex));
    this.openings++;
    this.options.onChange?.();
  }

  /**
   * The barrier did not commit. Only `busy` can fail it while this node still leads in `term`
   * (a lost leadership announces itself with a leader change), so try again a tick later.
   */
  private barrierFailed(term: number): void {
    if (this.openingTerm === term) this.openingTerm = 0;
    const node = this.node;
    if (this.closed || !node.isLeader() || node.term() !== term || this.retryTimer !== null) return;
    // On Raft's time (the cluster clock), as the ticks whose turn it waits for.
    this.retryTimer = this.retryClock.setTimer(() => {
      this.retryTimer = null;
      if (node.isLeader() && node.term() === term) this.beginOpening(term);
    }, this.tickMs);
  }

  /**
   * A receive may lease a message only under the leader lease (see SpoolHost receiveGuard):
   * without it, notPrimary with the leader hint (this member while it still leads).
   */
  private leaseRefusal(): MqError | null {
    const node = this.node;
    return node.hasLeaderLease() ? null : notPrimary(this.name, node.leaderId());
  }

  /** Stops serving at once: long polls end with null, later calls answer unavailable. */
  private stepDown(): void {
    const host = this.host;
    if (host === null) return;
    this.host = null;
    this.log!.close();
    this.log = null;
    host.close();
    this.options.onChange?.();
  }

  private get retryClock(): Clock {
    return this.options.clusterClock ?? monotonicClock;
  }

  private get clock(): Clock {
    return this.options.clock;
  }

  private get tickMs(): number {
    return this.options.raft?.tickMs ?? RAFT_TICK_MS_DEFAULT;
  }
}

/**
 * The entry bytes the engine may keep (payloads are views into the command): a view into a
 * larger buffer (a transport frame) is copied, so one retained message does not pin the frame.
 */
function owned(data: Uint8Array): Uint8Array {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
}

