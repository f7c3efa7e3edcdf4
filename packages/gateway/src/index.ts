export { createGatewayApp } from './app.js';
export type { GatewayOptions, LogContext, RequestLogEntry } from './options.js';
export { MESSAGE_SIZE_MAX_BYTES_DEFAULT } from './options.js';
export { startHttpServer, type RunningServer, type ServerOptions } from './server.js';
export { Families, type HistogramSeries, type Labels, type MetricType } from './prometheus-text.js';
export { fingerprintOf } from './dedup.js';
export { parseDurationMs } from './duration.js';
// The member protocol (proto/member.proto): the gateway's remote SpoolService, and the wire
// pieces the member's gRPC server (packages/member/src/rpc) shares with it.
export {
  RemoteSpoolService,
  insecureCredentials,
  type RemoteSpoolServiceOptions,
  type RemoteServiceMetrics,
  type MemberCallCounters,
  type MemberMetrics,
} from './remote/remote-spool-service.js';
export type { MemberConnectionStats } from './remote/member-connection.js';
// The wire pieces live in @spoolmq/protocol; re-exported so the gateway's names stay stable.
export {
  NotPrimaryError,
  isNotPrimary,
  notPrimaryError,
  type Call,
  type CallOf,
  type Op,
  type OpResults,
  WRITE_OPS,
  dispatchCall,
  MEMBER_LINK_LIMITS_DEFAULT,
  resolveLinkLimits,
  type MemberLinkLimits,
  MEMBER_SERVICE,
  MEMBER_CALLS_PATH,
  ProtoWriter,
  WireError,
  writeCall,
  writeCancel,
  decodeClientFrame,
  type ClientFrame,
  type IdentifiedCall,
  writeAnswer,
  writeErrorAnswer,
  decodeServerFrame,
  resultOf,
  type DecodedAnswer,
} from '@spoolmq/protocol';
// Accounts: the in-memory key and account table every gateway authenticates with.
export {
  AccountDirectory,
  type AccountDirectoryOptions,
  type Principal,
  hashKey,
} from './accounts/account-directory.js';
export {
  type AuthTable,
  type AuthAccount,
  type AuthKey,
  type AuthAccountState,
  AuthTableError,
  AUTH_ACCOUNTS_MAX,
  AUTH_KEYS_MAX,
  encodeAuthTable,
  decodeAuthTable,
  ACCOUNTS_SERVICE,
  ACCOUNTS_WATCH_PATH,
  ACCOUNTS_CALL_PATH,
  ACCOUNTS_CALL_BYTES_MAX,
  WATCH_HEARTBEAT_MS,
  WATCH_SILENCE_MS,
  encodeAck,
  decodeAck,
} from '@spoolmq/protocol';
export type { Authenticate } from './auth.js';
export {
  AccountWatch,
  type AccountWatchOptions,
  type AccountWatchStats,
} from './accounts/account-watch.js';
// The admin API (its own listener) over a backend the member implements.
export type {
  AdminBackend,
  AdminAccount,
  AdminAccountState,
  AdminKey,
  AdminNewKey,
  AdminPlan,
  AdminSpool,
  AdminCluster,
} from '@spoolmq/protocol';
export {
  createAdminApp,
  type AdminAppOptions,
  type AdminAuditRecord,
  ADMIN_TOKEN_CHARS_MIN,
} from './admin/admin-app.js';
export {
  startAdminServer,
  type AdminServerOptions,
  ADMIN_HOST_DEFAULT,
  ADMIN_PORT_DEFAULT,
} from './admin/admin-server.js';
// The web console (/console/ on the public and admin listeners) and per-queue metrics.
export { CONSOLE_CSP, CONSOLE_FILES } from './console/console-assets.js';
export { CONSOLE_PATH, consoleResponse, type ConsoleListener } from './console/console-routes.js';
export {
  QUEUE_SERIES_MAX,
  renderQueueMetrics,
  renderQueueSamples,
  sampleQueues,
  spoolLabels,
  type QueueSample,
} from './queue-metrics.js';
export {
  ADMIN_CONNECTION_LIMITS,
  type ConnectionLimits,
  type ConnectionStats,
  PUBLIC_CONNECTION_LIMITS,
} from './connection-guard.js';
export {
  BODY_BYTES_IN_FLIGHT_MAX,
  BODY_BYTES_IN_FLIGHT_PER_ACCOUNT_MAX,
  BodyBudget,
} from './body-budget.js';
export { type ListenerTls, TLS_RELOAD_CHECK_MS, loadTlsPair } from './listener-tls.js';
// The OpenAPI 3.1 document of the public listener (served at GET /v1/openapi.json).
export { buildOpenApiDocument, openApiJson } from './openapi/openapi-document.js';
export { OPENAPI_PATH } from './openapi/openapi-route.js';
export type { Json, JsonObject } from './openapi/json.js';
