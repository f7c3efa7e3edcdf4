// The pure Raft core of one replica, in the style of etcd-io/raft: `step(message)`, `tick()`,
// `propose(...)` change state and fill an outbox; `ready()` hands the driver what to persist,
// send and apply; `onPersisted(ready)` reports that a Ready's writes are durable. No clock,
// disk, socket or random source inside: time is `tick()`, randomness is `config.random`.
//
// The role is a swapped step function (stepFollower / stepCandidate / stepLeader), so role checks
// are not scattered through the code. References below are to the Raft paper (Ongaro and
// Ousterhout, 2014) as "Raft 5.x" and to Ongaro's thesis (2014) as "thesis x.y".

import {
  RAFT_TERM_MAX,
  EntryType,
  MessageType,
  type AppendEntries,
  type AppendEntriesResponse,
  type ClusterConfig,
  type Entry,
  type HardState,
  type InstallSnapshot,
  type InstallSnapshotResponse,
  type Message,
  type NodeId,
  type RepairRequest,
  type RequestVote,
  type RequestVoteResponse,
  type RestoredState,
  type Snapshot,
  type SnapshotData,
  snapshotOf,
  type SnapshotMeta,
  type StorageDamage,
} from '../types.js';
import { assert } from './assert.js';
import {
  ConfChangeType,
  checkConfChange,
  encodeConfChange,
  type ConfChange,
} from './conf-change.js';
import { validateConfig, type RaftConfig } from './config.js';
import { RaftLog } from './log.js';
import { EMPTY_CONFIG, Membership } from './membership.js';
import { NEVER_TICK, Progress, type ProgressState } from './progress.js';
import { quorumValue, tallyVotes } from './quorum.js';
import type { Ready, SnapshotSend } from './ready.js';
import { repairAnswer, repairRequest } from './repair.js';
import { SnapshotReceiver } from './snapshot-receiver.js';

export type Role = 'follower' | 'pre-candidate' | 'candidate' | 'leader';

/** Why the leader refused a proposal; nothing was appended. */
export type RefusalReason =
  | 'not_leader'
  | 'transferring'
  | 'conf_change_pending'
  | 'invalid_conf_change';

export type ProposeResult =
  | { readonly ok: true; readonly index: number; readonly term: number }
  | {
      readonly ok: false;
      readonly reason: RefusalReason;
      /** Best guess of the current leader (null when unknown). */
      readonly leaderId: NodeId | null;
      readonly message: string;
    };

/** The leader's view of one follower, for status and membership decisions. */
export interface ProgressView {
  readonly match: number;
  readonly next: number;
  readonly state: ProgressState;
  readonly recentActive: boolean;
  readonly learner: boolean;
}

type CampaignKind = 'pre' | 'real' | 'transfer';

const NO_ENTRIES: readonly Entry[] = [];
/** Bound on `peersHeard`: a group has a handful of members; the bound only caps memory. */
const PEERS_HEARD_MAX = 64;
/** Election timeouts a damaged replica waits on its snapshot's sender before asking everyone. */
const REPAIR_STALLS_MAX = 3;

export class RaftCore {
  readonly id: NodeId;
  private readonly cfg: RaftConfig;
  private readonly log: RaftLog;
  private readonly membership: Membership;

  private termValue: number;
  private vote: NodeId | null;
  private roleValue: Role = 'follower';
  private lead: NodeId | null = null;
  private stepRole: (m: Message) => void;
  private tickRole: () => void;

  /**
   * Lease clock: ticks since this core was created, including ticks the driver missed and
   * reported with `advanceClock` (a stalled event loop). The leader lease is measured in it.
   */
  private now = 0;
  /** Role clock: ticks actually processed (`tick()` only). Check-quorum is measured in it. */
  private roleTicks = 0;
  private electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTicks = 0;
  /**
   * Ticks since this replica last heard from a leader of its current term (or was one).
   * While below `electionTicks` it ignores campaigns (leader stickiness, thesis 4.2.3), which is
   * what the leader lease rests on. Deliberately not reset by term changes: a stale message that
   * bumps our term must not release a vote the current leader's lease counts on. Starts at 0:
   * right after a restart a replica cannot know whether it acknowledged a leader just before
   * the crash, so it behaves as if it had.
   */
  private leaderContactTicks = 0;
  /**
   * With `guardLostStorage`: true while the log holds nothing past the founding entries (term
   * 1, no snapshot): a founding replica before a leader reached it, or one whose storage was
   * lost (a wiped disk) and which bootstrapped again. The latter may have voted, and acknowledged
   * entries a leader counted as committed, before it lost them: voting now for a candidate that
   * lacks those entries could elect it and erase them, and a vote in a term it had voted in
   * could elect two leaders. So it grants no vote (nor pre-vote) to a candidate whose log shows
   * the group moved past founding, until it has caught up with a leader: its log ends with an
   * entry of that leader's term and reaches the commit index the leader sent. Derived from the
   * log at start-up, so a crash during the rebuild, before any entry past founding was stored,
   * leaves it rebuilding.
   */
  private rebuilding: boolean;
  /**
   * Entries this replica acknowledged and then lost (storage found them unreadable on load).
   * A leader may have counted those acknowledgements toward a commit, so until its log holds
   * that much again this replica votes as if it still had its old log: it grants a vote (or
   * pre-vote) only to a candidate whose log is at least as up-to-date as both its log and
   * `damage` (the old log's end, or an upper bound of it). Every vote it gives is one plain Raft
   * would give with the old log, so the proof of Leader Completeness (Raft 5.4.3) holds. It
   * never campaigns meanwhile (as leader it could overwrite what it lost on its followers). It
   * catches up from the leader like any follower, or, while no leader is heard, from a peer
   * whose log holds its lost end (repair.ts); the damage ends once its log is at least as
   * up-to-date as `damage` (see `noteCaughtUp`). Durable in the hard state until then, so a
   * restart during the repair resumes it. The core of protocol-aware recovery (Alagappan et
   * al., FAST 2018): a corrupt copy is repaired from peers instead of being trusted or fatal.
   */
  private damage: StorageDamage | null;
  /**
   * Peers this replica heard from while damaged (at most PEERS_HEARD_MAX; damage is only ever
   * found on load): one whose log lost the configuration asks them, too (see repair.ts).
   */
  private readonly peersHeard = new Set<NodeId>();
  /** A damaged replica's snapshot being received from `repairFrom` (see repair.ts). */
  private repairReceiver: SnapshotReceiver | null = null;
  private repairFrom: NodeId | null = null;
  /** Election timeouts in a row in which `repairFrom` sent nothing. */
  private repairStalls = 0;

  private readonly progress = new Map<NodeId, Progress>();
  private readonly votes = new Map<NodeId, boolean>();
  private transferee: NodeId | null = null;
  private transferElapsed = 0;
  private timeoutNowSent = false;
  /** Index of the Noop this leader appended when elected (Raft 5.4.2). */
  private termStart = 0;

  /** Latest snapshot (local or installed), kept for followers that fall behind the log base. */
  private snapshotValue: Snapshot | null;
  private receiver: SnapshotReceiver | null = null;
  private pendingRestore: Snapshot | null = null;
  /** InstallSnapshot chunks for the next Ready (see SnapshotSend). */
  private snapshotSends: SnapshotSend[] = [];

  private msgs: Message[] = [];
  private msgsAfterPersist: Message[] = [];
  private savedHardState: HardState;
  private readySeq = 0;
  private persistedSeq = 0;
  /** Seq of the last Ready that carried a snapshot to install. */
  private snapshotSeq = 0;

  /**
   * A replica restored from `restored` (what storage loaded, or `bootstrapState(...)` for a
   * founding member, or an empty state for a member that joins later). Throws
   * `RaftConfigError` for an invalid configuration.
   */
  constructor(config: RaftConfig, restored: RestoredState) {
    validateConfig(config);
    this.cfg = config;
    this.id = config.id;
    const snapshot = restored.snapshot;
    const baseIndex = snapshot?.meta.index ?? 0;
    const baseTerm = snapshot?.meta.term ?? 0;
    const entries = usableEntries(restored.entries, baseIndex, baseTerm);
    this.log = new RaftLog(baseIndex, baseTerm, entries, restored.hardState.commit);
    this.membership = new Membership(snapshot?.meta.config ?? EMPTY_CONFIG);
    this.membership.onAppend(entries, 0);
    // A replica that never had a peer has nobody to repair it, and no other leader ever counted
    // its acknowledgements: what was lost is gone (storage has logged it), and it goes on. Told
    // by the driver (`soleMember`), not read off the log: the entries that named the other
    // voters may be among the lost ones (simulation seed 713).
    this.damage = config.soleMember === true ? null : (restored.hardState.damage ?? null);
    assert(restored.hardState.term >= this.log.lastTerm(), 'restored term below last log term');
    this.termValue = restored.hardState.term;
    this.vote = restored.hardState.vote;
    // A damaged replica kept its vote, and `damage` covers what it acknowledged: not a wiped one.
    this.rebuilding =
      config.guardLostStorage === true &&
      snapshot === null &&
      this.log.lastTerm() <= 1 &&
      (restored.hardState.damage ?? null) === null;
    this.snapshotValue = snapshot;
    this.savedHardState = this.hardState();
    this.stepRole = this.stepFollower;
    this.tickRole = this.tickElection;
    this.becomeFollower(this.termValue, null);
  }

  // ---------------------------------------------------------------- inputs

  /** Advances logical time by one tick. */
  tick(): void {
    this.now += 1;
    this.roleTicks += 1;
    this.leaderContactTicks += 1;
    this.tickRole();
  }

  /**
   * The driver missed `ticks` (>= 0) ticks, e.g. its event loop stalled. Only the lease clock
   * moves, so a lease ends on time in real time; election, heartbeat and check-quorum timers do
   * not (like etcd's ticker dropping missed ticks): a replica that stalled does not start an
   * election or step down merely because it was itself slow, with its peers' messages still
   * queued. Leader stickiness then lasts longer in real time, which is the safe direction.
   */
  advanceClock(ticks: number): void {
    assert(Number.isSafeInteger(ticks) && ticks >= 0, 'advanceClock needs a tick count >= 0');
    this.now += ticks;
  }

  /** Processes a message addressed to this replica (any term; stale ones are handled). */
  step(m: Message): void {
    assert(m.to === this.id, `message for ${m.to} stepped into ${this.id}`);
    // Only a damaged replica asks the peers it heard from; nothing is kept on the hot path else.
    if (this.damage !== null && this.peersHeard.size < PEERS_HEARD_MAX) this.peersHeard.add(m.from);
    // Repair traffic is not a leader's and not a candidate's: no term moves for it.
    if (m.type === MessageType.RepairRequest) {
      this.answerRepair(m);
      return;
    }
    if (m.type === MessageType.AppendEntries && m.repair === true) {
      this.takeRepairEntries(m);
      return;
    }
    if (m.type === MessageType.InstallSnapshot && m.repair === true) {
      this.takeRepairChunk(m);
      return;
    }
    if (m.term > this.termValue) {
      if (!this.onHigherTerm(m)) return;
    } else if (m.term < this.termValue) {
      this.onLowerTerm(m);
      return;
    }
    this.stepRole(m);
  }

  /**
   * Appends `datas` (>= 1) as Normal entries, in order, if this replica is the leader and no
   * leadership transfer is under way. Returns the first index and the term, or a refusal.
   */
  propose(datas: readonly Uint8Array[]): ProposeResult {
    assert(datas.length > 0, 'propose with no data');
    const refusal = this.refuseProposal();
    if (refusal !== null) return refusal;
    const index = this.appendOwn(EntryType.Normal, datas);
    this.bcastAppend(false);
    return { ok: true, index, term: this.termValue };
  }

  /**
   * Proposes one single-server membership change (thesis 4.1). Refused while another change is
   * uncommitted, before the leader committed an entry of its own term (the fix to single-server
   * changes in Ongaro's 2015 raft-dev note), when the change does not fit the current
   * configuration, or when promoting a learner that is not replicating normally yet.
   */
  proposeConfChange(change: ConfChange): ProposeResult {
    const refusal = this.refuseProposal();
    if (refusal !== null) return refusal;
    const committed = this.log.committed();
    if (this.membership.currentIndex(this.log.baseIndex()) > committed) {
      return this.refuse('conf_change_pending', 'a membership change is not committed yet');
    }
    if (committed < this.termStart) {
      return this.refuse('conf_change_pending', 'leader has not committed an entry of its term');
    }
    const config = this.membership.current();
    const why = checkConfChange(config, change);
    if (why !== null) return this.refuse('invalid_conf_change', why);
    const promoting =
      change.type === ConfChangeType.PromoteLearner ||
      (change.type === ConfChangeType.AddVoter && config.learners.includes(change.node));
    if (promoting && this.progress.get(change.node)?.state !== 'replicate') {
      return this.refuse('invalid_conf_change', `learner ${change.node} has not caught up`);
    }
    const index = this.appendOwn(EntryType.ConfChange, [encodeConfChange(change)]);
    this.bcastAppend(false);
    return { ok: true, index, term: this.termValue };
  }

  /**
   * Starts handing leadership to voter `to` (thesis 3.10): bring it up to date, then send it
   * TimeoutNow. Proposals are refused meanwhile; after an election timeout the transfer is
   * abandoned. Refused when not leader or `to` is not another voter.
   */
  transferLeadership(to: NodeId): ProposeResult {
    if (this.roleValue !== 'leader') return this.refuse('not_leader', 'not the leader');
    if (to === this.id || !this.membership.current().voters.includes(to)) {
      return this.refuse('invalid_conf_change', `${to} is not another voter`);
    }
    if (this.transferee === to) return { ok: true, index: 0, term: this.termValue };
    this.transferee = to;
    this.transferElapsed = 0;
    this.timeoutNowSent = false;
    const pr = this.progress.get(to)!;
    if (pr.match === this.log.lastIndex()) this.sendTimeoutNow(to);
    else this.sendAppendLoop(to, pr, false);
    return { ok: true, index: 0, term: this.termValue };
  }

  /**
   * The application snapshotted its state at `index` (<= applied, > the latest snapshot's
   * index): records the snapshot and drops log entries up to `index` from memory but the last
   * `retainEntries` holding at most `retainBytes` bytes (a few retained entries let slightly
   * lagging followers catch up without a snapshot; the byte bound keeps a log of large payloads
   * from holding a thousand of them). A leader keeps no more than its followers still lack: none
   * once every follower has `index` (and none at all as a sole member), since each retained
   * entry holds its payload in memory. Returns the snapshot, which the driver must persist
   * (storage.saveSnapshot).
   */
  snapshotTaken(
    index: number,
    data: SnapshotData,
    retainEntries = 0,
    retainBytes = Number.POSITIVE_INFINITY,
  ): Snapshot {
    assert(retainEntries >= 0 && retainBytes >= 0, 'retain bounds must be >= 0');
    const snapshot: Snapshot = { meta: this.snapshotMetaAt(index), data };
    this.snapshotValue = snapshot;
    const retainFrom = this.log.retainFrom(index, retainEntries, retainBytes);
    const compactTo = Math.max(this.log.baseIndex(), retainFrom, this.heldByFollowersTo(index));
    this.membership.onCompact(compactTo);
    this.log.compact(compactTo);
    return snapshot;
  }

  /**
   * The payloads of entries handed to the application stop being held in memory (they are
   * applied and on disk) once no replica may need them from this log, so its memory does not
   * follow the write rate times the snapshot interval. A leader drops those every follower holds
   * (a sole member drops them once applied). Any other replica may lead next and then send its
   * log, so it keeps the newest `payloadTailEntries` and `payloadTailBytes`: what a new leader
   * sends to a peer lagging a little; a peer further behind gets a snapshot.
   */
  private releasePayloads(): void {
    if (this.cfg.releaseAppliedPayloads !== true) return;
    if (this.roleValue !== 'leader') {
      const { payloadTailEntries = 0, payloadTailBytes = 0 } = this.cfg;
      this.log.releasePayloadsBeyond(payloadTailEntries, payloadTailBytes);
      return;
    }
    const applied = this.log.applied();
    if (applied > this.log.releasedIndex()) {
      this.log.releasePayloadsTo(this.heldByFollowersTo(applied));
    }
  }

  /**
   * Whether follower `pr` needs entries this log cannot send, compacted away or with their
   * payloads released (releasedIndex is at least the base): only a snapshot serves it. Starts
   * sending one when the latest covers every such entry; until then (released entries alone)
   * nothing is sent, and snapshotWanted asks the node for one.
   */
  private needsSnapshot(to: NodeId, pr: Progress): boolean {
    const released = this.log.releasedIndex();
    if (pr.next > released) return false;
    const snapshot = this.snapshotValue;
    const compacted = pr.next <= this.log.baseIndex();
    assert(!compacted || snapshot !== null, 'follower behind the log base but no snapshot');
    if (snapshot !== null && snapshot.meta.index >= released) this.startSnapshot(to, pr);
    return true;
  }

  /**
   * Leader: a follower waits for entries whose payloads were released and no snapshot covers
   * them yet. The node then snapshots without waiting for its usual rule.
   */
  snapshotWanted(): boolean {
    if (this.roleValue !== 'leader') return false;
    const released = this.log.releasedIndex();
    if (this.snapshotValue !== null && this.snapshotValue.meta.index >= released) return false;
    for (const pr of this.progress.values()) {
      if (pr.state !== 'snapshot' && pr.next <= released) return true;
    }
    return false;
  }

  /**
   * The highest index up to which no follower lacks an entry, capped at `index`: the lowest
   * follower match when leading (`index` with no follower), 0 otherwise (a follower does not
   * know what the others hold, and may lead them next).
   */
  private heldByFollowersTo(index: number): number {
    if (this.roleValue !== 'leader') return 0;
    let lowest = index;
    for (const pr of this.progress.values()) lowest = Math.min(lowest, pr.match);
    return lowest;
  }

  /**
   * What a snapshot of the state at applied index `index` records (its term and configuration),
   * for a snapshot stored as it is produced and taken (snapshotTaken) once stored. `index` must
   * be applied, newer than the latest snapshot and not below the log base.
   */
  snapshotMetaAt(index: number): SnapshotMeta {
    assert(index <= this.log.applied(), `snapshot ${index} beyond applied ${this.log.applied()}`);
    assert(index > (this.snapshotValue?.meta.index ?? 0), `snapshot ${index} not newer`);
    const term = this.log.term(index);
    assert(term !== undefined, `snapshot index ${index} below the log base`);
    return { index, term, config: this.membership.configAt(index) };
  }

  /** Index of the latest snapshot (taken or installed), 0 without one. */
  snapshotIndex(): number {
    return this.snapshotValue?.meta.index ?? 0;
  }

  /**
   * Storage holds the snapshot at `index` durably as `data` (read from where it is stored):
   * the core keeps that handle instead of the bytes it was given, if it is still the latest.
   */
  snapshotStored(index: number, data: SnapshotData): void {
    const snapshot = this.snapshotValue;
    if (snapshot === null || snapshot.meta.index !== index) return; // a newer one replaced it
    const size = snapshot.data.dataBytes;
    assert(data.dataBytes === size, `snapshot ${index} stored with another size`);
    this.snapshotValue = { meta: snapshot.meta, data };
  }

  // ---------------------------------------------------------------- outputs

  /** True when `ready()` would return something. */
  hasReady(): boolean {
    return (
      this.msgs.length > 0 ||
      this.msgsAfterPersist.length > 0 ||
      this.snapshotSends.length > 0 ||
      this.log.hasUnstable() ||
      this.log.hasCommittedToApply() ||
      this.pendingRestore !== null ||
      this.hardStateChanged()
    );
  }

  /**
   * Everything accumulated since the previous Ready, or null when there is nothing. Readies may
   * be taken while earlier ones are still being persisted; `onPersisted` goes in `seq` order.
   */
  ready(): Ready | null {
    if (!this.hasReady()) return null;
    let hardState: HardState | null = null;
    if (this.hardStateChanged()) {
      hardState = this.hardState();
      checkHardStateStep(this.savedHardState, hardState);
      this.savedHardState = hardState;
    }
    const snapshot = this.pendingRestore;
    this.pendingRestore = null;
    if (snapshot !== null) this.snapshotSeq = this.readySeq + 1;
    const ready: Ready = {
      seq: ++this.readySeq,
      hardState,
      snapshot,
      entries: this.log.takeUnstable(),
      messages: this.msgs,
      snapshotSends: this.snapshotSends,
      messagesAfterPersist: this.msgsAfterPersist,
      committed: this.log.takeCommitted(),
    };
    this.releasePayloads();
    this.msgs = [];
    this.snapshotSends = [];
    this.msgsAfterPersist = [];
    return ready;
  }

  /**
   * The writes of `ready` (and of every earlier Ready) are durable. The leader counts itself in
   * the commit quorum only for entries acknowledged here (thesis 10.2.1).
   */
  onPersisted(ready: Ready): void {
    assert(ready.seq === this.persistedSeq + 1, `onPersisted(${ready.seq}) out of order`);
    this.persistedSeq = ready.seq;
    if (ready.snapshot !== null) this.log.stableSnapshot(ready.snapshot.meta.index);
    const n = ready.entries.length;
    if (n > 0) this.log.stableTo(ready.entries[n - 1]!.index, ready.entries[n - 1]!.term);
    if (this.roleValue === 'leader' && this.maybeCommit()) this.bcastAppend(false);
  }

  // ---------------------------------------------------------------- queries

  currentTerm(): number {
    return this.termValue;
  }

  role(): Role {
    return this.roleValue;
  }

  isLeader(): boolean {
    return this.roleValue === 'leader';
  }

  /** Entries lost to unreadable storage and not yet caught up again (see `damage`), or null. */
  storageDamage(): StorageDamage | null {
    return this.damage;
  }

  /** Leader of the current term as far as this replica knows, or null. */
  leaderId(): NodeId | null {
    return this.lead;
  }

  votedFor(): NodeId | null {
    return this.vote;
  }

  commitIndex(): number {
    return this.log.committed();
  }

  /** Highest index handed to the application. */
  appliedIndex(): number {
    return this.log.applied();
  }

  lastIndex(): number {
    return this.log.lastIndex();
  }

  /** Highest index known durable locally. */
  stableIndex(): number {
    return this.log.stableIndex();
  }

  /** Lowest index whose term is known (entries above it are in memory). */
  logBaseIndex(): number {
    return this.log.baseIndex();
  }

  /** Term of the entry at `index`, or undefined when compacted or beyond the last index. */
  termAt(index: number): number | undefined {
    return this.log.term(index);
  }

  /** Entry at `index` in (logBaseIndex, lastIndex]. */
  entryAt(index: number): Entry {
    return this.log.entry(index);
  }

  /** The configuration in force (latest in the log, thesis 4.1). */
  config(): ClusterConfig {
    return this.membership.current();
  }

  /** Index of the leader's first entry of its term (its Noop), 0 when not leader. */
  termStartIndex(): number {
    return this.roleValue === 'leader' ? this.termStart : 0;
  }

  /** Latest snapshot known to this replica (local or installed), with its data. */
  latestSnapshot(): Snapshot | null {
    return this.snapshotValue;
  }

  /** Ticks since creation. */
  tickCount(): number {
    return this.now;
  }

  /** Voter being handed leadership, or null. */
  transferTarget(): NodeId | null {
    return this.transferee;
  }

  /** Leader only: the view of follower `id`, or null. */
  progressOf(id: NodeId): ProgressView | null {
    const pr = this.progress.get(id);
    if (pr === undefined) return null;
    return {
      match: pr.match,
      next: pr.next,
      state: pr.state,
      recentActive: this.roleTicks - pr.lastHeardTick < this.cfg.electionTicks,
      learner: this.membership.current().learners.includes(id),
    };
  }

  /** Leader only: every follower's view. */
  progressAll(): Map<NodeId, ProgressView> {
    const out = new Map<NodeId, ProgressView>();
    for (const id of this.progress.keys()) out.set(id, this.progressOf(id)!);
    return out;
  }

  /**
   * True iff this replica is the leader, has committed an entry of its term, is not handing
   * leadership over, and a quorum of voters acknowledged messages it sent less than `leaseTicks`
   * ticks ago. Followers ignore votes for an election timeout after hearing from the leader
   * (leader stickiness), and `leaseTicks < electionTicks`, so no other leader can be elected
   * while this returns true (thesis 6.4.1), clock drift within the margin permitting.
   */
  hasLeaderLease(): boolean {
    if (this.roleValue !== 'leader' || !this.cfg.checkQuorum || this.transferee !== null) {
      return false;
    }
    if (this.log.committed() < this.termStart) return false;
    const ticks: number[] = [];
    for (const voter of this.membership.current().voters) {
      if (voter === this.id) ticks.push(this.now);
      else ticks.push(this.progress.get(voter)?.ackedLeaderTick ?? NEVER_TICK);
    }
    const leaseStart = quorumValue(ticks, NEVER_TICK);
    return this.now - leaseStart < this.cfg.leaseTicks;
  }

  // ---------------------------------------------------------------- terms and roles

  /** A message from a later term; returns false when it is to be ignored. */
  private onHigherTerm(m: Message): boolean {
    if (m.type === MessageType.RequestVote) {
      // Leader stickiness (thesis 4.2.3): with a live leader, ignore campaigns, unless the
      // leader itself asked for this one (TimeoutNow).
      if (!m.transfer && this.inLease()) return false;
      // A pre-vote never changes our term.
      if (m.preVote) return true;
    }
    // Granted pre-votes carry the term the candidate would campaign in, not a newer term.
    if (m.type === MessageType.RequestVoteResponse && m.preVote && m.granted) return true;
    const fromLeader =
      m.type === MessageType.AppendEntries ||
      m.type === MessageType.InstallSnapshot ||
      m.type === MessageType.TimeoutNow;
    this.becomeFollower(m.term, fromLeader ? m.from : null);
    return true;
  }

  /** A message from an earlier term: answer with our term so the sender catches up. */
  private onLowerTerm(m: Message): void {
    switch (m.type) {
      case MessageType.AppendEntries:
        // A leader of an old term, maybe cut off while we moved on: tell it to step down.
        this.send(appendResponse(this, m, false, m.prevLogIndex, 0, 0));
        return;
      case MessageType.InstallSnapshot:
        this.send(snapshotResponse(this, m.from, m.meta.index, 0, false, false));
        return;
      case MessageType.RequestVote:
        this.send(voteResponse(this, m.from, this.termValue, m.preVote, false));
        return;
      default:
        return;
    }
  }

  private inLease(): boolean {
    return this.cfg.checkQuorum && this.leaderContactTicks < this.cfg.electionTicks;
  }

  /**
   * May campaign: a voter of the latest configuration, or, while that configuration is not yet
   * committed, of the committed one (thesis 4.2.2: a server removed by an uncommitted entry may
   * still be needed to elect a leader, and may hold the only log that could lead; it then counts
   * votes of the latest configuration only, not its own). Not while `damage` lasts.
   */
  private promotable(): boolean {
    if (this.damage !== null) return false;
    if (this.membership.current().voters.includes(this.id)) return true;
    const committed = this.log.committed();
    if (this.membership.currentIndex(this.log.baseIndex()) <= committed) return false;
    return this.membership.configAt(committed).voters.includes(this.id);
  }

  private reset(term: number): void {
    if (term !== this.termValue) {
      assert(term > this.termValue, `term would go back from ${this.termValue} to ${term}`);
      this.termValue = term;
      this.vote = null;
    }
    this.lead = null;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.randomizedElectionTicks =
      this.cfg.electionTicks + Math.floor(this.cfg.random() * this.cfg.electionTicks);
    this.votes.clear();
    this.progress.clear();
    this.transferee = null;
    this.transferElapsed = 0;
    this.timeoutNowSent = false;
    this.termStart = 0;
  }

  private becomeFollower(term: number, lead: NodeId | null): void {
    this.reset(term);
    this.lead = lead;
    this.roleValue = 'follower';
    this.stepRole = this.stepFollower;
    this.tickRole = this.tickElection;
  }

  private becomePreCandidate(): void {
    assert(this.roleValue !== 'leader', 'leader cannot become pre-candidate');
    // Unlike a real campaign this changes neither term nor vote (thesis 9.6).
    this.votes.clear();
    this.lead = null;
    this.roleValue = 'pre-candidate';
    this.stepRole = this.stepCandidate;
    this.tickRole = this.tickElection;
  }

  private becomeCandidate(): void {
    assert(this.roleValue !== 'leader', 'leader cannot become candidate');
    this.reset(this.termValue + 1);
    this.vote = this.id;
    this.roleValue = 'candidate';
    this.stepRole = this.stepCandidate;
    this.tickRole = this.tickElection;
  }

  private becomeLeader(): void {
    assert(this.roleValue === 'candidate', 'only a candidate becomes leader');
    this.reset(this.termValue);
    this.lead = this.id;
    this.roleValue = 'leader';
    this.stepRole = this.stepLeader;
    this.tickRole = this.tickHeartbeat;
    const next = this.log.lastIndex() + 1;
    for (const member of this.members()) {
      if (member !== this.id) this.progress.set(member, this.newProgress(next));
    }
    // A leader may count replicas only for entries of its own term (Raft 5.4.2): the Noop gets
    // earlier entries committed without waiting for a client proposal.
    this.termStart = this.appendOwn(EntryType.Noop, [new Uint8Array(0)]);
    this.bcastAppend(false);
  }

  private newProgress(next: number): Progress {
    return new Progress(next, this.cfg.inflightMessagesMax, this.roleTicks);
  }

  private members(): NodeId[] {
    const config = this.membership.current();
    return [...config.voters, ...config.learners];
  }

  // ---------------------------------------------------------------- elections

  private readonly tickElection = (): void => {
    this.electionElapsed += 1;
    if (this.electionElapsed < this.randomizedElectionTicks) return;
    if (this.promotable()) {
      this.electionElapsed = 0;
      this.campaign(this.cfg.preVote ? 'pre' : 'real');
    } else if (this.damage !== null) {
      // No leader for an election timeout, and this replica may not campaign: ask for its log.
      this.electionElapsed = 0;
      this.tickRepair();
    }
  };

  /** Starts a (pre-)election (Raft 5.2, thesis 9.6). A transfer campaign skips pre-vote. */
  private campaign(kind: CampaignKind): void {
    // A term past RAFT_TERM_MAX would not fit the tokens that carry it; no honest cluster gets
    // near it (the transport refuses such terms from peers), so this node just stops campaigning.
    if (!this.promotable() || this.termValue >= RAFT_TERM_MAX) return;
    let voteTerm: number;
    if (kind === 'pre') {
      this.becomePreCandidate();
      voteTerm = this.termValue + 1;
    } else {
      this.becomeCandidate();
      voteTerm = this.termValue;
    }
    this.votes.set(this.id, true);
    if (this.checkElection()) return;
    const lastLogIndex = this.log.lastIndex();
    const lastLogTerm = this.log.lastTerm();
    for (const voter of this.membership.current().voters) {
      if (voter === this.id) continue;
      const request: RequestVote = {
        type: MessageType.RequestVote,
        from: this.id,
        to: voter,
        term: voteTerm,
        preVote: kind === 'pre',
        lastLogIndex,
        lastLogTerm,
        transfer: kind === 'transfer',
      };
      this.send(request);
    }
  }

  /** Acts on the votes so far; returns true when the election is decided. */
  private checkElection(): boolean {
    const result = tallyVotes(this.membership.current().voters, this.votes);
    if (result === 'pending') return false;
    if (result === 'lost') this.becomeFollower(this.termValue, null);
    else if (this.roleValue === 'pre-candidate') this.campaign('real');
    else this.becomeLeader();
    return true;
  }

  /** Raft 5.2 / 5.4.1 vote rules, plus pre-vote (thesis 9.6). */
  private handleVoteRequest(m: RequestVote): void {
    // Stickiness again, for requests in our own term: our term may have moved without a leader
    // telling us (a stale answer from a later term), and the lease still counts on us.
    const sticky = !m.transfer && this.inLease();
    // A replica that may have lost its vote and acknowledged entries does not vote for a log
    // past founding until it has caught up (see `rebuilding`).
    const lostState = this.rebuilding && m.lastLogTerm > 1;
    const canVote =
      !lostState &&
      (this.vote === m.from ||
        (!sticky &&
          ((this.vote === null && this.lead === null) || (m.preVote && m.term > this.termValue))));
    const upToDate =
      this.log.isUpToDate(m.lastLogIndex, m.lastLogTerm) &&
      (this.damage === null || covers(m.lastLogTerm, m.lastLogIndex, this.damage));
    if (canVote && upToDate) {
      if (!m.preVote) {
        assert(m.term === this.termValue, 'granting a vote in another term');
        this.vote = m.from;
        this.electionElapsed = 0;
      }
      this.send(voteResponse(this, m.from, m.term, m.preVote, true));
    } else {
      this.send(voteResponse(this, m.from, this.termValue, m.preVote, false));
    }
  }

  // ---------------------------------------------------------------- step functions

  private readonly stepFollower = (m: Message): void => {
    switch (m.type) {
      case MessageType.AppendEntries:
        this.heardFromLeader(m.from);
        this.handleAppend(m);
        return;
      case MessageType.InstallSnapshot:
        this.heardFromLeader(m.from);
        this.handleSnapshotChunk(m);
        return;
      case MessageType.RequestVote:
        this.handleVoteRequest(m);
        return;
      case MessageType.TimeoutNow:
        // The leader hands us leadership (thesis 3.10): campaign at once, skipping pre-vote.
        if (this.promotable()) this.campaign('transfer');
        return;
      default:
        return; // responses from an earlier role of ours in this term
    }
  };

  private heardFromLeader(leader: NodeId): void {
    this.lead = leader;
    this.electionElapsed = 0;
    this.leaderContactTicks = 0;
  }

  private readonly stepCandidate = (m: Message): void => {
    switch (m.type) {
      case MessageType.AppendEntries:
        // Someone won this term (Raft 5.2).
        this.becomeFollower(this.termValue, m.from);
        this.heardFromLeader(m.from);
        this.handleAppend(m);
        return;
      case MessageType.InstallSnapshot:
        this.becomeFollower(this.termValue, m.from);
        this.heardFromLeader(m.from);
        this.handleSnapshotChunk(m);
        return;
      case MessageType.RequestVote:
        this.handleVoteRequest(m);
        return;
      case MessageType.RequestVoteResponse:
        if (m.preVote !== (this.roleValue === 'pre-candidate')) return;
        this.votes.set(m.from, m.granted);
        this.checkElection();
        return;
      default:
        return;
    }
  };

  private readonly stepLeader = (m: Message): void => {
    switch (m.type) {
      case MessageType.AppendEntriesResponse:
        this.handleAppendResponse(m);
        return;
      case MessageType.InstallSnapshotResponse:
        this.handleSnapshotResponse(m);
        return;
      case MessageType.RequestVote:
        this.handleVoteRequest(m);
        return;
      case MessageType.AppendEntries:
      case MessageType.InstallSnapshot:
        assert(false, `two leaders in term ${this.termValue}: ${this.id} and ${m.from}`);
        return;
      default:
        return;
    }
  };

  // ---------------------------------------------------------------- follower replication

  /** Raft 5.3 consistency check and append, with fast-backtracking hints on rejection. */
  private handleAppend(m: AppendEntries): void {
    let prev = m.prevLogIndex;
    let prevTerm = m.prevLogTerm;
    let entries = m.entries;
    const committed = this.log.committed();
    if (prev < committed) {
      // Entries up to our commit index are the leader's (Leader Completeness): skip them.
      const skip = Math.min(entries.length, committed - prev);
      if (skip > 0) {
        const ours = this.log.term(prev + skip);
        assert(ours === undefined || ours === entries[skip - 1]!.term, 'committed entry differs');
        entries = entries.slice(skip);
      }
      prev = committed;
      prevTerm = this.log.term(committed)!;
    }
    if (!this.log.matchTerm(prev, prevTerm)) {
      this.rejectAppend(m);
      return;
    }
    const oldLast = this.log.lastIndex();
    const appendedFrom = this.log.appendAfter(prev, entries);
    if (appendedFrom > 0) {
      if (appendedFrom <= oldLast) this.membership.onTruncate(appendedFrom);
      this.membership.onAppend(entries, appendedFrom);
    }
    const lastNew = prev + entries.length;
    this.log.commitTo(Math.min(m.leaderCommit, lastNew));
    this.noteCaughtUp(m.leaderCommit);
    this.acceptAppend(m, lastNew);
  }

  /**
   * Answers an accepted AppendEntries. The answer says the log matches the leader's durably up
   * to `lastNew`, so it waits for this replica's writes. A heartbeat (no entries) that comes
   * while writes are still under way is also answered at once, naming only what is durable
   * already (as etcd answers heartbeats without waiting for its disk): the leader then hears
   * from a live follower every heartbeat, and its check-quorum does not take a slow disk for a
   * lost follower. With one voter of three stopped (a rolling restart), the other's write
   * latency would otherwise depose the leader whenever it passed an election timeout.
   */
  private acceptAppend(m: AppendEntries, lastNew: number): void {
    const answer = appendResponse(this, m, true, lastNew, 0, 0);
    if (m.entries.length > 0 || !this.writesUnderWay() || this.snapshotUnderWay()) {
      this.send(answer);
      return;
    }
    // Entries up to the stable index are on disk as they are in memory, and up to `lastNew`
    // they are the leader's: the smaller of the two is durably the leader's.
    const durable = Math.min(lastNew, this.log.stableIndex());
    this.msgs.push(durable === lastNew ? answer : appendResponse(this, m, true, durable, 0, 0));
    if (durable < lastNew) this.send(answer);
  }

  /** A Ready not yet persisted, or something a next Ready would write. */
  private writesUnderWay(): boolean {
    return (
      this.persistedSeq < this.readySeq || this.log.hasUnstable() || this.hardStateChanged()
    );
  }

  /**
   * An installed snapshot not yet durable: until it is, the stable index may name old entries
   * the snapshot replaced, which need not be the leader's.
   */
  private snapshotUnderWay(): boolean {
    return this.pendingRestore !== null || this.snapshotSeq > this.persistedSeq;
  }

  /**
   * Ends `damage` once the log is at least as up-to-date as the lost one was: by the case split
   * of Raft 5.4.3 it then holds every committed entry the lost one held.
   * Ends `rebuilding` once the log ends with an entry of the current leader's term and reaches
   * `leaderCommit`: by Log Matching it then holds the leader's log up to there, so every entry
   * committed before this term (they precede the leader's first entry) and every one committed
   * in it up to what the leader told us.
   */
  private noteCaughtUp(leaderCommit: number): void {
    this.endDamageIfCovered();
    if (!this.rebuilding) return;
    if (this.log.lastTerm() === this.termValue && this.log.lastIndex() >= leaderCommit) {
      this.rebuilding = false;
    }
  }

  private endDamageIfCovered(): boolean {
    const damage = this.damage;
    if (damage === null || !covers(this.log.lastTerm(), this.log.lastIndex(), damage)) {
      return false;
    }
    this.damage = null;
    this.repairReceiver = null;
    this.repairFrom = null;
    return true;
  }

  private rejectAppend(m: AppendEntries): void {
    const prev = m.prevLogIndex;
    const last = this.log.lastIndex();
    if (prev > last) {
      this.send(appendResponse(this, m, false, prev, last + 1, 0));
      return;
    }
    // Our entry at prev has another term: point the leader at the first entry of that term,
    // so it skips the whole term in one round trip instead of one entry per round trip.
    const conflictTerm = this.log.term(prev)!;
    const conflictIndex = this.log.firstIndexOfTerm(conflictTerm, this.log.committed() + 1, prev);
    this.send(appendResponse(this, m, false, prev, conflictIndex, conflictTerm));
  }

  /** InstallSnapshot chunk (Raft 7), accepted in offset order; resumable by offset. */
  private handleSnapshotChunk(m: InstallSnapshot): void {
    const meta = m.meta;
    const end = m.offset + m.chunk.byteLength;
    if (meta.index <= this.log.committed()) {
      // We already have everything it covers.
      this.receiver = null;
      this.send(snapshotResponse(this, m.from, meta.index, end, true, true));
      return;
    }
    if (this.receiver === null || !this.receiver.isFor(meta)) {
      if (m.offset !== 0) {
        this.send(snapshotResponse(this, m.from, meta.index, 0, false, true));
        return;
      }
      this.receiver = new SnapshotReceiver(meta);
    }
    const accepted = this.receiver.accept(m.offset, m.chunk);
    const received = this.receiver.received();
    if (!(m.done && accepted)) {
      this.send(snapshotResponse(this, m.from, meta.index, received, false, true));
      return;
    }
    const chunks = this.receiver.take();
    this.receiver = null;
    this.installSnapshot(snapshotOf(meta, chunks));
    this.send(snapshotResponse(this, m.from, meta.index, received, true, true));
  }

  private installSnapshot(snapshot: Snapshot): void {
    const { index, term } = snapshot.meta;
    if (this.log.matchTerm(index, term)) {
      // Our log already holds the snapshot's last entry: keep the log, just commit.
      this.log.commitTo(index);
      return;
    }
    this.log.restore(index, term);
    this.membership.reset(snapshot.meta.config);
    this.snapshotValue = snapshot;
    this.pendingRestore = snapshot;
  }

  // ---------------------------------------------------------------- leader replication

  private readonly tickHeartbeat = (): void => {
    this.leaderContactTicks = 0;
    this.heartbeatElapsed += 1;
    // Check quorum: a leader that has not heard from a majority within an election timeout
    // steps down, so a partitioned leader stops accepting proposals it can never commit.
    if (this.cfg.checkQuorum && this.roleTicks - this.quorumHeardTick() >= this.cfg.electionTicks) {
      this.becomeFollower(this.termValue, null);
      return;
    }
    if (this.transferee !== null) {
      this.transferElapsed += 1;
      if (this.transferElapsed >= this.cfg.electionTicks) {
        this.abortTransfer();
        if (this.roleValue !== 'leader') return;
      }
    }
    this.tickSnapshots();
    if (this.heartbeatElapsed >= this.cfg.heartbeatTicks) {
      this.heartbeatElapsed = 0;
      for (const [id, pr] of this.progress) this.sendHeartbeat(id, pr);
    }
  };

  /** Latest tick by which a majority of voters (this leader included) had been heard from. */
  private quorumHeardTick(): number {
    const ticks: number[] = [];
    for (const voter of this.membership.current().voters) {
      if (voter === this.id) ticks.push(this.roleTicks);
      else ticks.push(this.progress.get(voter)?.lastHeardTick ?? NEVER_TICK);
    }
    return quorumValue(ticks, this.roleTicks);
  }

  private abortTransfer(): void {
    // Once TimeoutNow left, the target may still campaign with it, bypassing stickiness, so the
    // lease can no longer be trusted in this term: step down instead of carrying on.
    if (this.timeoutNowSent) this.becomeFollower(this.termValue, null);
    else this.transferee = null;
  }

  private tickSnapshots(): void {
    for (const [id, pr] of this.progress) {
      if (pr.state !== 'snapshot') continue;
      pr.snapshotStalledTicks += 1;
      if (pr.snapshotStalledTicks >= this.cfg.electionTicks) {
        this.sendSnapshotChunk(id, pr, pr.snapshotOffset);
      }
    }
  }

  private refuseProposal(): ProposeResult | null {
    if (this.roleValue !== 'leader') return this.refuse('not_leader', 'not the leader');
    if (this.transferee !== null) {
      return this.refuse('transferring', `leadership is being transferred to ${this.transferee}`);
    }
    return null;
  }

  private refuse(reason: RefusalReason, message: string): ProposeResult {
    const leaderId = reason === 'transferring' ? this.transferee : this.lead;
    return { ok: false, reason, leaderId, message };
  }

  /** Leader: appends its own entries of the current term; returns the first index. */
  private appendOwn(type: EntryType, datas: readonly Uint8Array[]): number {
    const first = this.log.lastIndex() + 1;
    const term = this.termValue;
    const entries: Entry[] = new Array<Entry>(datas.length);
    for (let i = 0; i < datas.length; i += 1) {
      entries[i] = { index: first + i, term, type, data: datas[i]! };
    }
    this.log.append(entries);
    if (type === EntryType.ConfChange && this.membership.onAppend(entries, first)) {
      this.onConfigChanged();
    }
    return first;
  }

  /** Leader: track the members of the new configuration (and, until it commits, the leaving). */
  private onConfigChanged(): void {
    const members = new Set(this.members());
    for (const [id, pr] of this.progress) pr.leaving = !members.has(id);
    for (const id of members) {
      if (id !== this.id && !this.progress.has(id)) {
        this.progress.set(id, this.newProgress(this.log.lastIndex()));
      }
    }
    if (this.transferee !== null && !this.membership.current().voters.includes(this.transferee)) {
      this.transferee = null;
    }
    if (this.maybeCommit()) this.bcastAppend(true);
  }

  /** Raft 5.3 / 5.4.2: commit the highest index stored durably on a majority of voters. */
  private maybeCommit(): boolean {
    const matches: number[] = [];
    for (const voter of this.membership.current().voters) {
      if (voter === this.id) matches.push(this.log.stableIndex());
      else matches.push(this.progress.get(voter)?.match ?? 0);
    }
    const index = quorumValue(matches, 0);
    if (index <= this.log.committed() || this.log.term(index) !== this.termValue) return false;
    this.log.commitTo(index);
    const config = this.membership.current();
    if (this.membership.currentIndex(this.log.baseIndex()) > index) return true;
    this.dropLeaving();
    if (!config.voters.includes(this.id)) {
      // Removed from the configuration: keep leading only until the removal commits (4.2.2).
      this.becomeFollower(this.termValue, null);
    }
    return true;
  }

  /**
   * The configuration that removed them committed: one last heartbeat carrying the commit index
   * (best effort, so they may apply their own removal), then forget them.
   */
  private dropLeaving(): void {
    for (const [id, pr] of this.progress) {
      if (!pr.leaving) continue;
      this.sendHeartbeat(id, pr);
      this.progress.delete(id);
    }
  }

  /**
   * Sends pending entries to every follower (`allowEmpty`: an empty append where none are
   * pending). A commit advance sends no empty appends: the new commit index rides the next append
   * or heartbeat, at most a tick late. Followers need it only to apply, never to acknowledge, and
   * an empty append per follower per commit doubles the messages, wake-ups and answers of every
   * write on the hot path.
   */
  private bcastAppend(allowEmpty: boolean): void {
    if (this.roleValue !== 'leader') return;
    for (const [id, pr] of this.progress) this.sendAppendLoop(id, pr, allowEmpty);
  }

  /** Sends as much as the follower's mode allows (one probe, or a window of pipelined appends). */
  private sendAppendLoop(to: NodeId, pr: Progress, allowEmpty: boolean): void {
    let sent = false;
    while (this.maybeSendAppend(to, pr, allowEmpty && !sent)) {
      sent = true;
      if (pr.state !== 'replicate') return;
    }
  }

  private maybeSendAppend(to: NodeId, pr: Progress, allowEmpty: boolean): boolean {
    if (pr.isPaused()) return false;
    const last = this.log.lastIndex();
    assert(pr.next <= last + 1, `next ${pr.next} beyond last index ${last}`);
    if (this.needsSnapshot(to, pr)) return pr.state === 'snapshot';
    const prevLogIndex = pr.next - 1;
    const prevLogTerm = this.log.term(prevLogIndex);
    assert(prevLogTerm !== undefined, `term of ${prevLogIndex} above the log base unknown`);
    const entries =
      pr.next <= last ? this.log.slice(pr.next, last + 1, this.cfg.appendBytesMax) : NO_ENTRIES;
    if (entries.length === 0 && !allowEmpty) return false;
    this.send(this.appendMessage(to, prevLogIndex, prevLogTerm, entries));
    if (entries.length > 0 && pr.state === 'replicate') {
      const lastSent = entries[entries.length - 1]!.index;
      pr.next = lastSent + 1;
      pr.inflights.add(lastSent);
    } else if (pr.state === 'probe') {
      pr.probeSent = true;
    }
    return true;
  }

  private appendMessage(
    to: NodeId,
    prevLogIndex: number,
    prevLogTerm: number,
    entries: readonly Entry[],
  ): AppendEntries {
    return {
      type: MessageType.AppendEntries,
      from: this.id,
      to,
      term: this.termValue,
      prevLogIndex,
      prevLogTerm,
      entries,
      leaderCommit: this.log.committed(),
      leaderTick: this.now,
    };
  }

  /**
   * An empty AppendEntries that asserts authority, carries the commit index, re-probes a
   * follower in probe mode and exposes lost pipeline messages in replicate mode (the follower
   * rejects the gap). Its acknowledgement is the lease evidence.
   */
  private sendHeartbeat(to: NodeId, pr: Progress): void {
    let prev = 0;
    let prevTerm = 0;
    if (pr.state !== 'snapshot') {
      const term = this.log.term(pr.next - 1);
      if (term !== undefined) {
        prev = pr.next - 1;
        prevTerm = term;
      }
      // What the follower needs next was compacted away (pipeline stalled on lost messages
      // meanwhile) or its payloads released: only a snapshot can help it now.
      this.needsSnapshot(to, pr);
    }
    this.send(this.appendMessage(to, prev, prevTerm, NO_ENTRIES));
  }

  private handleAppendResponse(m: AppendEntriesResponse): void {
    const pr = this.progress.get(m.from);
    if (pr === undefined) return;
    // A tick this node has not reached answers an AppendEntries of an earlier incarnation of it
    // (it restarted, its ticks began again at 0, and it leads again): a follower that has moved
    // to our new term rejects the delayed old request with the new term. It answers nothing this
    // leader sent, so it is dropped like a lost message (simulation seed 485757).
    if (m.leaderTick > this.now) return;
    pr.lastHeardTick = this.roleTicks;
    // Only an acceptance proves the echoed tick is this incarnation's: a rejection may answer an
    // earlier incarnation's request whose tick happens to be below ours, and a lease counted
    // from it could outlive what the follower promised.
    if (m.success && m.leaderTick > pr.ackedLeaderTick) pr.ackedLeaderTick = m.leaderTick;
    if (!m.success) {
      if (pr.maybeDecrTo(m.matchIndex, this.hintNext(m))) {
        if (pr.state === 'replicate') pr.becomeProbe(pr.next);
        this.sendAppendLoop(m.from, pr, false);
      }
      return;
    }
    const probeMatched = pr.state === 'probe' && m.matchIndex === pr.match;
    if (!pr.maybeUpdate(m.matchIndex) && !probeMatched) return;
    if (pr.state === 'probe') pr.becomeReplicate();
    else if (pr.state === 'snapshot' && pr.match >= pr.pendingSnapshot) pr.becomeReplicate();
    else if (pr.state === 'replicate') pr.inflights.freeLE(pr.match);
    if (this.maybeCommit()) this.bcastAppend(false);
    else this.sendAppendLoop(m.from, pr, false);
    if (this.roleValue !== 'leader') return;
    if (m.from === this.transferee && pr.match === this.log.lastIndex() && !this.timeoutNowSent) {
      this.sendTimeoutNow(m.from);
    }
  }

  /** Where the follower's log may agree with ours, from its conflict hints. */
  private hintNext(m: AppendEntriesResponse): number {
    if (m.conflictTerm > 0) {
      const index = this.log.lastIndexOfTerm(m.conflictTerm, m.matchIndex);
      if (index > 0) return index + 1;
    }
    return m.conflictIndex;
  }

  private sendTimeoutNow(to: NodeId): void {
    this.timeoutNowSent = true;
    this.send({ type: MessageType.TimeoutNow, from: this.id, to, term: this.termValue });
  }

  // ---------------------------------------------------------------- leader snapshots

  private startSnapshot(to: NodeId, pr: Progress): void {
    const snapshot = this.snapshotValue;
    assert(snapshot !== null, 'follower behind the log base but no snapshot');
    pr.becomeSnapshot(snapshot.meta.index);
    this.sendSnapshotChunk(to, pr, 0);
  }

  private sendSnapshotChunk(to: NodeId, pr: Progress, offset: number): void {
    const snapshot = this.snapshotValue!;
    if (snapshot.meta.index !== pr.pendingSnapshot) {
      // A newer snapshot replaced the one being sent: start over with it.
      pr.becomeSnapshot(snapshot.meta.index);
      offset = 0;
    }
    const size = snapshot.data.dataBytes;
    const start = Math.min(offset, size);
    const end = Math.min(size, start + this.cfg.snapshotChunkBytes);
    const { meta, data } = snapshot;
    const done = end === size;
    const term = this.termValue;
    this.snapshotSends.push({ from: this.id, to, term, meta, offset: start, end, done, data });
    pr.snapshotOffset = start;
    pr.snapshotStalledTicks = 0;
  }

  private handleSnapshotResponse(m: InstallSnapshotResponse): void {
    const pr = this.progress.get(m.from);
    if (pr === undefined) return;
    pr.lastHeardTick = this.roleTicks;
    if (pr.state !== 'snapshot' || m.snapshotIndex !== pr.pendingSnapshot) return;
    if (!m.success) {
      pr.becomeProbe(pr.match + 1);
      this.sendAppendLoop(m.from, pr, false);
      return;
    }
    if (m.done) {
      pr.maybeUpdate(m.snapshotIndex);
      pr.becomeReplicate();
      if (this.maybeCommit()) this.bcastAppend(true);
      else this.sendAppendLoop(m.from, pr, false);
      return;
    }
    // An answer naming the offset we last sent is a duplicate: the stall timer covers loss.
    if (m.nextOffset === pr.snapshotOffset) return;
    this.sendSnapshotChunk(m.from, pr, m.nextOffset);
  }

  // ---------------------------------------------------------------- repair without a leader

  /** Answers a damaged replica's request for its log, or passes it on once (see repair.ts). */
  private answerRepair(m: RepairRequest): void {
    if (m.origin === this.id) return;
    const answer = repairAnswer(
      {
        id: this.id,
        term: this.termValue,
        log: this.log,
        snapshot: this.snapshotValue,
        appendBytesMax: this.cfg.appendBytesMax,
        snapshotChunkBytes: this.cfg.snapshotChunkBytes,
      },
      m,
    );
    if (answer.kind === 'entries') this.msgs.push(answer.message);
    else if (answer.kind === 'snapshot') this.snapshotSends.push(answer.send);
    else if (answer.kind === 'relay' && m.from === m.origin) {
      for (const to of this.members()) {
        if (to !== this.id && to !== m.origin) this.msgs.push({ ...m, from: this.id, to });
      }
    }
  }

  /** An election timeout without a leader while damaged: ask the peers (see repair.ts). */
  private tickRepair(): void {
    if (this.repairFrom !== null && this.repairStalls < REPAIR_STALLS_MAX) {
      this.repairStalls += 1;
      this.askRepair(this.repairFrom);
      return;
    }
    this.repairReceiver = null;
    this.repairFrom = null;
    this.repairStalls = 0;
    const targets = new Set([...this.members(), ...this.peersHeard]);
    targets.delete(this.id);
    for (const to of targets) this.askRepair(to);
  }

  private askRepair(to: NodeId): void {
    const receiving = this.repairReceiver;
    const snapshot =
      receiving === null ? null : { index: receiving.meta.index, offset: receiving.received() };
    const request = repairRequest(this.id, to, this.termValue, this.damage!, this.log, snapshot);
    this.msgs.push(request);
  }

  /**
   * Entries from a replica holding the damaged end. Taken only where they extend this log:
   * every entry held already must be the one offered (see repair.ts).
   */
  private takeRepairEntries(m: AppendEntries): void {
    const damage = this.damage;
    const last = m.entries[m.entries.length - 1];
    if (damage === null || last === undefined || last.index > damage.lastIndex) return;
    if (!this.log.matchTerm(m.prevLogIndex, m.prevLogTerm)) return;
    for (const entry of m.entries) {
      const held = this.log.term(entry.index);
      if (held === undefined) break;
      if (held !== entry.term) return;
    }
    const appendedFrom = this.log.appendAfter(m.prevLogIndex, m.entries);
    if (appendedFrom > 0) this.membership.onAppend(m.entries, appendedFrom);
    this.afterRepair(m.from);
  }

  /** A snapshot chunk from a replica holding the damaged end, taken in offset order. */
  private takeRepairChunk(m: InstallSnapshot): void {
    const damage = this.damage;
    const meta = m.meta;
    if (damage === null || meta.index > damage.lastIndex || meta.index <= this.log.lastIndex()) {
      return;
    }
    if (this.snapshotUnderWay()) return;
    let receiver = this.repairReceiver;
    if (receiver === null || !receiver.isFor(meta) || this.repairFrom !== m.from) {
      if (m.offset !== 0) return;
      receiver = new SnapshotReceiver(meta);
      this.repairReceiver = receiver;
      this.repairFrom = m.from;
    }
    if (!receiver.accept(m.offset, m.chunk)) return;
    this.repairStalls = 0;
    if (!m.done) {
      this.askRepair(m.from);
      return;
    }
    const chunks = receiver.take();
    this.repairReceiver = null;
    this.installSnapshot(snapshotOf(meta, chunks));
    this.afterRepair(m.from);
  }

  /** Ends the damage once the log covers it; otherwise asks `source` for what follows. */
  private afterRepair(source: NodeId): void {
    if (this.endDamageIfCovered()) return;
    this.repairFrom = source;
    this.repairStalls = 0;
    this.askRepair(source);
  }

  // ---------------------------------------------------------------- outbox

  private send(m: Message): void {
    switch (m.type) {
      case MessageType.AppendEntries:
      case MessageType.InstallSnapshot:
      case MessageType.TimeoutNow:
        this.msgs.push(m);
        return;
      case MessageType.RequestVote:
        // A real vote request follows our own durable vote for ourselves; a pre-vote changes
        // nothing and may leave at once.
        (m.preVote ? this.msgs : this.msgsAfterPersist).push(m);
        return;
      default:
        // Responses promise durable state (our vote, our log): they wait for the fsync.
        this.msgsAfterPersist.push(m);
    }
  }

  private hardState(): HardState {
    const state = { term: this.termValue, vote: this.vote, commit: this.log.committed() };
    return this.damage === null ? state : { ...state, damage: this.damage };
  }

  private hardStateChanged(): boolean {
    const saved = this.savedHardState;
    return (
      saved.term !== this.termValue ||
      saved.vote !== this.vote ||
      saved.commit !== this.log.committed() ||
      (saved.damage ?? null) !== this.damage
    );
  }
}

/** A log ending at (lastTerm, lastIndex) is at least as up-to-date as the damaged one was. */
function covers(lastTerm: number, lastIndex: number, damage: StorageDamage): boolean {
  if (lastTerm !== damage.lastTerm) return lastTerm > damage.lastTerm;
  return lastIndex >= damage.lastIndex;
}

/** Durable state only moves forward: term, one vote per term, commit. */
function checkHardStateStep(before: HardState, after: HardState): void {
  assert(after.term >= before.term, `term would go back from ${before.term} to ${after.term}`);
  assert(
    after.term > before.term || before.vote === null || after.vote === before.vote,
    `second vote in term ${after.term}`,
  );
  assert(after.commit >= before.commit, `commit would go back from ${before.commit}`);
}

/**
 * Loaded entries that can be trusted after a snapshot at (baseIndex, baseTerm): contiguous from
 * baseIndex + 1 with non-decreasing terms. Stale entries older than the snapshot (left behind
 * when a snapshot replaced a divergent log) are cut off there.
 */
function usableEntries(entries: readonly Entry[], baseIndex: number, baseTerm: number): Entry[] {
  const out: Entry[] = [];
  let expected = baseIndex + 1;
  let lastTerm = baseTerm;
  for (const entry of entries) {
    if (entry.index <= baseIndex) continue;
    if (entry.index !== expected || entry.term < lastTerm) break;
    out.push(entry);
    expected += 1;
    lastTerm = entry.term;
  }
  return out;
}

function appendResponse(
  core: RaftCore,
  m: AppendEntries,
  success: boolean,
  matchIndex: number,
  conflictIndex: number,
  conflictTerm: number,
): AppendEntriesResponse {
  return {
    type: MessageType.AppendEntriesResponse,
    from: core.id,
    to: m.from,
    term: core.currentTerm(),
    success,
    matchIndex,
    conflictIndex,
    conflictTerm,
    leaderTick: m.leaderTick,
  };
}

function voteResponse(
  core: RaftCore,
  to: NodeId,
  term: number,
  preVote: boolean,
  granted: boolean,
): RequestVoteResponse {
  return { type: MessageType.RequestVoteResponse, from: core.id, to, term, preVote, granted };
}

function snapshotResponse(
  core: RaftCore,
  to: NodeId,
  snapshotIndex: number,
  nextOffset: number,
  done: boolean,
  success: boolean,
): InstallSnapshotResponse {
  return {
    type: MessageType.InstallSnapshotResponse,
    from: core.id,
    to,
    term: core.currentTerm(),
    snapshotIndex,
    nextOffset,
    done,
    success,
  };
}
