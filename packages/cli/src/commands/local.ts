// `mq local`: the in-memory local variant. One process, the engine in memory, the HTTP API on
// 127.0.0.1:8080 by default; any API key is accepted and nothing survives a restart.

import { type RunningServer, startHttpServer } from '@spoolmq/gateway';
import { createLocalService } from '@spoolmq/member';
import { parseFlags, parseHost, parsePort } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import type { Logger } from '../logger.js';
import {
  HEAP_GROWTH_FLAGS,
  HEAP_GROWTH_USAGE,
  type HeapGrowthOptions,
  applyHeapGrowth,
  heapGrowthOf,
} from '../heap-growth.js';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 8080;

export interface LocalOptions extends HeapGrowthOptions {
  readonly host: string;
  /** 0-65535; 0 picks a free port (read it back from the handle). */
  readonly port: number;
}

export interface LocalHandle {
  readonly host: string;
  readonly port: number;
  /** Base URL of the API, `http://host:port/v1`. */
  readonly baseUrl: string;
  /**
   * Graceful stop: stops accepting, lets in-flight requests finish, answers open long polls 204,
   * then drops the in-memory state. Idempotent.
   */
  close(): Promise<void>;
}

const USAGE = `Usage: mq local [--port PORT] [--host HOST]

Runs the in-memory local variant of the API at http://HOST:PORT/v1. Any API key is accepted;
messages live in memory only. Stops gracefully on SIGINT or SIGTERM.

Options:
  --port PORT   TCP port, 0-65535 (0 = any free port). Env MQ_PORT. Default ${DEFAULT_PORT}.
  --host HOST   Address to bind. Env MQ_HOST. Default ${DEFAULT_HOST}.
${HEAP_GROWTH_USAGE}
  -h, --help    Show this help.`;

/**
 * Resolves the listen address from flags and environment (MQ_PORT, MQ_HOST); flags win.
 * Throws UsageError for an unknown flag or a bad value. Returns undefined for --help.
 */
export function parseLocalArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): LocalOptions | undefined {
  const flags = parseFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    ...HEAP_GROWTH_FLAGS,
    help: { type: 'boolean', short: 'h' },
  });
  if (flags['help'] === true) return undefined;
  const portFlag = flags['port'];
  const hostFlag = flags['host'];
  const port =
    typeof portFlag === 'string'
      ? parsePort(portFlag, '--port')
      : env['MQ_PORT'] !== undefined
        ? parsePort(env['MQ_PORT'], 'MQ_PORT')
        : DEFAULT_PORT;
  const host =
    typeof hostFlag === 'string'
      ? parseHost(hostFlag, '--host')
      : env['MQ_HOST'] !== undefined
        ? parseHost(env['MQ_HOST'], 'MQ_HOST')
        : DEFAULT_HOST;
  return { host, port, ...heapGrowthOf(flags, env) };
}

/**
 * Starts the local variant and resolves once it listens. Rejects with the listen error
 * (EADDRINUSE, EACCES...) if the address cannot be bound. Unexpected request errors (rendered as
 * 500 internal) go to `logger` when given, else to stderr.
 */
export async function startLocal(options: LocalOptions, logger?: Logger): Promise<LocalHandle> {
  const service = createLocalService();
  const logError =
    logger === undefined
      ? undefined
      : (error: unknown, context: { readonly operation: string }): void => {
          logger.error({ err: error, ...context }, 'internal error');
        };
  let server: RunningServer;
  try {
    server = await startHttpServer(service, {
      host: options.host,
      port: options.port,
      ...(logError === undefined ? {} : { logError }),
    });
  } catch (error) {
    await service.close();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    const stopping = closing ?? server.close().finally(() => service.close());
    closing = stopping;
    return stopping;
  };
  const { host, port } = server;
  return { host, port, baseUrl: baseUrlOf(host, port), close };
}

/** Runs `mq local` until `context.shutdown` aborts; resolves exit status 0 after a clean stop. */
async function runLocal(argv: readonly string[], context: CommandContext): Promise<number> {
  const options = parseLocalArgs(argv, context.env);
  if (options === undefined) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  applyHeapGrowth(options);
  const handle = await startLocal(options, context.logger);
  logStarted(context.logger, handle);
  await waitForAbort(context.shutdown);
  context.logger.info('mq local shutting down');
  await handle.close();
  context.logger.info('mq local stopped');
  return 0;
}

function logStarted(logger: Logger, handle: LocalHandle): void {
  logger.info(
    { host: handle.host, port: handle.port, baseUrl: handle.baseUrl, variant: 'memory' },
    `mq local listening on ${handle.baseUrl} (in memory, any API key accepted)`,
  );
}

function baseUrlOf(host: string, port: number): string {
  const shown = host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}/v1`;
}

function waitForAbort(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export const localCommand: Command = {
  name: 'local',
  summary: 'run the in-memory local variant (any API key accepted)',
  usage: USAGE,
  run: runLocal,
};
