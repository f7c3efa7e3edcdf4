// This member's replica of the metadata group (`meta`): the MetaState as the group's state
// machine. Its first leader initializes the cluster: one init entry with 32 random bytes of
// cluster secret, the founding members and the `default` spool with its placement. Every member
// waits for that entry before serving, so tokens and cursors verify on whichever member becomes
// a spool's primary later.

import {
  type AppliedEntry,
  type GroupRouter,
  type GroupStorage,
  RaftNode,
  type RaftNodeStatus,
  type StateMachine,
  type Transport,
} from '@spoolmq/raft';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import { notPrimary, proposalError } from './cluster-errors.js';
import {
  CLUSTER_SECRET_BYTES,
  type MetaCommand,
  type MetaResult,
  decodeMetaCommand,
  encodeMetaCommand,
} from './meta-commands.js';
import { MetaState } from './meta-state.js';
import { placeReplicas } from './placement.js';
import { RAFT_TICK_MS_DEFAULT, type RaftTuning, tuningOptions } from './raft-tuning.js';

export const META_GROUP = 'meta';
/** The spool every cluster has from its first entry on. */
export const DEFAULT_SPOOL = 'default';

export interface MetaReplicaOptions {
  readonly memberId: string;
  readonly storage: GroupStorage;
  readonly transport: Transport;
  readonly router: GroupRouter;
  /** Founding voters, used only when the storage holds nothing for the group. */
  readonly bootstrap?: readonly string[];
  /** Configured members: the init entry records them and places `default` on them. */
  readonly members: readonly string[];
  readonly replicasPerSpool: number;
  readonly raft?: RaftTuning;
  /** Time of the init retry: the cluster layer's (MemberOptions.clusterClock). */
  readonly clock: Clock;
  /** Source of the cluster secret (cryptographically random bytes). */
  readonly randomBytes: (bytes: number) => Uint8Array;
  /**
   * Told after every applied command (with its result) and after a snapshot restore (command
   * null): the member reconciles its spool replicas. Runs inside the Raft loop: must not throw.
   */
  readonly onApplied: (command: MetaCommand | null, result: MetaResult | null) => void;
}

export class MetaReplica implements StateMachine {
  private stateValue = new MetaState();
  private nodeValue: RaftNode | null = null;
  private initTerm = 0;
  private retryTimer: TimerHandle | null = null;
  private closed = false;

  private constructor(private readonly options: MetaReplicaOptions) {}

  /** Loads (or bootstraps) the group and joins the router. Throws what RaftNode.start throws. */
  static async start(options: MetaReplicaOptions): Promise<MetaReplica> {
    const replica = new MetaReplica(options);
    const node = await RaftNode.start({
      ...tuningOptions(options.raft),
      id: options.memberId,
      group: META_GROUP,
      storage: options.storage,
      transport: options.transport,
      stateMachine: replica,
      ...(options.bootstrap === undefined ? {} : { bootstrap: options.bootstrap }),
    });
    replica.nodeValue = node;
    node.on('leader-change', (leaderId, term) => {
      if (leaderId === options.memberId) replica.initialize(term);
    });
    options.router.add(META_GROUP, node);
    if (node.isLeader()) replica.initialize(node.term());
    return replica;
  }

  get state(): MetaState {
    return this.stateValue;
  }

  get node(): RaftNode {
    return this.nodeValue!;
  }

  apply(entry: AppliedEntry): MetaResult {
    const command = decodeMetaCommand(entry.data);
    const result = this.stateValue.apply(command);
    this.options.onApplied(command, result);
    return result;
  }

  snapshot(): Uint8Array {
    return this.stateValue.encode();
  }

  restore(chunks: Iterable<Uint8Array>): void {
    this.stateValue = MetaState.decode(chunks);
    this.options.onApplied(null, null);
  }

  /**
   * Proposes `command` on this member (the group's leader). Resolves with its result once
   * committed and applied here. Rejects with MqError: 503 unavailable + notPrimary (+ leaderId)
   * when another member leads, 503 when busy, 500 operation_unconfirmed when the outcome is
   * unknown.
   */
  async propose(command: MetaCommand): Promise<MetaResult> {
    const node = this.node;
    if (!node.isLeader()) throw notPrimary(META_GROUP, node.leaderId());
    try {
      return (await node.propose(encodeMetaCommand(command))).result as MetaResult;
    } catch (error) {
      throw proposalError(META_GROUP, error, true);
    }
  }

  /** Creates a spool placed on min(members, replicasPerSpool) members. Results as `propose`. */
  createSpool(name: string): Promise<MetaResult> {
    const members = this.stateValue.members;
    const replicas = placeReplicas(name, members, this.options.replicasPerSpool);
    return this.propose({ type: 'createSpool', name, replicas });
  }

  status(): RaftNodeStatus {
    return this.node.status();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.retryTimer !== null) this.options.clock.clearTimer(this.retryTimer);
    this.retryTimer = null;
    this.options.router.remove(META_GROUP);
    await this.nodeValue?.close();
  }

  /**
   * As leader of `term`, proposes the init entry unless the cluster is initialized. Several
   * leaders may each propose one; the first applied wins and the others change nothing.
   */
  private initialize(term: number): void {
    if (this.closed || this.stateValue.initialized || this.initTerm === term) return;
    this.initTerm = term;
    const members = [...this.options.members].sort();
    const replicas = placeReplicas(DEFAULT_SPOOL, members, this.options.replicasPerSpool);
    const command: MetaCommand = {
      type: 'init',
      secret: this.options.randomBytes(CLUSTER_SECRET_BYTES),
      members,
      spools: [{ name: DEFAULT_SPOOL, replicas }],
    };
    this.propose(command).then(
      () => undefined,
      () => this.initFailed(term),
    );
  }

  /** Retries a tick later while this member still leads `term` and no init was applied. */
  private initFailed(term: number): void {
    this.initTerm = 0;
    const node = this.node;
    if (this.closed || !node.isLeader() || node.term() !== term || this.retryTimer !== null) return;
    const tickMs = this.options.raft?.tickMs ?? RAFT_TICK_MS_DEFAULT;
    // On the cluster clock, Raft's time (a tick is Raft's unit).
    this.retryTimer = this.options.clock.setTimer(() => {
      this.retryTimer = null;
      if (node.isLeader() && node.term() === term) this.initialize(term);
    }, tickMs);
  }
}
