// `mq serve`: one durable member with the gateway inside. A single-member cluster (id `n1`, its
// gRPC port on a free loopback port since no peer ever dials it) stores everything in LevelDB
// under `./data` and serves the API on 127.0.0.1:8080. Writes are fsynced before they answer.

import {
  type ListenerTls,
  type RunningServer,
  startAdminServer,
  startHttpServer,
} from '@spoolmq/gateway';
import { type DiskProbe, type HeapSampler, Member } from '@spoolmq/member';
import { MemoryNetwork } from '@spoolmq/raft';
import { parseFlags } from '../args.js';
import {
  type Env,
  type HttpListen,
  apiBaseUrl,
  flagOrEnv,
  httpListenOf,
  parseDataDir,
} from '../cluster-options.js';
import type { Command, CommandContext } from '../command.js';
import type { Logger } from '../logger.js';
import { gatewayLogOptions } from '../log-options.js';
import { renderMemberProcessMetrics } from '../status-metrics.js';
import {
  ADMIN_TLS_FLAGS,
  ADMIN_TLS_USAGE,
  TLS_FLAGS,
  TLS_USAGE,
  adminTlsOf,
  listenerTlsOptions,
  reloadOnHangup,
  tlsOf,
} from '../tls-options.js';
import {
  LISTENER_FLAGS,
  LISTENER_USAGE,
  listenerOf,
  publicConnectionLimits,
} from '../listener-options.js';
import {
  ADMIN_FLAGS,
  ADMIN_USAGE,
  adminAudit,
  type AdminListen,
  adminListenOf,
  loadAdminToken,
} from '../admin-options.js';
import { memberDirectory } from '../member-accounts.js';
import { untilShutdownOrFailure, watchGroupFailures } from '../group-failure.js';
import { memberConsoleOptions } from '../console-status.js';
import { startOperatorLog } from '../operator-log.js';
import { DISK_FLAGS, DISK_USAGE, diskOf, readyDetailOf } from '../disk-options.js';
import {
  HEAP_GROWTH_FLAGS,
  HEAP_GROWTH_USAGE,
  type HeapGrowthOptions,
  applyHeapGrowth,
  heapGrowthOf,
} from '../heap-growth.js';
import { MEMORY_FLAGS, MEMORY_USAGE, memoryOf, memoryReadyDetailOf } from '../memory-options.js';
import { given } from '../given.js';

export const SERVE_DATA_DIR_DEFAULT = './data';
/** The id of the one member `mq serve` runs. */
export const SERVE_MEMBER_ID = 'n1';
/** How long `mq serve` waits for its member to elect itself and open `default` (ms). */
export const SERVE_READY_TIMEOUT_MS = 60_000;

export interface ServeOptions extends HttpListen, AdminListen, HeapGrowthOptions {
  /** Connections one source address may hold on the API. */
  readonly connectionsPerAddress: number;
  /** HTTPS for the API and for the admin API (null: plain HTTP). */
  readonly tls: ListenerTls | null;
  readonly adminTls: ListenerTls | null;
  /** Directory of the member's storage (created if missing). */
  readonly dataDir: string;
  /** Free space kept on the data volume (see MemberOptions.diskReserveBytes). */
  readonly diskReserveBytes?: number;
  /** Emergency ballast file size (see MemberOptions.diskBallastBytes). */
  readonly diskBallastBytes?: number;
  /** Tests: reads the data volume's free space instead of fs.statfs, every `diskPollMs`. */
  readonly diskProbe?: DiskProbe;
  readonly diskPollMs?: number;
  /** Heap share in percent above which growth is refused (MemberOptions.memoryHighPercent). */
  readonly memoryHighPercent?: number;
  /** Budget of the cache of recent payloads (MemberOptions.payloadCacheBytes). */
  readonly payloadCacheBytes?: number;
  /** Unsnapshotted log kept in memory across spools (MemberOptions.logMemoryBytes). */
  readonly logMemoryBytes?: number;
  /** Tests: reads the heap instead of v8.getHeapStatistics, at most every `memoryPollMs`. */
  readonly memorySampler?: HeapSampler;
  readonly memoryPollMs?: number;
}

export interface ServeHandle {
  readonly host: string;
  readonly port: number;
  /** `http://host:port/v1`. */
  readonly baseUrl: string;
  readonly member: Member;
  /** The admin API's bound port (on `adminHost`). */
  readonly adminPort: number;
  /** Resolves with the name of the first Raft group that stopped on its own state. */
  readonly failed: Promise<string>;
  /** Graceful stop: HTTP first (long polls answer 204), then the member. Idempotent. */
  close(): Promise<void>;
}

const USAGE = `Usage: mq serve [--data DIR] [--port PORT] [--host HOST] [--admin-port PORT] ...

Runs one durable member with the gateway inside: the API at http://HOST:PORT/v1, messages
stored in LevelDB under DIR and fsynced before a write is answered. API keys are checked:
create an account and a key with \`mq admin accounts create NAME\` (the admin API listens on
--admin-port; its token is in DIR/admin-token). Stops gracefully on SIGINT or SIGTERM.

Options:
  --data DIR          Storage directory. Env MQ_DATA_DIR. Default ${SERVE_DATA_DIR_DEFAULT}.
  --port PORT         TCP port, 0-65535 (0 = any free port). Env MQ_PORT. Default 8080.
  --host HOST         Address to bind. Env MQ_HOST. Default 127.0.0.1.
${ADMIN_USAGE}
${TLS_USAGE}
${LISTENER_USAGE}
${ADMIN_TLS_USAGE}
${DISK_USAGE}
${MEMORY_USAGE}
${HEAP_GROWTH_USAGE}
  -h, --help          Show this help.`;

/**
 * Resolves `mq serve`'s settings from flags and environment (MQ_DATA_DIR, MQ_PORT, MQ_HOST);
 * flags win. Throws UsageError for an unknown flag or a bad value; undefined for --help.
 */
export function parseServeArgs(argv: readonly string[], env: Env): ServeOptions | undefined {
  const flags = parseFlags(argv, {
    data: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    ...ADMIN_FLAGS,
    ...TLS_FLAGS,
    ...LISTENER_FLAGS,
    ...ADMIN_TLS_FLAGS,
    ...DISK_FLAGS,
    ...MEMORY_FLAGS,
    ...HEAP_GROWTH_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (flags['help'] === true) return undefined;
  const data = flagOrEnv(flags, 'data', env, 'MQ_DATA_DIR');
  const dataDir =
    data === undefined ? SERVE_DATA_DIR_DEFAULT : parseDataDir(data.value, data.source);
  return {
    dataDir,
    ...httpListenOf(flags, env),
    ...adminListenOf(flags, env, dataDir),
    ...tlsOf(flags, env),
    ...listenerOf(flags, env),
    ...adminTlsOf(flags, env),
    ...diskOf(flags, env),
    ...memoryOf(flags, env),
    ...heapGrowthOf(flags, env),
  };
}

/**
 * Starts the member, waits until it has elected itself and opened its spools (at most
 * SERVE_READY_TIMEOUT_MS), then serves HTTP. Rejects with what Member.start throws (a data
 * directory locked by another process), 503 unavailable if it never becomes ready, or the listen
 * error (EADDRINUSE); nothing is left running then.
 */
export async function startServe(options: ServeOptions, logger?: Logger): Promise<ServeHandle> {
  // One member talks to no peer and its gateway runs in process: no gRPC listener at all, so
  // no other process on the machine can reach the member around the API's keys.
  const groups = watchGroupFailures(logger);
  const member = await Member.start({
    id: SERVE_MEMBER_ID,
    peers: { [SERVE_MEMBER_ID]: 'in-process:0' },
    transport: new MemoryNetwork().transport(SERVE_MEMBER_ID),
    dataDir: options.dataDir,
    ...memberDiskOptions(options),
    ...groups.hooks,
  });
  const stopOperatorLog =
    logger === undefined ? () => {} : startOperatorLog(() => member.status(), logger);
  let server: RunningServer | undefined;
  let admin: RunningServer | undefined;
  try {
    const token = await loadAdminToken(options, logger);
    await member.ready(SERVE_READY_TIMEOUT_MS);
    const directory = memberDirectory(member);
    admin = await startAdminServer(member.admin, {
      ...listenerTlsOptions(options.adminTls, logger, 'admin API'),
      token,
      host: options.adminHost,
      port: options.adminPort,
      audit: adminAudit(logger),
      ...memberConsoleOptions(member),
    });
    server = await startHttpServer(member.service, {
      ...listenerTlsOptions(options.tls, logger, 'API'),
      connectionLimits: publicConnectionLimits(options.connectionsPerAddress),
      host: options.host,
      port: options.port,
      authenticate: (key) => directory.authenticate(key),
      metricsExtra: () =>
        renderMemberProcessMetrics(member.status(), member.service.ready(), member.storageStats()),
      readyDetail: () => ({ ...readyDetailOf(member), ...memoryReadyDetailOf(member) }),
      ...gatewayLogOptions(logger),
    });
  } catch (error) {
    stopOperatorLog();
    await admin?.close();
    await member.close();
    throw error;
  }
  const api = server;
  const adminServer = admin;
  const stopHangup = reloadOnHangup([api, adminServer]);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= api
      .close()
      .finally(stopHangup)
      .finally(stopOperatorLog)
      .finally(() => adminServer.close())
      .finally(() => member.close()));
  const { host, port } = api;
  return {
    host,
    port,
    baseUrl: apiBaseUrl(host, port, options.tls !== null),
    member,
    adminPort: admin.port,
    failed: groups.failed,
    close,
  };
}

/** The disk and memory bounds' member options, those given only. */
function memberDiskOptions(options: ServeOptions) {
  return given(options, [
    'diskReserveBytes',
    'diskBallastBytes',
    'diskProbe',
    'diskPollMs',
    'memoryHighPercent',
    'payloadCacheBytes',
    'logMemoryBytes',
    'memorySampler',
    'memoryPollMs',
  ]);
}

async function runServe(argv: readonly string[], context: CommandContext): Promise<number> {
  const options = parseServeArgs(argv, context.env);
  if (options === undefined) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  applyHeapGrowth(options);
  const handle = await startServe(options, context.logger);
  context.logger.info(
    {
      host: handle.host,
      port: handle.port,
      baseUrl: handle.baseUrl,
      dataDir: options.dataDir,
      memberId: SERVE_MEMBER_ID,
      variant: 'durable',
      adminAddress: `${options.adminHost}:${handle.adminPort}`,
      adminTokenFile: options.adminTokenFile,
    },
    `mq serve listening on ${handle.baseUrl} (data in ${options.dataDir}; admin API on ` +
      `${options.adminHost}:${handle.adminPort}` +
      (options.adminTokenFile === null ? ')' : `, token in ${options.adminTokenFile})`),
  );
  const status = await untilShutdownOrFailure(context.shutdown, handle.failed, context.logger);
  context.logger.info('mq serve shutting down');
  await handle.close();
  context.logger.info('mq serve stopped');
  return status;
}

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run one durable member with the gateway inside (data in ./data)',
  usage: USAGE,
  run: runServe,
};
