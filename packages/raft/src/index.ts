export * from './types.js';
export { MemoryStorageEngine, type MemoryStorageOptions } from './storage/memory-storage.js';
export {
  LevelStorageEngine,
  type LevelStorageOptions,
  type WriteFault,
  type TornTailReason,
  type TornTailReport,
} from './storage/level-storage.js';
export {
  StorageError,
  isStorageError,
  isRecoverableStorageError,
  asStorageError,
  type StorageErrorKind,
} from './storage/storage-error.js';
export { FSYNC_BUCKET_BOUNDS_MS, type StorageStats } from './storage/storage-stats.js';
export { crc32c, crc32cUpdate } from './storage/crc32c.js';
export {
  MemoryNetwork,
  type MemoryNetworkOptions,
  type MemoryNetworkStats,
} from './transport/memory-transport.js';
export {
  GrpcTransport,
  type GrpcServiceRegistration,
  type GrpcTransportOptions,
  type GrpcTransportStats,
} from './transport/grpc-transport.js';
export type { PeerLinkLimits, PeerLinkStats } from './transport/peer-link.js';
export { RECEIVE_WINDOW_BYTES, raiseReceiveWindows } from './transport/flow-control.js';
export {
  RAFT_PROTO_PATH,
  decodeFrame,
  encodeFrame,
  type FrameBatch,
} from './transport/message-codec.js';
export { RAFT_SERVICE, RAFT_STREAM_PATH } from './transport/raft-service.js';
export {
  RaftCore,
  type ProgressView,
  type ProposeResult,
  type RefusalReason,
  type Role,
} from './core/raft.js';
export {
  RAFT_CONFIG_DEFAULTS,
  RaftConfigError,
  validateConfig,
  type RaftConfig,
} from './core/config.js';
export { mustPersist, type Ready } from './core/ready.js';
export { bootstrapState, isEmptyState } from './core/bootstrap.js';
export {
  ConfChangeType,
  applyConfChange,
  checkConfChange,
  decodeConfChange,
  encodeConfChange,
  type ConfChange,
} from './core/conf-change.js';
export { RaftAssertionError } from './core/assert.js';
export {
  RaftNode,
  type Proposed,
  type RaftNodeEvents,
  type RaftRepair,
  type RaftNodeStatus,
} from './node/raft-node.js';
export { LogBudget, type LogShare } from './node/log-budget.js';
export { RAFT_NODE_DEFAULTS, type RaftNodeOptions } from './node/options.js';
export { RaftError, isRaftError, type RaftErrorKind } from './node/raft-error.js';
export type {
  AppliedEntry,
  SnapshotSlice,
  SnapshotWork,
  StateMachine,
} from './node/state-machine.js';
export { GroupRouter, type MessageReceiver } from './node/group-router.js';
export {
  type ClusterSecurity,
  type ClusterTls,
  INSECURE_CLUSTER,
  type PeerIdentity,
  type PeerRole,
  callerIdentity,
  clientCredentials,
  clusterChannelOptions,
  identityOfCertificate,
  identityUri,
  ownIdentity,
  serverCredentials,
} from './transport/cluster-security.js';
export {
  type Admission,
  CallGuard,
  type Refusal,
  type ServiceAccess,
} from './transport/service-guard.js';
export { RevokedSerials, normalizeSerial } from './transport/revocation.js';
export {
  makeCa,
  makeCrl,
  makeLeaf,
  type PemPair,
  readCrl,
  type RevocationEntry,
  type RevocationReason,
} from './transport/cluster-certs.js';
export { Prng, pickWeighted } from './prng.js';
