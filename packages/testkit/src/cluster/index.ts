// Real processes on loopback: the `mq` command built and run as members, gateways and `mq serve`.

export { ensureCliBuilt, CLI_BUILD_TIMEOUT_MS } from './cli-build.js';
export { ClusterNode, type ClusterNodeOptions, type NodeKind } from './cluster-node.js';
export { freePorts, FREE_PORTS_MAX } from './free-ports.js';
export { metricSamples, type MetricSample } from './metrics-text.js';
export {
  MqProcess,
  answers200,
  logTail,
  PROCESS_START_TIMEOUT_MS,
  PROCESS_STOP_GRACE_MS,
  type ExitStatus,
  type MqProcessOptions,
} from './mq-process.js';
export {
  ProcessCluster,
  CLUSTER_WAIT_MS_DEFAULT,
  PROCESS_CLUSTER_MEMBERS_MAX,
  type Addresses,
  type PeersFor,
  type ProcessClusterOptions,
} from './process-cluster.js';
export { ServeProcess, type ServeProcessOptions } from './serve-process.js';
export {
  AdminClient,
  AdminError,
  type AdminAnswer,
  TEST_ACCOUNT,
  randomAdminToken,
} from './admin-client.js';
export { spoolIdentity } from './process-cluster.js';
export { CLI_MAIN, REPO_ROOT } from './repo-paths.js';
