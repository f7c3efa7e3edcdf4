// What a member is started with, and the checks run on it before anything starts.

import type { Plan, SpoolService } from '@spoolmq/engine';
import type {
  ClusterSecurity,
  GrpcServiceRegistration,
  RaftRepair,
  Refusal,
  StorageEngine,
  TornTailReport,
  Transport,
} from '@spoolmq/raft';
import type { Clock } from '@spoolmq/protocol';
import type { BallastEvent } from '../host/disk-ballast.js';
import type { DiskProbe } from '../host/disk-monitor.js';
import type { HeapSampler } from '../host/memory-monitor.js';
import type { UnrepairedPayload } from './payload-fetch.js';
import type { ScrubFinding } from './payload-scrub.js';
import type { RecoveryEvent } from './storage-recovery.js';
import { REPLICAS_PER_SPOOL_DEFAULT } from './placement.js';
import type { RaftTuning } from './raft-tuning.js';
import type { SegmentStoreOptions } from '../store/segment-store.js';

const PEER_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * A service on the member's port; `drain`, when given, is called as the member closes, before
 * its port does: it lets the calls in flight finish (within the bound it is given) so the port's
 * close cuts none of them (MemberServiceRegistration.drain).
 */
export interface DrainableService extends GrpcServiceRegistration {
  drain?(timeoutMs: number): Promise<void>;
}

export interface MemberOptions {
  /** This member's id: a key of `peers`. */
  readonly id: string;
  /** Every member's gRPC address (`host:port`) by id, this member included. */
  readonly peers: Readonly<Record<string, string>>;
  /** gRPC listen address (`host:port`; port 0 takes a free one). Default: `peers[id]`. */
  readonly listen?: string;
  /** Directory of the member's LevelDB storage. Exactly one of `dataDir` and `storage`. */
  readonly dataDir?: string;
  /** Any StorageEngine (tests); the member does not close it. */
  readonly storage?: StorageEngine;
  /** Any Transport (tests: MemoryNetwork); default a GrpcTransport on `listen`. */
  readonly transport?: Transport;
  /** Time and timers of the spool hosts (entry times, lease timeouts, long polls). */
  readonly clock?: Clock;
  /**
   * Time and timers of the cluster layer: admin waits, replica moves, retries, reconciliation,
   * the lame-duck hand-off. This is Raft's time (RaftNode ticks on the monotonic clock), which
   * tests that drive the spool hosts on a ManualClock keep real. Default monotonicClock.
   */
  readonly clusterClock?: Clock;
  readonly raft?: RaftTuning;
  /** Plan limits of every spool (until accounts carry plans). */
  readonly plan?: Partial<Plan>;
  /**
   * Join an existing cluster: with empty storage, do not found a cluster; wait to be added
   * (`mq admin members add`) and learn everything from the metadata leader. Default false.
   */
  readonly join?: boolean;
  /** Replicas per spool (default 3): a spool gets min(members, this). */
  readonly replicasPerSpool?: number;
  readonly waitersPerQueueMax?: number;
  /**
   * Bytes of payloads the member keeps in memory for reads, across its spools (default 32 MiB):
   * a consumer that keeps up reads from it; older payloads are read from their segment files.
   */
  readonly payloadCacheBytes?: number;
  /**
   * The gathered write of the payload segment stores (default fs.writevSync); tests inject a
   * full disk with it. Only with `dataDir`.
   */
  readonly payloadWritev?: SegmentStoreOptions['writev'];
  /**
   * Bytes of Raft log the member's groups keep in memory unsnapshotted, together (default
   * 64 MiB; RaftNode's LogBudget): each logged payload stays in memory until a snapshot covers
   * it, so without a shared bound a member holding many spools would keep each one's 16 MiB.
   */
  readonly logMemoryBytes?: number;
  /** More gRPC services on the member's port (the member RPC), given the member's service. */
  readonly grpcServices?: (service: SpoolService) => readonly DrainableService[];
  /**
   * How this member runs an admin step on member `id` (metadata proposals, transfers, removals,
   * payload fetches): an encoded AdminCall in, the encoded AdminAnswer out (@spoolmq/protocol
   * admin-steps.ts). Default: the accounts service's Call over gRPC at the member's address.
   * Tests over the MemoryNetwork, which has no gRPC, pass the other members'
   * `handleAdminCall`. Rejects with MqError when the member cannot be reached.
   */
  readonly adminCall?: (id: string, call: Uint8Array) => Promise<Uint8Array>;
  /**
   * Mutual TLS on the member's port and on every link it dials, or INSECURE_CLUSTER. Required
   * when the member listens on gRPC (no `transport` given); with an injected transport (the
   * MemoryNetwork, `mq serve` in process) there is no port, and admin steps take `adminCall`.
   */
  readonly security?: ClusterSecurity;
  /** Told of every call or Raft frame refused for the caller's identity. */
  readonly onRefused?: (refusal: Refusal) => void;
  /**
   * Told when a group's node stopped on its own state (a broken invariant): the group serves
   * nothing more here until the process restarts, so the command exits. A storage failure (a
   * write refused: ENOSPC, EIO) is not reported here when the storage can reopen: the member
   * recovers from it in process (onStorageRecovery).
   */
  readonly onGroupFailure?: (group: string, error: Error) => void;
  /** Told when a storage recovery starts, retries and ends (see storage-recovery.ts). */
  readonly onStorageRecovery?: (event: RecoveryEvent) => void;
  /** Told of each Raft message from a peer dropped because it contradicts this member's log. */
  readonly onRaftRejected?: (group: string, from: string, reason: string) => void;
  /** Told when a group holds again the entries it lost to bad bytes (RaftNode 'repaired'). */
  readonly onRaftRepaired?: (group: string, repair: RaftRepair) => void;
  /** Told when loading a group dropped stored entries (bad bytes or a stale tail). */
  readonly onTornTail?: (report: TornTailReport) => void;
  /** Told when loading a group found its hard state record unreadable and restored its copy. */
  readonly onHardStateRestored?: (group: string) => void;
  /**
   * Told once per payload that failed its checksum (or was never fetched) here and that no other
   * replica could give a good copy of: its message stays `unavailable` and is asked for again.
   */
  readonly onPayloadUnrepaired?: (report: UnrepairedPayload) => void;
  /** Told of each payload record the background scrub found bad (its good copy is fetched). */
  readonly onPayloadScrubBad?: (finding: ScrubFinding) => void;
  /** Source of the cluster secret and of API keys (default systemRandomBytes, node:crypto). */
  readonly randomBytes?: (bytes: number) => Uint8Array;
  /**
   * Free space on the data volume below which growth (send, ack-and-send, queue create) is
   * refused with 507 storage_full, in bytes. Default: the larger of 1 GiB and 5% of the volume.
   */
  readonly diskReserveBytes?: number;
  /**
   * Reads the data volume's free space (default: fs.statfs of `dataDir`). With `storage` and no
   * probe, the member watches no disk.
   */
  readonly diskProbe?: DiskProbe;
  /** How often the data volume is sampled, ms (default 1,000). Through `clock`. */
  readonly diskPollMs?: number;
  /**
   * Size of the emergency ballast file in `dataDir` (see host/disk-ballast.ts), bytes; 0 (the
   * default): none. Deleted before storage opens or reopens on a volume with less free space
   * than it holds, so a member on a full volume starts; written again once there is room.
   */
  readonly diskBallastBytes?: number;
  /** Told when the ballast is released, written again, or fails to be written. */
  readonly onDiskBallast?: (event: BallastEvent) => void;
  /**
   * Share of the heap limit (old space), in percent (11-99), above which growth is refused, 503
   * unavailable until the heap is 10 points below it (memory-watermark.ts). Default 80.
   */
  readonly memoryHighPercent?: number;
  /** Reads the heap (default v8.getHeapStatistics of this process). */
  readonly memorySampler?: HeapSampler;
  /** Least interval between heap samples, ms (default 100). Through `clock`. */
  readonly memoryPollMs?: number;
}

/**
 * Throws Error when: an id is not 1-64 of [A-Za-z0-9_.-], `peers` lacks this member, not exactly
 * one of `dataDir` and `storage` is given, `replicasPerSpool` or `diskPollMs` is not a positive
 * integer, or `diskReserveBytes` or `diskBallastBytes` is not a non-negative integer,
 * `memoryHighPercent` is not an integer 11-99 or `memoryPollMs` not a positive integer.
 */
export function checkOptions(options: MemberOptions): void {
  if (!PEER_ID.test(options.id)) {
    throw new Error(`member: invalid id ${JSON.stringify(options.id)}`);
  }
  if (options.peers[options.id] === undefined) {
    throw new Error(`member: peers must include this member (${options.id})`);
  }
  for (const id of Object.keys(options.peers)) {
    if (!PEER_ID.test(id)) throw new Error(`member: invalid peer id ${JSON.stringify(id)}`);
  }
  if ((options.dataDir === undefined) === (options.storage === undefined)) {
    throw new Error('member: exactly one of dataDir and storage is required');
  }
  if (options.transport === undefined && options.security === undefined) {
    // No default: a library user who forgets it must not get a port anyone can write to.
    throw new Error(
      'member: security is required with a gRPC port: the cluster certificates, or ' +
        'INSECURE_CLUSTER said out loud',
    );
  }
  const reserve = options.diskReserveBytes;
  if (reserve !== undefined && (!Number.isSafeInteger(reserve) || reserve < 0)) {
    throw new Error('member: diskReserveBytes must be a non-negative integer');
  }
  const ballast = options.diskBallastBytes;
  if (ballast !== undefined && (!Number.isSafeInteger(ballast) || ballast < 0)) {
    throw new Error('member: diskBallastBytes must be a non-negative integer');
  }
  const pollMs = options.diskPollMs;
  if (pollMs !== undefined && (!Number.isSafeInteger(pollMs) || pollMs < 1)) {
    throw new Error('member: diskPollMs must be a positive integer');
  }
  checkMemoryOptions(options);
  const replicas = options.replicasPerSpool ?? REPLICAS_PER_SPOOL_DEFAULT;
  if (!Number.isSafeInteger(replicas) || replicas < 1) {
    throw new Error('member: replicasPerSpool must be a positive integer');
  }
}

function checkMemoryOptions(options: MemberOptions): void {
  const high = options.memoryHighPercent;
  if (high !== undefined && (!Number.isSafeInteger(high) || high < 11 || high > 99)) {
    throw new Error('member: memoryHighPercent must be an integer 11-99');
  }
  const pollMs = options.memoryPollMs;
  if (pollMs !== undefined && (!Number.isSafeInteger(pollMs) || pollMs < 1)) {
    throw new Error('member: memoryPollMs must be a positive integer');
  }
}
