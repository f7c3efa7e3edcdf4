// A cluster member: one StorageEngine and one Transport shared by every Raft group it hosts (the
// metadata group on every member, and the spools placed on it), and `service`, the SpoolService
// that routes each call to the local replica of its spool while that replica is the primary.
//
// The metadata group has every configured member as a voter (not only the first 3 or 5): every
// member then applies the metadata itself and needs no other way to learn its placement.
//
// Start-up: a member whose storage is empty bootstraps the metadata group with the configured
// peers as voters; otherwise it recovers every group from storage (term, vote, log, snapshot)
// and never bootstraps again. Spool groups found in storage start at once (the member takes part
// in their quorums before its metadata catches up); spools the metadata places on this member
// start when their entry is applied (bootstrapped with their replica set if new).
//
// This file composes the member; each concern lives in its own piece, wired here through narrow
// host interfaces: storage (member-storage.ts), links to other members (member-links.ts), how
// groups start (group-starter.ts), the hosted replicas (replica-registry.ts), following the
// metadata (meta-follower.ts), the auth table (auth-push.ts), readiness, call routing, plans,
// replica moves, storage recovery, and the admin backend (member-admin.ts, membership.ts).

import {
  type Plan,
  resolvePlan,
  type SpoolService,
} from '@spoolmq/engine';
import {
  type AuthTable,
  type PayloadItem,
  type Clock,
  monotonicClock,
  systemClock,
} from '@spoolmq/protocol';
import {
  GroupRouter,
  type StorageStats,
  type Transport,
  type GrpcTransportStats,
} from '@spoolmq/raft';
import type * as grpc from '@grpc/grpc-js';
import { systemRandomBytes } from '../host/random.js';
import { CursorCodec } from '../host/cursors.js';
import type { DiskMonitor, DiskMonitorStatus } from '../host/disk-monitor.js';
import type { MemoryMonitor, MemoryMonitorStatus } from '../host/memory-monitor.js';
import { HostedSpoolService } from '../host/hosted-service.js';
import { PatternCache } from '../host/patterns.js';
import { TokenCodec } from '../host/tokens.js';
import { unavailable } from './cluster-errors.js';
import { accountsServiceRegistration, answerAdminCall } from '../rpc/accounts-rpc.js';
import { AuthPush } from './auth-push.js';
import { MemberLinks } from './member-links.js';
import { MemberStorage, diskMonitorOf, memoryMonitorOf } from './member-storage.js';
import { MetaFollower, metaCaughtUp } from './meta-follower.js';
import { appliedCommitted } from './node-wait.js';
import { type HandOffGroup, type HandOffReport, handOffGroups } from './lame-duck.js';
import { type AdminHost, MemberAdmin } from './member-admin.js';
import type { MetaResult } from './meta-commands.js';
import { placeReplicas } from './placement.js';
import { META_GROUP, type MetaReplica } from './meta-replica.js';
import { type DrainableService, type MemberOptions, checkOptions } from './member-options.js';
import { REPLICAS_PER_SPOOL_DEFAULT } from './placement.js';
import { RAFT_TICK_MS_DEFAULT } from './raft-tuning.js';
import type { FetchAnswer } from './payload-fetch.js';
import { CallRouter } from './call-router.js';
import { GroupStarter } from './group-starter.js';
import { type MemberStatus, type MemoryBoundsStatus, memberStatus } from './member-metrics.js';
import { MemberReadiness, type PayloadsLacking } from './member-readiness.js';
import { PlanReconciler } from './plan-reconciler.js';
import { ReplicaRegistry } from './replica-registry.js';
import { ReplicaMover } from './replica-mover.js';
import { StorageRecovery } from './storage-recovery.js';
import type { ClusterCodecs, SpoolReplica } from './spool-replica.js';

/** Tokens and cursors are keyed by the cluster secret and this fixed, cluster-wide salt. */
const CLUSTER_SALT = new TextEncoder().encode('mq-cluster-v1');
/** How long a closing member lets the gateways' calls in flight finish (they take ms). */
export const SERVICE_DRAIN_MS = 2_000;
/**
 * How long a restarted metadata group may take to apply what its log holds as committed before
 * it takes over anyway (ms): it applies that in its first turns unless it cannot apply at all.
 */
const CATCH_UP_WAIT_MS = 1_000;
/** How long `ready()` waits by default (ms). */
export const MEMBER_READY_TIMEOUT_MS_DEFAULT = 30_000;

export class Member implements AdminHost {
  readonly id: string;
  /** The admin API's backend (accounts, keys, plans, spools) on this member. */
  readonly admin: MemberAdmin;
  /** The auth table, pushed to in-process listeners and watching gateways. */
  private readonly auth: AuthPush;
  /** Keeps the served spools' engines on the metadata's plans. */
  private readonly plans: PlanReconciler;
  /** Where each gateway call runs: this member's host, or the primary elsewhere. */
  private readonly calls: CallRouter;
  /** The gRPC port, the peers' addresses, admission, admin steps to other members. */
  private readonly links: MemberLinks;
  /** Routes each call to this member's replica of the spool while it is the primary. */
  readonly service: SpoolService;
  private readonly options: MemberOptions;
  private readonly clock: Clock;
  /** The cluster layer's time (MemberOptions.clusterClock): waits, retries, reconciliation. */
  private readonly clusterClock: Clock;
  private readonly plan: Plan;
  /** The spool replicas hosted here: starting, running, stopping. */
  private readonly replicas: ReplicaRegistry<SpoolReplica>;
  /** Starts the metadata group and spool replicas on the shared storage and transport. */
  private readonly groups: GroupStarter;
  /** When this member can serve, and who waits for it. */
  private readonly readiness: MemberReadiness;
  /** What each applied metadata command changes here, and when replicas are reconciled. */
  private readonly follower: MetaFollower;
  /** Drives the replica moves of the spools this member leads. */
  private readonly mover: ReplicaMover;
  private readonly patterns = new PatternCache();
  private transport!: Transport;
  private router!: GroupRouter;
  private metaValue: MetaReplica | null = null;
  private codecs: ClusterCodecs | null = null;
  private closing = false;
  /** Handing its groups over before stopping: not ready, opens no spool as primary. */
  private lameDuck = false;
  /** The services given in the options, drained before the transport closes. */
  private drainable: readonly DrainableService[] = [];
  private lastStartError: Error | null = null;
  /** Refuses growth while the data volume is below its reserve (null: no disk watched). */
  private readonly disk: DiskMonitor | null;
  /** Refuses growth while the V8 heap is above its high mark. */
  private readonly memory: MemoryMonitor;
  /** Restarts every group in process after a storage failure (storage-recovery.ts). */
  private readonly recovery: StorageRecovery;

  private constructor(
    options: MemberOptions,
    /** The storage engine every group shares, and the payload stores. */
    private readonly storage: MemberStorage,
    disk: DiskMonitor | null,
  ) {
    this.options = options;
    this.id = options.id;
    this.clock = options.clock ?? systemClock;
    this.clusterClock = options.clusterClock ?? monotonicClock;
    this.plan = resolvePlan(options.plan);
    this.disk = disk;
    this.memory = memoryMonitorOf(options, this.clock);
    this.service = new HostedSpoolService(
      (spool) => this.calls.hostFor(spool),
      () => this.readiness.serviceReady(),
      () => this.disk?.refuseGrowth() ?? this.memory.refuseGrowth(),
    );
    this.links = new MemberLinks(
      { metaState: () => this.metaValue?.state, clock: this.clusterClock },
      options,
    );
    this.groups = this.groupStarter();
    this.replicas = this.replicaRegistry();
    this.follower = this.metaFollower();
    this.auth = new AuthPush({
      meta: () => this.metaValue,
      isClosing: () => this.closing,
      metaCurrent: () => this.metaCurrent(),
      messageSizeMaxBytes: this.plan.messageSizeMaxBytes,
      clock: this.clusterClock,
    });
    this.recovery = new StorageRecovery(
      {
        stopGroups: () => this.stopGroups(),
        reopenStorage: () => this.reopenStorage(),
        startGroups: () => this.startGroups(),
      },
      this.clock,
      options.onStorageRecovery,
    );
    this.readiness = this.memberReadiness();
    const randomBytes = options.randomBytes ?? systemRandomBytes;
    this.admin = new MemberAdmin(this, this.clusterClock, randomBytes);
    const tickMs = options.raft?.tickMs ?? RAFT_TICK_MS_DEFAULT;
    this.plans = new PlanReconciler({
      replica: (spool) => this.replicas.get(spool),
      spools: () => this.replicas.all().keys(),
      clock: this.clusterClock,
      retryMs: tickMs,
    });
    this.calls = new CallRouter({
      id: this.id,
      isClosing: () => this.closing,
      replica: (spool) => this.replicas.get(spool),
      metaState: () => this.metaValue?.state,
      plans: this.plans,
    });
    this.mover = new ReplicaMover({
      id: this.id,
      metaState: () => this.metaValue?.state ?? null,
      replica: (spool) => this.replicas.get(spool),
      proposeMeta: (command) => this.admin.proposeOnLeader(command),
      // An election timeout's worth of ticks: long enough for a new leader to be known.
      retryMs: tickMs * (options.raft?.electionTicks ?? 10),
      clock: this.clusterClock,
    });
  }

  /** The registry of the replicas hosted here, wired to this member's storage and pieces. */
  private replicaRegistry(): ReplicaRegistry<SpoolReplica> {
    return new ReplicaRegistry<SpoolReplica>({
      id: this.id,
      isClosing: () => this.closing,
      open: (spool, gen, bootstrap) => this.groups.startReplica(spool, gen, bootstrap),
      drop: (group) => this.storage.drop(group),
      onOpened: (spool, replica) => this.replicaOpened(spool, replica),
      onDropped: () => this.reconcile(),
      onError: (error) => (this.lastStartError = error),
    });
  }

  /** How this member's groups start (group-starter.ts). */
  private groupStarter(): GroupStarter {
    return new GroupStarter({
      options: this.options,
      storage: this.storage,
      clock: this.clock,
      clusterClock: this.clusterClock,
      plan: this.plan,
      transport: () => this.transport,
      router: () => this.router,
      codecs: () => this.codecs,
      fetchPayloads: (id, step) => this.admin.fetchPayloads(id, step),
      metaApplied: (command, result) => this.follower.applied(command, result),
      replicaChanged: (spool) => {
        this.readiness.check();
        this.plans.reconcile(spool);
        this.mover.kick(spool);
      },
      recover: (group, error) => this.recovery.trigger(group, error),
    });
  }

  /** When this member can serve (member-readiness.ts). */
  private memberReadiness(): MemberReadiness {
    return new MemberReadiness({
      id: this.id,
      clock: this.clusterClock,
      held: () =>
        this.closing || this.lameDuck || this.codecs === null || this.recovery.recovering,
      replicas: () => this.replicas.all(),
      placements: () => this.metaValue?.state.spools.values() ?? [],
      lastStartError: () => this.lastStartError,
    });
  }

  /** Follows the metadata with this member's pieces (meta-follower.ts). */
  private metaFollower(): MetaFollower {
    return new MetaFollower({
      isClosing: () => this.closing,
      clock: this.clusterClock,
      spoolDeleted: (name) => this.replicas.stop(name),
      membersAdded: () => this.links.learnAddresses(),
      membershipChanged: () => this.links.recheckCalls(),
      authChanged: () => this.auth.schedule(),
      plansChanged: () => this.refreshPlans(),
      movesChanged: () => this.mover.kickAll(),
      reconcile: () => this.reconcile(),
    });
  }

  /**
   * Starts a member: storage, transport, the metadata group, and the spool groups in storage.
   * Throws Error for invalid options, and what storage or the transport throw (a LevelDB locked
   * by another process, an address in use).
   */
  static async start(options: MemberOptions): Promise<Member> {
    checkOptions(options);
    const disk = diskMonitorOf(options, options.clock ?? systemClock);
    const storage = await MemberStorage.open(options, disk);
    const member = new Member(options, storage, disk);
    try {
      await member.open();
    } catch (error) {
      await member.close();
      throw error;
    }
    return member;
  }

  private async open(): Promise<void> {
    // Sampled before any group starts: on a full volume, growth is refused from the first call.
    await this.disk?.start();
    this.memory.start();
    this.transport = this.options.transport ?? (await this.startGrpc());
    this.router = new GroupRouter(this.transport);
    const stored = await this.storage.engine.groups();
    this.metaValue = await this.groups.startMeta(stored);
    this.groups.watch(META_GROUP, this.metaValue.node);
    this.follower.watch(this.metaValue.node);
    await this.replicas.startStored(stored);
    this.reconcile();
    this.follower.start();
  }

  /** Listens on gRPC with the services of the options and the accounts service. */
  private startGrpc(): Promise<Transport> {
    this.drainable = this.options.grpcServices?.(this.service) ?? [];
    return this.links.start([...this.drainable, this.accountsService()]);
  }

  /** The gRPC transport's counters (null with an injected transport). */
  grpcTransportStats(): GrpcTransportStats | null {
    return this.links.stats();
  }

  /** The gRPC server of the member's port (null with an injected transport). */
  get grpcServer(): grpc.Server | null {
    return this.links.server;
  }

  /**
   * Changes the peers' gRPC addresses (same ids: membership is fixed at bootstrap). No-op with an
   * injected transport.
   */
  setPeerAddresses(peers: Readonly<Record<string, string>>): void {
    this.links.setPeerAddresses(peers);
  }

  /**
   * Runs an encoded admin step on member `id` (member-links.ts); resolves the encoded answer.
   * Rejects with 503 unavailable when `id` cannot be reached within `deadlineMs`.
   */
  callMember(id: string, call: Uint8Array, deadlineMs: number): Promise<Uint8Array> {
    return this.links.call(id, call, deadlineMs);
  }

  /**
   * Whether this member's replica of `spool` knows its primary, and serves it under the
   * metadata's plan when this member is the primary.
   */
  spoolServed(spool: string): boolean {
    const replica = this.replicas.get(spool);
    if (replica === undefined || !replica.hasKnownPrimary()) return false;
    if (replica.leaderId() !== this.id) return true;
    return !this.plans.behind(spool, replica.engine);
  }

  /** The replica set a new spool named `name` gets (min(members, replicasPerSpool)). */
  placeSpool(name: string): string[] {
    const members = this.meta.state.members;
    const replicasPerSpool = this.options.replicasPerSpool ?? REPLICAS_PER_SPOOL_DEFAULT;
    return placeReplicas(name, members, replicasPerSpool);
  }

  // ---- Accounts (auth-push.ts, accounts-rpc.ts) ---------------------------------------------

  /** What gateways authenticate with, as of the metadata this member has applied. */
  authTable(): AuthTable {
    return this.auth.authTable();
  }

  /**
   * Calls `listener` (synchronously, inside the push) after every change of accounts, keys or
   * plans is applied here. Returns the unsubscribe. Throws RangeError past AUTH_LISTENERS_MAX.
   */
  onAuthChange(listener: () => void): () => void {
    return this.auth.onAuthChange(listener);
  }

  /**
   * Resolves true once this member applied the metadata up to `index`, pushed it, and every
   * gateway watching it acknowledged it; else with what holds after `waitMs` (auth-push.ts).
   */
  whenAuthPropagated(index: number, waitMs: number): Promise<boolean> {
    return this.auth.whenPropagated(index, waitMs);
  }

  /** The accounts service (auth table watches, forwarded admin steps) on the cluster clock. */
  private accountsService(): ReturnType<typeof accountsServiceRegistration> {
    const calls = (call: Uint8Array): Promise<Uint8Array> => this.handleAdminCall(call);
    return accountsServiceRegistration(this.auth, calls, this.clusterClock);
  }

  /** The member is closing or closed. */
  isClosing(): boolean {
    return this.closing;
  }

  /** Whether the metadata follows a leader now (watching gateways get heartbeats). */
  private metaCurrent(): boolean {
    return !this.closing && this.metaValue !== null && this.meta.node.leaderId() !== null;
  }

  /**
   * Runs an admin step another member forwarded (an encoded AdminCall); resolves the encoded
   * AdminAnswer, a failed step's MqError inside. Throws WireError for a call that does not
   * decode.
   */
  handleAdminCall(call: Uint8Array): Promise<Uint8Array> {
    return answerAdminCall(this.admin, call);
  }

  /** The bound gRPC address (`host:port`), null with an injected transport. */
  get address(): string | null {
    return this.links.address;
  }

  get meta(): MetaReplica {
    return this.metaValue!;
  }

  /**
   * Answers another member's payload fetch for spool group `group` (see payload-fetch.ts; the
   * items were checked as they were decoded). Throws 503 unavailable when no replica of it runs
   * here.
   */
  servePayloads(group: string, items: readonly PayloadItem[]): FetchAnswer {
    const replica = this.replicas.ofGroup(group);
    if (replica === undefined) {
      throw unavailable(`no replica of ${group} runs on this member`);
    }
    return replica.servePayloads(items);
  }

  /** This member's replica of `spool`, if it holds one. */
  replica(spool: string): SpoolReplica | undefined {
    return this.replicas.get(spool);
  }

  /**
   * Resolves once this member can serve: the cluster secret is known, every spool placed here
   * has started, and each has a known primary. Rejects with 503 unavailable after `timeoutMs`
   * (default 30 s), or when the member closes.
   */
  ready(timeoutMs = MEMBER_READY_TIMEOUT_MS_DEFAULT): Promise<void> {
    return this.readiness.wait(timeoutMs);
  }

  /**
   * Creates a spool in the metadata (on the metadata group's leader), placed on min(members,
   * replicasPerSpool) members. Resolves with `ok` or `exists`; rejects as MetaReplica.propose.
   */
  createSpool(name: string): Promise<MetaResult> {
    return this.meta.createSpool(name);
  }

  /** Groups, roles, terms and indexes (for metrics). */
  status(): MemberStatus {
    return memberStatus({
      id: this.id,
      initialized: this.codecs !== null,
      meta: this.meta.status(),
      replicas: this.replicas.all(),
      nowMs: this.clock.nowMs(),
      disk: this.disk?.status() ?? null,
      memory: this.memory.status(),
      storageRecovery: this.recovery.status(),
      bounds: this.boundsStatus(),
    });
  }

  /** The payload cache's and the log budget's use against their bounds. */
  private boundsStatus(): MemoryBoundsStatus {
    const cache = this.storage.payloads.cache;
    const log = this.groups.logBudget;
    return {
      payloadCacheBytes: cache.byteCount,
      payloadCacheBytesMax: cache.bytesMax,
      payloadCacheHits: cache.hits,
      payloadCacheMisses: cache.misses,
      logBytes: log.heldBytes,
      logBytesMax: log.bytesMax,
    };
  }

  /** The data volume's watermark, null when the member watches no disk. */
  diskStatus(): DiskMonitorStatus | null {
    return this.disk?.status() ?? null;
  }

  /** The V8 heap's watermark (shared by every member of this process: they share the heap). */
  memoryStatus(): MemoryMonitorStatus {
    return this.memory.status();
  }

  /**
   * The storage engine's counters (fsyncs, entries and bytes written, fsync latencies), shared by
   * every group this member hosts; null before the engine is open or when an engine passed in the
   * options keeps none (the engines of @spoolmq/raft all do).
   */
  storageStats(): StorageStats | null {
    return this.storage.stats();
  }

  /**
   * Graceful hand-off before `close` (lame duck): from now on the member is not ready and opens
   * no spool as primary; every group it leads is handed to an up-to-date peer, spools with their
   * leases (lame-duck.ts), within `timeoutMs` in all. Resolves with what moved; never rejects.
   * A single member, or one whose peers are all gone, has nobody to hand over to.
   */
  async handOff(timeoutMs?: number): Promise<HandOffReport> {
    if (this.closing) return { groups: [], complete: true, elapsedMs: 0 };
    this.lameDuck = true;
    const groups: HandOffGroup[] = [];
    for (const replica of this.replicas.all().values()) {
      replica.enterLameDuck();
      const handOver = (to: string): Promise<void> => replica.handOff(to);
      groups.push({ group: replica.group, node: replica.node, handOver });
    }
    const meta = this.metaValue;
    if (meta !== null) {
      const handOver = (to: string): Promise<void> => meta.node.transferLeadership(to);
      groups.push({ group: META_GROUP, node: meta.node, handOver });
    }
    return handOffGroups(this.id, groups, timeoutMs, this.clusterClock);
  }

  /**
   * Stops every group (long polls end, calls answer unavailable), then the transport, then the
   * storage when the member opened it. Idempotent.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    this.follower.close();
    // Gateways' calls in flight finish first (new ones go elsewhere), so no write is cut
    // mid-call and answered 500 operation_unconfirmed by the transport's close below.
    await Promise.all(this.drainable.map((service) => service.drain?.(SERVICE_DRAIN_MS)));
    this.disk?.close();
    this.memory.close();
    this.recovery.close();
    await this.recovery.settled();
    this.readiness.close(unavailable(`member ${this.id} closed`));
    this.mover.close();
    await this.replicas.close();
    this.auth.close();
    this.links.close();
    await this.metaValue?.close();
    await this.transport?.close();
    await this.storage.close();
    this.patterns.clear();
  }

  /**
   * For `/readyz` detail: the spools whose replica here lacks payloads, with how many it is
   * fetching and how many no replica could give; empty when none lacks any.
   */
  payloadsLacking(): PayloadsLacking[] {
    return this.readiness.payloadsLacking();
  }

  // ---- Metadata ----------------------------------------------------------------------------

  /** Recomputes every account spool's plan from the metadata and logs the changed ones. */
  private refreshPlans(): void {
    const state = this.metaValue?.state;
    if (state !== undefined) this.plans.refresh(state);
  }

  /** Starts the replicas the metadata places here and hands them the codecs once known. */
  private reconcile(): void {
    if (this.closing || this.metaValue === null) return;
    const state = this.metaValue.state;
    if (this.codecs === null && state.secret !== null) {
      this.codecs = {
        tokens: new TokenCodec(state.secret, CLUSTER_SALT),
        cursors: new CursorCodec(state.secret, CLUSTER_SALT),
        patterns: this.patterns,
      };
      for (const replica of this.replicas.all().values()) replica.provideCodecs(this.codecs);
    }
    this.replicas.reconcile(state.spools, () => metaCaughtUp(this.metaValue?.node, this.id));
    this.readiness.check();
  }

  /** A replica opened and is registered: it joins the member's state (lame duck, codecs). */
  private replicaOpened(spool: string, replica: SpoolReplica): void {
    if (this.lameDuck) replica.enterLameDuck();
    this.groups.watch(replica.group, replica.node);
    if (this.codecs !== null) replica.provideCodecs(this.codecs);
    this.reconcile();
    this.mover.kick(spool);
  }

  // ---- Storage recovery (storage-recovery.ts) -----------------------------------------------

  /** Closes every group; the closed metadata replica stays readable until its successor runs. */
  private async stopGroups(): Promise<void> {
    await this.replicas.pause();
    await this.metaValue?.close();
  }

  private async reopenStorage(): Promise<void> {
    if (this.closing) return;
    await this.storage.reopen();
  }

  /**
   * Starts the metadata group, then the stored spool groups, from what storage holds now. The
   * new metadata replica takes over once it has applied what its log says is committed, so the
   * accounts and keys the gateway checks never go back to an older table meanwhile.
   */
  private async startGroups(): Promise<void> {
    if (this.closing) return;
    const stored = await this.storage.engine.groups();
    const meta = await this.groups.startMeta(stored);
    // Watched at once: a node that fails while catching up makes the recovery run again.
    this.groups.watch(META_GROUP, meta.node);
    this.follower.watch(meta.node);
    await appliedCommitted(meta.node, this.clusterClock, CATCH_UP_WAIT_MS);
    if (this.closing) {
      await meta.close();
      return;
    }
    this.metaValue = meta;
    this.replicas.resume();
    await this.replicas.startStored(stored);
    this.follower.applied(null, null);
  }
}
