// Chaos building blocks: the history of a run, the checker, the fault-injecting TCP proxy and
// mesh, the seeded fault schedule, and the workload (model, executor, drain, final state).

export {
  History,
  HISTORY_OPS_MAX_DEFAULT,
  OP_KINDS,
  eventsToJsonl,
  formatOperation,
  monotonicEpochMs,
  parseHistoryJsonl,
} from './history.js';
export type {
  CompletionEvent,
  CompletionFields,
  CompletionType,
  HistoryEvent,
  HistoryOptions,
  InvokeEvent,
  InvokeFields,
  ListedMessageRef,
  OpKind,
  Operation,
  WindowEvent,
} from './history.js';
export { readHistoryFile, writeHistoryFile } from './history-file.js';
export type { FinalMessage, FinalQueue, FinalState } from './final-state.js';
export {
  CHECK_CLOCK_SLACK_MS_DEFAULT,
  CHECK_EXAMPLES_MAX_DEFAULT,
  CHECK_STUCK_GRACE_MS_DEFAULT,
  check,
} from './checker.js';
export type { CheckOptions } from './checker.js';
export { CATEGORY_MEANINGS, VIOLATION_CATEGORIES, formatReport } from './report.js';
export type {
  CategoryReport,
  CheckReport,
  IndeterminateSends,
  RunCounts,
  Violation,
  ViolationCategory,
} from './report.js';
export { PROXY_DELAY_MS_MAX, TcpProxy, parseAddress } from './tcp-proxy.js';
export type {
  CutMode,
  ProxyDirection,
  ProxyDirectionStats,
  TcpProxyOptions,
  TcpProxyStats,
} from './tcp-proxy.js';
export { MESH_NODES_MAX, ProxyMesh } from './proxy-mesh.js';
export type { MeshMember, ProxyMeshOptions } from './proxy-mesh.js';
export { Prng, pickWeighted } from '@spoolmq/raft';
export { FAULT_KINDS, PRIMARY, makeSchedule, scheduleDurationMsMin } from './schedule.js';
export type {
  EpisodeDetails,
  FaultEpisode,
  FaultKind,
  FaultTarget,
  Schedule,
  ScheduleOptions,
} from './schedule.js';
export {
  CONSUMER_ACTIONS,
  clientId,
  clientSeed,
  defaultWorkloadModel,
  planSend,
  planSettle,
  validateWorkloadModel,
} from './workload.js';
export type {
  ConsumerAction,
  ConsumerMix,
  PlannedSend,
  QueueSpec,
  WorkloadModel,
} from './workload.js';
export { Recorder, errorFields, isDefiniteFailure } from './recorder.js';
export type { Recorded } from './recorder.js';
export { runWorkload, setupQueues, workloadClient } from './workload-executor.js';
export type { RunWorkloadOptions, WorkloadSummary, WorkloadTarget } from './workload-executor.js';
export { collectFinalState, drainQueues } from './drain.js';
export type { CollectOptions, DrainOptions, DrainSummary } from './drain.js';
export { FaultInjector, zeroFaultCounts } from './fault-injector.js';
export type { FaultCounts, InjectedFault } from './fault-injector.js';
export {
  BACKLOG_MIB_MAX,
  BACKLOG_PAYLOAD_KIB_DEFAULT,
  MEMBER_ELECTION_TIMEOUT_MS,
  REPORTED_FAULT_KINDS,
  recoveryDeadlineMs,
  runScenario,
} from './scenario.js';
export type { Recovery, ScenarioOptions, ScenarioResult } from './scenario.js';
export {
  BACKLOG_MAGIC,
  BACKLOG_PAYLOAD_BYTES_MAX,
  BACKLOG_PAYLOAD_BYTES_MIN,
  backlogPayload,
  describePayload,
} from './backlog-payload.js';
export { BACKLOG_QUEUE, backlogPlanLimits, fillBacklog } from './backlog.js';
export type { BacklogSummary, FillOptions } from './backlog.js';
export { formatScenario, markdownHeader, markdownRow, replayCommand } from './scenario-report.js';
