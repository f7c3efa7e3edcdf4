export { runCli, generalUsage } from './cli.js';
export type { CliIo } from './cli.js';
export type { Command, CommandContext } from './command.js';
export { COMMANDS, type CommandEntry } from './command-table.js';
export { UsageError, EXIT_USAGE } from './usage-error.js';
export { parseFlags, parsePort, parseHost } from './args.js';
export { createLogger } from './logger.js';
export type { Logger } from './logger.js';
export { cliVersion } from './version.js';
export {
  localCommand,
  parseLocalArgs,
  startLocal,
  DEFAULT_HOST,
  DEFAULT_PORT,
} from './commands/local.js';
export type { LocalHandle, LocalOptions } from './commands/local.js';
export {
  serveCommand,
  parseServeArgs,
  startServe,
  SERVE_DATA_DIR_DEFAULT,
  SERVE_MEMBER_ID,
  SERVE_READY_TIMEOUT_MS,
} from './commands/serve.js';
export type { ServeHandle, ServeOptions } from './commands/serve.js';
export {
  memberCommand,
  parseMemberArgs,
  startMember,
  MEMBER_DATA_ROOT_DEFAULT,
} from './commands/member.js';
export type { MemberCommandOptions, MemberHandle } from './commands/member.js';
export { gatewayCommand, parseGatewayArgs, startGateway } from './commands/gateway.js';
export type { GatewayCommandOptions, GatewayHandle } from './commands/gateway.js';
export {
  HTTP_HOST_DEFAULT,
  HTTP_PORT_DEFAULT,
  MEMBERS_MAX,
  apiBaseUrl,
  httpListenOf,
  parseGrpcAddress,
  parseMemberId,
  parseMemberList,
} from './cluster-options.js';
export type { Env, HttpListen } from './cluster-options.js';
export { renderMemberMetrics, renderRemoteMetrics } from './status-metrics.js';
export { adminCommand, adminRequest, parseAdminArgs, ADMIN_URL_DEFAULT } from './commands/admin.js';
export {
  adminListenOf,
  loadAdminToken,
  ADMIN_TOKEN_FILE_NAME,
  type AdminListen,
} from './admin-options.js';
