// @spoolmq/protocol: what gateways and members say to each other, and the Clock they share;
// nothing else. The member protocol (proto/member.proto: calls, answers, their hand-written binary
// codec, the gRPC method, the bounds of a link), the accounts service (auth-table push and
// member-to-member admin steps), the admin backend contract a member implements, and the injected
// Clock both sides' I/O shells run on. Depends on the engine's types only, so gateway and member
// are siblings above it.

// ---- Time: the Clock the gateway and the member take injected ----
export {
  type Clock,
  type TimerHandle,
  TIMER_DELAY_MAX_MS,
  systemClock,
  monotonicClock,
  afterTurn,
  repeatEvery,
  ManualClock,
  settle,
} from './clock.js';
// ---- The member protocol: calls, answers, codec ----
export { type Call, type CallOf, type Op, type OpArgs, type OpResults } from './member/calls.js';
export {
  OPERATIONS,
  OPS,
  OP_FIELD,
  WRITE_OPS,
  type Operation,
  type Operations,
} from './member/operations.js';
export {
  CALL_RUNNER,
  dispatchCall,
  installOperations,
  type CallRunner,
  type SpoolOperations,
} from './member/dispatch.js';
export { NotPrimaryError, isNotPrimary, notPrimaryError } from './member/not-primary.js';
export {
  MEMBER_LINK_LIMITS_DEFAULT,
  resolveLinkLimits,
  type MemberLinkLimits,
} from './member/link-limits.js';
export { MEMBER_SERVICE, MEMBER_CALLS_PATH, frameBuffer } from './member/member-service.js';
export {
  ProtoWriter,
  WIRE_I64,
  WIRE_LEN,
  WIRE_VARINT,
  varintBytes,
} from './member/proto-writer.js';
export { ProtoReader, WireError } from './member/proto-reader.js';
export {
  callBytesEstimate,
  writeCall,
  writeCancel,
  decodeClientFrame,
  type ClientFrame,
  type IdentifiedCall,
} from './member/call-codec.js';
export {
  writeAnswer,
  writeErrorAnswer,
  decodeServerFrame,
  resultOf,
  type DecodedAnswer,
} from './member/answer-codec.js';
// ---- The accounts service ----
export {
  type AuthTable,
  type AuthAccount,
  type AuthKey,
  type AuthAccountState,
  AuthTableError,
  AUTH_ACCOUNTS_MAX,
  AUTH_KEYS_MAX,
  AUTH_TABLE_BYTES_MAX,
  encodeAuthTable,
  decodeAuthTable,
} from './accounts/auth-table.js';
export {
  ACCOUNTS_SERVICE,
  ACCOUNTS_WATCH_PATH,
  ACCOUNTS_CALL_PATH,
  ACCOUNTS_CALL_BYTES_MAX,
  WATCH_HEARTBEAT_MS,
  WATCH_SILENCE_MS,
  encodeAck,
  decodeAck,
} from './accounts/account-service.js';
export {
  ADMIN_STEPS,
  PAYLOAD_ITEMS_MAX,
  type AdminAnswers,
  type AdminOp,
  type AdminStep,
  type AdminStepOf,
  type MetaOutcome,
  type PayloadChunks,
  type PayloadItem,
  decodeAdminAnswer,
  decodeAdminStep,
  encodeAdminAnswer,
  encodeAdminStep,
} from './accounts/admin-steps.js';
// ---- The admin backend contract (the gateway's admin API over a member) ----
export type {
  AdminBackend,
  AdminAccount,
  AdminAccountState,
  AdminKey,
  AdminNewKey,
  AdminPlan,
  AdminSpool,
  AdminCluster,
} from './admin/admin-backend.js';
