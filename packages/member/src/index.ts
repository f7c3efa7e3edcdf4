export {
  createLocalService,
  type LocalService,
  type LocalServiceOptions,
} from './host/local-service.js';
export {
  type Clock,
  type TimerHandle,
  systemClock,
  ManualClock,
  settle,
  TIMER_DELAY_MAX_MS,
} from '@spoolmq/protocol';
export { type CommandLog, LocalCommandLog } from './host/command-log.js';
export { TokenCodec, TokenKind, type TokenClaims, TOKEN_LENGTH } from './host/tokens.js';
export { CursorCodec, CursorKind } from './host/cursors.js';
export { PatternCache } from './host/patterns.js';
export { SpoolHost, type SpoolHostOptions } from './host/spool-host.js';
export { HostedSpoolService } from './host/hosted-service.js';
export {
  DiskMonitor,
  type DiskMonitorOptions,
  type DiskMonitorStatus,
  type DiskProbe,
  DISK_POLL_MS_DEFAULT,
  statfsProbe,
} from './host/disk-monitor.js';
export { type BallastEvent, DISK_BALLAST_FILE, DiskBallast } from './host/disk-ballast.js';
export {
  DiskWatermark,
  type DiskSpace,
  type DiskWatermarkStatus,
  reserveBytesOf,
  STORAGE_FULL_RETRY_AFTER_SECONDS,
} from './host/disk-watermark.js';
export {
  MemoryMonitor,
  type MemoryMonitorOptions,
  type MemoryMonitorStatus,
  type HeapSampler,
  MEMORY_POLL_MS_DEFAULT,
  v8HeapSampler,
} from './host/memory-monitor.js';
export {
  MemoryWatermark,
  type HeapSample,
  type MemoryWatermarkStatus,
  MEMORY_HIGH_PERCENT_DEFAULT,
  MEMORY_RETRY_AFTER_SECONDS,
} from './host/memory-watermark.js';
export { type HostResolver, type GrowthGuard } from './host/hosted-service.js';
export { Member, MEMBER_READY_TIMEOUT_MS_DEFAULT } from './cluster/member.js';
export {
  type MemberStatus,
  type MemoryBoundsStatus,
  type SpoolDepth,
  STATUS_DEPTH_SPOOLS_MAX,
} from './cluster/member-metrics.js';
export { type MemberOptions } from './cluster/member-options.js';
export {
  SpoolReplica,
  type SpoolReplicaOptions,
  type SpoolReplicaStatus,
  type ClusterCodecs,
  spoolGroup,
  parseSpoolGroup,
} from './cluster/spool-replica.js';
export { RaftCommandLog, type ProposalTarget } from './cluster/raft-command-log.js';
export { MetaReplica, META_GROUP, DEFAULT_SPOOL } from './cluster/meta-replica.js';
export { MetaState, type PlacedSpool } from './cluster/meta-state.js';
export {
  type MetaCommand,
  type MetaResult,
  type SpoolRecord,
  type AccountRecord,
  type AccountState,
  type KeyRecord,
  type AccountPlan,
  CLUSTER_SECRET_BYTES,
  KEY_HASH_BYTES,
  ACCOUNTS_MAX,
  KEYS_MAX,
  KEYS_PER_ACCOUNT_MAX,
  SPOOLS_PER_ACCOUNT_MAX,
  PLANS_MAX,
  ACCOUNT_ID_PATTERN,
  PLAN_NAME_PATTERN,
  DEFAULT_PLAN_NAME,
  accountSpool,
  spoolAccount,
  keyIdOf,
  resolveAccountPlan,
  spoolPlanOf,
  encodeMetaCommand,
  decodeMetaCommand,
} from './cluster/meta-commands.js';
export { MetaCodecError } from './cluster/meta-bytes.js';
export { placeReplicas, REPLICAS_PER_SPOOL_DEFAULT } from './cluster/placement.js';
export { type RaftTuning } from './cluster/raft-tuning.js';
export {
  type GroupHandOff,
  type HandOffReport,
  HAND_OFF_TIMEOUT_MS_DEFAULT,
  handOffGroups,
} from './cluster/lame-duck.js';
export {
  StorageRecovery,
  type RecoveryEvent,
  type RecoveryTarget,
  type StorageRecoveryStatus,
  STORAGE_RECOVERY_RETRY_MS_DEFAULT,
} from './cluster/storage-recovery.js';
export { notPrimary, proposalError } from './cluster/cluster-errors.js';
export { type UnrepairedPayload } from './cluster/payload-fetch.js';
export { type ScrubFinding } from './cluster/payload-scrub.js';
export {
  encodeEntry,
  encodeBarrier,
  entryTimeMs,
  entryCommand,
  isBarrier,
  ENTRY_TIME_BYTES,
} from './cluster/entry-codec.js';
// The member's gRPC service for gateways (proto/member.proto).
export {
  serveSpoolService,
  startMemberRpcServer,
  memberServiceRegistration,
  type MemberRpcOptions,
  type MemberRpcServer,
  type MemberRpcStats,
  type MemberServiceRegistration,
} from './rpc/member-rpc-server.js';
export { notPrimaryError } from '@spoolmq/protocol';
// The payload segment store (the chaos harness flips bits in its files; tests read them back).
export { SegmentStore, type SegmentStoreOptions } from './store/segment-store.js';
export { PayloadCache } from './store/payload-cache.js';
