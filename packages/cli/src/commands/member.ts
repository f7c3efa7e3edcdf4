// `mq member`: one member of a cluster. Its gRPC port carries Raft (every group it hosts) and the
// member service gateways call; its HTTP port serves /healthz, /readyz (ready when the member
// is), /metrics (its Raft groups included) and the /v1 API through an embedded gateway that runs
// a call in-process when this member is the spool's primary and forwards it otherwise.

import {
  RemoteSpoolService,
  type RemoteSpoolServiceOptions,
  type ListenerTls,
  type RunningServer,
  startAdminServer,
  startHttpServer,
} from '@spoolmq/gateway';
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
import { HAND_OFF_FLAGS, HAND_OFF_USAGE, handOffBeforeStop, handOffOf } from '../hand-off.js';
import { memberConsoleOptions } from '../console-status.js';
import { startOperatorLog } from '../operator-log.js';
import type { SpoolService } from '@spoolmq/engine';
import { Member, memberServiceRegistration } from '@spoolmq/member';
import { parseFlags } from '../args.js';
import {
  type Env,
  type HttpListen,
  apiBaseUrl,
  flagOrEnv,
  httpListenOf,
  parseDataDir,
  parseGrpcAddress,
  parseMemberId,
  parseMemberList,
} from '../cluster-options.js';
import type { Command, CommandContext } from '../command.js';
import { gatewayLogOptions, rpcLogOptions } from '../log-options.js';
import type { Logger } from '../logger.js';
import { given } from '../given.js';
import { UsageError } from '../usage-error.js';
import { untilShutdownOrFailure, watchGroupFailures } from '../group-failure.js';
import { clientCredentials, clusterChannelOptions } from '@spoolmq/raft';
import {
  CLUSTER_TLS_FLAGS,
  CLUSTER_TLS_USAGE,
  type ClusterTlsChoice,
  clusterTlsOf,
  followClusterCrl,
  loadClusterSecurity,
  refusalLogger,
  warnIfInsecure,
} from '../cluster-tls-options.js';
import { renderMemberProcessMetrics, renderRemoteMetrics } from '../status-metrics.js';
import { DISK_FLAGS, DISK_USAGE, diskOf, readyDetailOf } from '../disk-options.js';
import {
  HEAP_GROWTH_FLAGS,
  HEAP_GROWTH_USAGE,
  type HeapGrowthOptions,
  applyHeapGrowth,
  heapGrowthOf,
} from '../heap-growth.js';
import { MEMORY_FLAGS, MEMORY_USAGE, memoryOf, memoryReadyDetailOf } from '../memory-options.js';

/** Parent of the default data directory, `./data/<id>`. */
export const MEMBER_DATA_ROOT_DEFAULT = './data';

export interface MemberCommandOptions extends HttpListen, AdminListen, HeapGrowthOptions {
  /** Connections one source address may hold on the API. */
  readonly connectionsPerAddress: number;
  /** HTTPS for the API and for the admin API (null: plain HTTP). */
  readonly tls: ListenerTls | null;
  readonly adminTls: ListenerTls | null;
  readonly id: string;
  /** Every member's gRPC address by id, this member included. */
  readonly peers: Readonly<Record<string, string>>;
  /** gRPC listen address; default the `peers` entry of `id`. */
  readonly listen: string;
  readonly dataDir: string;
  /** Join an existing cluster instead of founding one (empty storage only). */
  readonly join: boolean;
  /** The gRPC links' certificates, or the explicit choice to run without TLS. */
  readonly clusterTls: ClusterTlsChoice;
  /** Bound of the hand-off of this member's primaries before it stops (0: none). */
  readonly handOffSeconds: number;
  /** Free space kept on the data volume (see MemberOptions.diskReserveBytes). */
  readonly diskReserveBytes?: number;
  /** Emergency ballast file size (see MemberOptions.diskBallastBytes). */
  readonly diskBallastBytes?: number;
  /** Heap share in percent above which growth is refused (MemberOptions.memoryHighPercent). */
  readonly memoryHighPercent?: number;
  /** Budget of the cache of recent payloads (MemberOptions.payloadCacheBytes). */
  readonly payloadCacheBytes?: number;
  /** Unsnapshotted log kept in memory across spools (MemberOptions.logMemoryBytes). */
  readonly logMemoryBytes?: number;
}

export interface MemberHandle {
  readonly member: Member;
  /** The embedded gateway's service (routes to primaries; this member in-process). */
  readonly gateway: RemoteSpoolService;
  readonly host: string;
  readonly port: number;
  /** `http://host:port/v1` of the embedded gateway. */
  readonly baseUrl: string;
  /** The admin API's bound port. */
  readonly adminPort: number;
  /** Resolves once the member is ready (the ready line is logged then); never rejects. */
  readonly ready: Promise<void>;
  /** Resolves with the name of the first Raft group that stopped on its own state. */
  readonly failed: Promise<string>;
  /**
   * Graceful stop: the member hands its primaries over (lame duck, within --hand-off-seconds;
   * the API keeps answering meanwhile), then HTTP stops (long polls answer 204), the gateway's
   * links, the member.
   */
  close(): Promise<void>;
}

const USAGE = `Usage: mq member --id ID --peers ID=HOST:PORT,... [--listen HOST:PORT] [--data DIR]
                 [--port PORT] [--host HOST]

Runs one cluster member. Its gRPC port (Raft and the member service) is --listen; its HTTP port
serves /healthz, /readyz, /metrics and the /v1 API (forwarded to each spool's primary).
A member with empty storage founds the cluster with --peers as its members; afterwards the
membership comes from storage. Stops gracefully on SIGINT or SIGTERM: first hands the
primaries it holds, with their leases, to its peers (--hand-off-seconds).

Options:
  --id ID             This member's id, a key of --peers. Env MQ_ID. Required.
  --peers LIST        Every member's gRPC address, id=host:port comma-separated, this one
                      included. Env MQ_PEERS. Required.
  --listen HOST:PORT  gRPC address to bind. Env MQ_LISTEN. Default: this member's --peers entry.
  --data DIR          Storage directory. Env MQ_DATA_DIR. Default ${MEMBER_DATA_ROOT_DEFAULT}/<id>.
  --port PORT         HTTP port, 0-65535 (0 = any free port). Env MQ_PORT. Default 8080.
  --host HOST         HTTP address to bind. Env MQ_HOST. Default 127.0.0.1.
  --join              With empty storage, join an existing cluster instead of founding one:
                      wait to be added with \`mq admin members add ID HOST:PORT\`. --peers must
                      name this member and the existing ones.
${HAND_OFF_USAGE}
${ADMIN_USAGE}
${TLS_USAGE}
${LISTENER_USAGE}
${ADMIN_TLS_USAGE}
${CLUSTER_TLS_USAGE}
${DISK_USAGE}
${MEMORY_USAGE}
${HEAP_GROWTH_USAGE}
  -h, --help          Show this help.

Every member of a cluster needs the same admin token (set MQ_ADMIN_TOKEN, or give each the same
--admin-token-file); the admin API of any member changes the whole cluster.`;

/**
 * Resolves `mq member`'s settings from flags and environment (MQ_ID, MQ_PEERS, MQ_LISTEN,
 * MQ_DATA_DIR, MQ_PORT, MQ_HOST); flags win. Throws UsageError for an unknown flag, a missing
 * id or peer list, an id not in the peers, or a bad value; undefined for --help.
 */
export function parseMemberArgs(
  argv: readonly string[],
  env: Env,
): MemberCommandOptions | undefined {
  const flags = parseFlags(argv, {
    id: { type: 'string' },
    peers: { type: 'string' },
    listen: { type: 'string' },
    data: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    ...ADMIN_FLAGS,
    ...TLS_FLAGS,
    ...LISTENER_FLAGS,
    ...ADMIN_TLS_FLAGS,
    ...CLUSTER_TLS_FLAGS,
    ...HAND_OFF_FLAGS,
    ...DISK_FLAGS,
    ...MEMORY_FLAGS,
    ...HEAP_GROWTH_FLAGS,
    join: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (flags['help'] === true) return undefined;
  const idText = flagOrEnv(flags, 'id', env, 'MQ_ID');
  const peersText = flagOrEnv(flags, 'peers', env, 'MQ_PEERS');
  if (idText === undefined) throw new UsageError('--id (or MQ_ID) is required');
  if (peersText === undefined) throw new UsageError('--peers (or MQ_PEERS) is required');
  const id = parseMemberId(idText.value, idText.source);
  const peers = parseMemberList(peersText.value, peersText.source);
  const self = peers[id];
  if (self === undefined) {
    throw new UsageError(`${peersText.source} must include this member '${id}'`);
  }
  const listen = flagOrEnv(flags, 'listen', env, 'MQ_LISTEN');
  const data = flagOrEnv(flags, 'data', env, 'MQ_DATA_DIR');
  const dataDir = data === undefined
    ? `${MEMBER_DATA_ROOT_DEFAULT}/${id}`
    : parseDataDir(data.value, data.source);
  return {
    id,
    peers,
    listen: listen === undefined ? self : parseGrpcAddress(listen.value, listen.source, true),
    dataDir,
    join: flags['join'] === true,
    clusterTls: clusterTlsOf(flags, env, 'mq member'),
    ...handOffOf(flags, env),
    ...httpListenOf(flags, env),
    ...adminListenOf(flags, env, dataDir),
    ...diskOf(flags, env),
    ...memoryOf(flags, env),
    ...heapGrowthOf(flags, env),
    ...tlsOf(flags, env),
    ...listenerOf(flags, env),
    ...adminTlsOf(flags, env),
  };
}

/**
 * The embedded gateway's service: RemoteSpoolService, with readiness that also requires the
 * member itself to be ready, so /readyz keeps a member out of rotation until it can serve.
 */
class MemberGatewayService extends RemoteSpoolService {
  constructor(
    options: RemoteSpoolServiceOptions,
    private readonly memberService: SpoolService,
  ) {
    super(options);
  }

  override ready(): boolean {
    return this.memberService.ready() && super.ready();
  }
}

/**
 * Starts the member (storage, gRPC with Raft and the member service) and its HTTP listener, and
 * resolves once both listen; the member becomes ready when its peers answer (see `ready`).
 * Rejects with what Member.start throws (a locked data directory, a gRPC address in use) or the
 * HTTP listen error; nothing is left running then.
 */
export async function startMember(
  options: MemberCommandOptions,
  logger?: Logger,
): Promise<MemberHandle> {
  const role = { role: 'member', name: options.id } as const;
  const security = await loadClusterSecurity(options.clusterTls, role);
  const groups = watchGroupFailures(logger);
  warnIfInsecure(security, logger);
  const member = await Member.start({
    id: options.id,
    peers: options.peers,
    listen: options.listen,
    dataDir: options.dataDir,
    join: options.join,
    ...given(options, [
      'diskReserveBytes',
      'diskBallastBytes',
      'memoryHighPercent',
      'payloadCacheBytes',
      'logMemoryBytes',
    ]),
    grpcServices: (service) => [memberServiceRegistration(service, rpcLogOptions(logger))],
    security,
    onRefused: refusalLogger(logger),
    ...groups.hooks,
  });
  const stopOperatorLog =
    logger === undefined ? () => {} : startOperatorLog(() => member.status(), logger);
  const gateway = new MemberGatewayService(
    {
      members: options.peers,
      local: { id: options.id, service: member.service },
      credentials: (id) => clientCredentials(security, id),
      channelOptions: clusterChannelOptions(security),
    },
    member.service,
  );
  let listeners: { api: RunningServer; admin: RunningServer };
  try {
    listeners = await startMemberListeners(options, member, gateway, logger);
  } catch (error) {
    stopOperatorLog();
    await gateway.close();
    await member.close();
    throw error;
  }
  const { api, admin: adminServer } = listeners;
  const stopHangup = reloadOnHangup([api, adminServer]);
  const stopCrl = followClusterCrl(options.clusterTls, security, logger);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= handOffBeforeStop(member, options.handOffSeconds, logger)
      .then(() => api.close())
      .finally(stopHangup)
      .finally(stopCrl)
      .finally(stopOperatorLog)
      .finally(() => adminServer.close())
      .finally(() => gateway.close())
      .finally(() => member.close()));
  const ready = untilReady(member, () => closing !== undefined, logger);
  const { host, port } = api;
  const baseUrl = apiBaseUrl(host, port, options.tls !== null);
  const { failed } = groups;
  const adminPort = adminServer.port;
  return { member, gateway, host, port, baseUrl, adminPort, ready, failed, close };
}

/** The member's admin API, then its public API; on failure closes the one it opened. */
async function startMemberListeners(
  options: MemberCommandOptions,
  member: Member,
  gateway: MemberGatewayService,
  logger: Logger | undefined,
): Promise<{ api: RunningServer; admin: RunningServer }> {
  let admin: RunningServer | undefined;
  try {
    const token = await loadAdminToken(options, logger);
    const directory = memberDirectory(member);
    admin = await startAdminServer(member.admin, {
      ...listenerTlsOptions(options.adminTls, logger, 'admin API'),
      token,
      host: options.adminHost,
      port: options.adminPort,
      audit: adminAudit(logger),
      ...memberConsoleOptions(member),
    });
    const api = await startHttpServer(gateway, {
      ...listenerTlsOptions(options.tls, logger, 'API'),
      connectionLimits: publicConnectionLimits(options.connectionsPerAddress),
      host: options.host,
      port: options.port,
      authenticate: (key) => directory.authenticate(key),
      metricsExtra: () =>
        renderMemberProcessMetrics(member.status(), member.service.ready(), member.storageStats()) +
        renderRemoteMetrics(gateway.metrics()),
      readyDetail: () => ({ ...readyDetailOf(member), ...memoryReadyDetailOf(member) }),
      ...gatewayLogOptions(logger),
    });
    return { api, admin };
  } catch (error) {
    await admin?.close();
    throw error;
  }
}

/**
 * Waits for the member to be ready, logging a line each time a wait times out (peers still
 * unreachable) and once when it is ready. Ends when the member closes.
 */
async function untilReady(
  member: Member,
  closed: () => boolean,
  logger: Logger | undefined,
): Promise<void> {
  while (!closed()) {
    try {
      await member.ready();
      logger?.info({ memberId: member.id }, `member ${member.id} ready`);
      return;
    } catch (error) {
      if (closed()) return;
      const message = `member ${member.id} not ready yet; still waiting for peers`;
      logger?.warn({ memberId: member.id, err: error }, message);
    }
  }
}

async function runMember(argv: readonly string[], context: CommandContext): Promise<number> {
  const options = parseMemberArgs(argv, context.env);
  if (options === undefined) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  applyHeapGrowth(options);
  const handle = await startMember(options, context.logger);
  context.logger.info(
    {
      memberId: options.id,
      grpcAddress: handle.member.address,
      peers: options.peers,
      dataDir: options.dataDir,
      host: handle.host,
      port: handle.port,
      baseUrl: handle.baseUrl,
      adminAddress: `${options.adminHost}:${handle.adminPort}`,
    },
    `mq member ${options.id} listening: gRPC ${handle.member.address ?? options.listen}, ` +
      `HTTP ${handle.baseUrl}`,
  );
  const status = await untilShutdownOrFailure(context.shutdown, handle.failed, context.logger);
  context.logger.info(`mq member ${options.id} shutting down`);
  await handle.close();
  await handle.ready;
  context.logger.info(`mq member ${options.id} stopped`);
  return status;
}

export const memberCommand: Command = {
  name: 'member',
  summary: 'run one member of a cluster (Raft, member RPC, and the API on its HTTP port)',
  usage: USAGE,
  run: runMember,
};
