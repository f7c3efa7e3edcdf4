// How a member's Raft groups start: the metadata group and each incarnation of a spool replica,
// all on the member's one storage engine and transport, with the same Raft tuning, and each
// node watched for failure (a storage failure starts an in-process recovery when the storage can
// reopen; anything else stops that group for good and is reported).

import type { Plan } from '@spoolmq/engine';
import type { AdminStepOf, PayloadChunks, Clock } from '@spoolmq/protocol';
import {
  type GroupRouter,
  LogBudget,
  type RaftNode,
  type Transport,
  isRecoverableStorageError,
} from '@spoolmq/raft';
import { systemRandomBytes } from '../host/random.js';
import type { MemberOptions } from './member-options.js';
import type { MemberStorage } from './member-storage.js';
import type { MetaCommand, MetaResult } from './meta-commands.js';
import { META_GROUP, MetaReplica } from './meta-replica.js';
import { REPLICAS_PER_SPOOL_DEFAULT } from './placement.js';
import type { RaftTuning } from './raft-tuning.js';
import { type ClusterCodecs, SpoolReplica, spoolGroup } from './spool-replica.js';

/** What starting groups needs of the member. */
export interface StarterHost {
  readonly options: MemberOptions;
  readonly storage: MemberStorage;
  /** The member's clock (leases, delays: epoch ms) and the cluster layer's (waits, retries). */
  readonly clock: Clock;
  readonly clusterClock: Clock;
  /** The member's default plan (a spool outside accounts). */
  readonly plan: Plan;
  /** The transport and its router, once the member started them. */
  transport(): Transport;
  router(): GroupRouter;
  /** The tokens' and cursors' codecs, null until the cluster secret is known. */
  codecs(): ClusterCodecs | null;
  /** Asks member `member` for payloads (AdminHost's forwarded step). */
  fetchPayloads(member: string, step: AdminStepOf<'payloads'>): Promise<PayloadChunks>;
  /** A metadata command was applied (null, null: the group restarted from storage). */
  metaApplied(command: MetaCommand | null, result: MetaResult | null): void;
  /** Spool `spool`'s replica changed role, primary or state. */
  replicaChanged(spool: string): void;
  /** Group `group` stopped on a storage failure the storage can reopen from. */
  recover(group: string, error: Error): void;
}

/** Default of MemberOptions.logMemoryBytes. */
export const LOG_MEMORY_BYTES_DEFAULT = 64 * 1024 * 1024;

export class GroupStarter {
  /** Shared by every group this member starts (MemberOptions.logMemoryBytes). */
  readonly logBudget: LogBudget;

  constructor(private readonly host: StarterHost) {
    this.logBudget =
      host.options.raft?.logBudget ??
      new LogBudget(host.options.logMemoryBytes ?? LOG_MEMORY_BYTES_DEFAULT);
  }

  /** Starts the metadata group from storage (`stored`: the groups storage holds). */
  startMeta(stored: readonly string[]): Promise<MetaReplica> {
    const { options, storage } = this.host;
    const members = Object.keys(options.peers).sort();
    return MetaReplica.start({
      memberId: options.id,
      storage: storage.engine.group(META_GROUP),
      transport: this.host.transport(),
      router: this.host.router(),
      // Only a member that has never stored anything founds the group, unless it joins one.
      ...(stored.length === 0 && options.join !== true ? { bootstrap: members } : {}),
      members,
      replicasPerSpool: options.replicasPerSpool ?? REPLICAS_PER_SPOOL_DEFAULT,
      raft: this.raftTuning(),
      clock: this.host.clusterClock,
      randomBytes: options.randomBytes ?? systemRandomBytes,
      onApplied: (command, result) => this.host.metaApplied(command, result),
    });
  }

  /**
   * Opens incarnation `gen` of `spool`; `bootstrap`, when given, founds a new group with that
   * replica set. Rejects with what storage or the group's start throw.
   */
  startReplica(
    spool: string,
    gen: number,
    bootstrap: readonly string[] | undefined,
  ): Promise<SpoolReplica> {
    const { options, storage } = this.host;
    const group = spoolGroup(spool, gen);
    return SpoolReplica.start({
      name: spool,
      gen,
      memberId: options.id,
      storage: storage.engine.group(group),
      openPayloads: () => storage.payloads.open(group),
      fetchPayloads: (member, step) => this.host.fetchPayloads(member, step),
      transport: this.host.transport(),
      router: this.host.router(),
      ...(bootstrap === undefined ? {} : { bootstrap }),
      clock: this.host.clock,
      clusterClock: this.host.clusterClock,
      plan: this.host.plan,
      raft: this.raftTuning(),
      codecs: this.host.codecs(),
      ...(options.waitersPerQueueMax === undefined
        ? {}
        : { waitersPerQueueMax: options.waitersPerQueueMax }),
      onChange: () => this.host.replicaChanged(spool),
      ...(options.onPayloadUnrepaired === undefined
        ? {}
        : { onPayloadUnrepaired: options.onPayloadUnrepaired }),
      ...(options.onPayloadScrubBad === undefined
        ? {}
        : { onPayloadScrubBad: options.onPayloadScrubBad }),
    });
  }

  /**
   * Reports a group's stop and the messages its node drops to the member's listeners. A stop on
   * a storage failure (the disk full or failing) starts a recovery instead, when the storage can
   * reopen: the member comes back in process once the disk does.
   */
  watch(group: string, node: RaftNode): void {
    const { onGroupFailure, onRaftRejected, onRaftRepaired } = this.host.options;
    node.on('error', (error) => {
      if (isRecoverableStorageError(error) && this.host.storage.canReopen) {
        this.host.recover(group, error);
      } else {
        onGroupFailure?.(group, error);
      }
    });
    if (onRaftRejected !== undefined) {
      node.on('rejected', (rejection) => onRaftRejected(group, rejection.from, rejection.reason));
    }
    if (onRaftRepaired !== undefined) {
      node.on('repaired', (repair) => onRaftRepaired(group, repair));
    }
  }

  /**
   * The Raft settings of every group here. A member configured with no peer (`mq serve`, a
   * one-member cluster) tells its groups they are sole members: bad bytes in their logs cannot
   * be repaired from anyone, so they go on without what was lost (RaftConfig.soleMember). Grow
   * such a cluster with `--peers` naming the new members on every restart after.
   */
  private raftTuning(): RaftTuning {
    const options = this.host.options;
    const sole = Object.keys(options.peers).length === 1 && options.join !== true;
    return {
      ...options.raft,
      logBudget: this.logBudget,
      ...(sole ? { soleMember: true } : {}),
    };
  }
}
