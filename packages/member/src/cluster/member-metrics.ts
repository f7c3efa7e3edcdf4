// What a member reports about itself for metrics and the console: its groups (roles, terms,
// indexes), the depth of each spool it serves as primary, and its disk, heap and storage
// recovery state. Read-only: built from the parts the member hands over, each call fresh.

import type { RaftNodeStatus } from '@spoolmq/raft';
import type { DiskMonitorStatus } from '../host/disk-monitor.js';
import type { MemoryMonitorStatus } from '../host/memory-monitor.js';
import type { SpoolReplica, SpoolReplicaStatus } from './spool-replica.js';
import type { StorageRecoveryStatus } from './storage-recovery.js';

/** Message counts of a spool this member serves as primary (queue depth by state, leases). */
export interface SpoolDepth {
  readonly spool: string;
  readonly delayed: number;
  readonly visible: number;
  /** Messages under a live lease: the spool's lease count. */
  readonly pending: number;
  readonly failed: number;
  /** Messages whose payload this (serving) replica cannot read now (being fetched). */
  readonly unavailable: number;
  /** Stored messages (in-flight sends included) and their payload bytes. */
  readonly total: number;
  readonly dataBytes: number;
}

/** Spools whose depth a status reports (the first in name order; keeps metrics bounded). */
export const STATUS_DEPTH_SPOOLS_MAX = 1_000;

export interface MemberStatus {
  readonly id: string;
  /** The cluster secret is known: spools can open here. */
  readonly initialized: boolean;
  readonly meta: RaftNodeStatus;
  readonly spools: readonly SpoolReplicaStatus[];
  /** Depths of the spools this member serves (at most STATUS_DEPTH_SPOOLS_MAX). */
  readonly depths: readonly SpoolDepth[];
  /** The data volume's watermark (null or absent when the member watches no disk). */
  readonly disk?: DiskMonitorStatus | null;
  /** The heap's watermark (absent in statuses made before it existed). */
  readonly memory?: MemoryMonitorStatus;
  /** Recoveries from storage failures (absent in statuses made before they existed). */
  readonly storageRecovery?: StorageRecoveryStatus;
  /** The configured memory bounds and their use (absent in statuses made before them). */
  readonly bounds?: MemoryBoundsStatus;
}

/** The member's two configured memory bounds outside the heap watermark, and their use. */
export interface MemoryBoundsStatus {
  /** Bytes the payload cache charges now (payloads and entry overheads), and its budget. */
  readonly payloadCacheBytes: number;
  readonly payloadCacheBytesMax: number;
  readonly payloadCacheHits: number;
  readonly payloadCacheMisses: number;
  /** Applied log bytes the member's groups keep unsnapshotted, and their shared budget. */
  readonly logBytes: number;
  readonly logBytesMax: number;
}

/** The parts of a member a status is made of. */
export interface StatusParts {
  readonly id: string;
  readonly initialized: boolean;
  readonly meta: RaftNodeStatus;
  /** The replicas running here, by spool. */
  readonly replicas: ReadonlyMap<string, Pick<SpoolReplica, 'status' | 'isServing' | 'engine'>>;
  /** Now on the member's clock (epoch ms): depths count delays and leases at this time. */
  readonly nowMs: number;
  readonly disk: DiskMonitorStatus | null;
  readonly memory: MemoryMonitorStatus;
  readonly storageRecovery: StorageRecoveryStatus;
  readonly bounds: MemoryBoundsStatus;
}

/** The member's status from its parts. */
export function memberStatus(parts: StatusParts): MemberStatus {
  return {
    id: parts.id,
    initialized: parts.initialized,
    meta: parts.meta,
    spools: [...parts.replicas.values()].map((replica) => replica.status()),
    depths: spoolDepths(parts.replicas, parts.nowMs),
    disk: parts.disk,
    memory: parts.memory,
    storageRecovery: parts.storageRecovery,
    bounds: parts.bounds,
  };
}

/** Depths of the spools served here, in name order, at most STATUS_DEPTH_SPOOLS_MAX. */
function spoolDepths(replicas: StatusParts['replicas'], nowMs: number): SpoolDepth[] {
  const out: SpoolDepth[] = [];
  for (const name of [...replicas.keys()].sort()) {
    if (out.length >= STATUS_DEPTH_SPOOLS_MAX) break;
    const replica = replicas.get(name);
    if (replica === undefined || !replica.isServing()) continue;
    const counts = replica.engine.spoolCounts(nowMs);
    const { delayed, visible, pending, failed, unavailable, total, dataBytes } = counts;
    out.push({ spool: name, delayed, visible, pending, failed, unavailable, total, dataBytes });
  }
  return out;
}
