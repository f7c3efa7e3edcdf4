// `mq gateway`: a stateless gateway. Serves the /v1 API and forwards every call to the spool's
// primary member over one gRPC stream per member, following primaries through failovers.
// /readyz is 200 once the primary of every spool it serves is known.

import {
  AccountDirectory,
  AccountWatch,
  RemoteSpoolService,
  type RemoteSpoolServiceOptions,
  type ListenerTls,
  type RunningServer,
  startHttpServer,
} from '@spoolmq/gateway';
import { parseFlags } from '../args.js';
import {
  type Env,
  type HttpListen,
  apiBaseUrl,
  flagOrEnv,
  httpListenOf,
  parseMemberList,
  untilAborted,
} from '../cluster-options.js';
import type { Command, CommandContext } from '../command.js';
import { gatewayLogOptions } from '../log-options.js';
import type { Logger } from '../logger.js';
import { renderAccountMetrics, renderRemoteMetrics } from '../status-metrics.js';
import { UsageError } from '../usage-error.js';
import {
  HEAP_GROWTH_FLAGS,
  HEAP_GROWTH_USAGE,
  type HeapGrowthOptions,
  applyHeapGrowth,
  heapGrowthOf,
} from '../heap-growth.js';
import { clientCredentials, clusterChannelOptions } from '@spoolmq/raft';
import { TLS_FLAGS, TLS_USAGE, listenerTlsOptions, reloadOnHangup, tlsOf } from '../tls-options.js';
import {
  LISTENER_FLAGS,
  LISTENER_USAGE,
  listenerOf,
  publicConnectionLimits,
} from '../listener-options.js';
import {
  CLUSTER_TLS_FLAGS,
  CLUSTER_TLS_USAGE,
  type ClusterTlsChoice,
  clusterTlsOf,
  followClusterCrl,
  loadClusterSecurity,
  warnIfInsecure,
} from '../cluster-tls-options.js';

export interface GatewayCommandOptions extends HttpListen, HeapGrowthOptions {
  /** Connections one source address may hold on the API. */
  readonly connectionsPerAddress: number;
  /** HTTPS for the API (null: plain HTTP). */
  readonly tls: ListenerTls | null;
  /** Member id -> gRPC address. */
  readonly members: Readonly<Record<string, string>>;
  /** Gateways sharing each account's request rate (this one enforces 1/gateways of it). */
  readonly gateways: number;
  /** The gRPC links' certificates, or the explicit choice to run without TLS. */
  readonly clusterTls: ClusterTlsChoice;
}

/** Gateways a deployment may declare with --gateways. */
export const GATEWAYS_MAX = 64;

export interface GatewayHandle {
  readonly service: RemoteSpoolService;
  readonly accounts: AccountWatch;
  readonly host: string;
  readonly port: number;
  /** `http://host:port/v1`. */
  readonly baseUrl: string;
  /** Graceful stop: HTTP first (long polls answer 204), then the member links. Idempotent. */
  close(): Promise<void>;
}

const USAGE = `\
Usage: mq gateway --members ID=HOST:PORT,... [--port PORT] [--host HOST] [--gateways N]

Runs a stateless gateway: the API at http://HOST:PORT/v1, each call forwarded to the spool's
primary among the members (their gRPC addresses). API keys and accounts come from the members
(pushed on every change). Stops gracefully on SIGINT or SIGTERM.

Options:
  --members LIST  The members' gRPC addresses, id=host:port comma-separated. Env MQ_MEMBERS.
                  Required.
  --gateways N    Gateways sharing the load (1-${GATEWAYS_MAX}): each enforces 1/N of every
                  account's request rate and burst. Env MQ_GATEWAYS. Default 1.
  --port PORT     TCP port, 0-65535 (0 = any free port). Env MQ_PORT. Default 8080.
  --host HOST     Address to bind. Env MQ_HOST. Default 127.0.0.1.
${TLS_USAGE}
${LISTENER_USAGE}
${CLUSTER_TLS_USAGE}
${HEAP_GROWTH_USAGE}
  -h, --help      Show this help.`;

/**
 * The gateway's service: /readyz also waits for the first accounts table (keys cannot be checked
 * before).
 */
class AccountsGatewayService extends RemoteSpoolService {
  constructor(
    options: RemoteSpoolServiceOptions,
    private readonly directory: AccountDirectory,
  ) {
    super(options);
  }

  override ready(): boolean {
    return this.directory.ready && super.ready();
  }
}

/**
 * Resolves `mq gateway`'s settings from flags and environment (MQ_MEMBERS, MQ_PORT, MQ_HOST);
 * flags win. Throws UsageError for an unknown flag, a missing member list or a bad value;
 * undefined for --help.
 */
export function parseGatewayArgs(
  argv: readonly string[],
  env: Env,
): GatewayCommandOptions | undefined {
  const flags = parseFlags(argv, {
    members: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    gateways: { type: 'string' },
    ...CLUSTER_TLS_FLAGS,
    ...TLS_FLAGS,
    ...LISTENER_FLAGS,
    ...HEAP_GROWTH_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (flags['help'] === true) return undefined;
  const members = flagOrEnv(flags, 'members', env, 'MQ_MEMBERS');
  if (members === undefined) throw new UsageError('--members (or MQ_MEMBERS) is required');
  const gatewaysText = flagOrEnv(flags, 'gateways', env, 'MQ_GATEWAYS');
  let gateways = 1;
  if (gatewaysText !== undefined) {
    gateways = Number(gatewaysText.value);
    if (!/^\d{1,2}$/.test(gatewaysText.value) || gateways < 1 || gateways > GATEWAYS_MAX) {
      throw new UsageError(`${gatewaysText.source} must be 1-${GATEWAYS_MAX}`);
    }
  }
  return {
    members: parseMemberList(members.value, members.source),
    gateways,
    clusterTls: clusterTlsOf(flags, env, 'mq gateway'),
    ...httpListenOf(flags, env),
    ...tlsOf(flags, env),
    ...listenerOf(flags, env),
    ...heapGrowthOf(flags, env),
  };
}

/**
 * Starts the gateway and resolves once it listens (members need not be up: /readyz says when a
 * primary is known). Rejects with the listen error (EADDRINUSE...), the links closed again.
 */
export async function startGateway(
  options: GatewayCommandOptions,
  logger?: Logger,
): Promise<GatewayHandle> {
  const security = await loadClusterSecurity(options.clusterTls, { role: 'gateway' });
  warnIfInsecure(security, logger);
  const credentials = (id: string) => clientCredentials(security, id);
  const channelOptions = clusterChannelOptions(security);
  const directory = new AccountDirectory({ rateShare: 1 / options.gateways });
  const service = new AccountsGatewayService(
    { members: options.members, credentials, channelOptions },
    directory,
  );
  const accounts = new AccountWatch({
    members: options.members,
    directory,
    credentials,
    channelOptions,
    onError: (error) => logger?.warn({ err: error }, 'accounts table refused'),
  });
  let server: RunningServer;
  try {
    server = await startHttpServer(service, {
      ...listenerTlsOptions(options.tls, logger, 'API'),
      connectionLimits: publicConnectionLimits(options.connectionsPerAddress),
      host: options.host,
      port: options.port,
      authenticate: (key) => directory.authenticate(key),
      metricsExtra: () =>
        renderRemoteMetrics(service.metrics()) + renderAccountMetrics(accounts.stats()),
      ...gatewayLogOptions(logger),
    });
  } catch (error) {
    accounts.close();
    await service.close();
    throw error;
  }
  const stopHangup = reloadOnHangup([server]);
  const stopCrl = followClusterCrl(options.clusterTls, security, logger);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= server
      .close()
      .finally(stopHangup)
      .finally(stopCrl)
      .finally(() => accounts.close())
      .finally(() => service.close()));
  const { host, port } = server;
  const baseUrl = apiBaseUrl(host, port, options.tls !== null);
  return { service, accounts, host, port, baseUrl, close };
}

async function runGateway(argv: readonly string[], context: CommandContext): Promise<number> {
  const options = parseGatewayArgs(argv, context.env);
  if (options === undefined) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  applyHeapGrowth(options);
  const handle = await startGateway(options, context.logger);
  context.logger.info(
    { members: options.members, host: handle.host, port: handle.port, baseUrl: handle.baseUrl },
    `mq gateway listening on ${handle.baseUrl} ` +
      `(members ${Object.keys(options.members).join(', ')})`,
  );
  await untilAborted(context.shutdown);
  context.logger.info('mq gateway shutting down');
  await handle.close();
  context.logger.info('mq gateway stopped');
  return 0;
}

export const gatewayCommand: Command = {
  name: 'gateway',
  summary: 'run a stateless gateway in front of the members',
  usage: USAGE,
  run: runGateway,
};
