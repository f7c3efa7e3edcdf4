// Serving the gateway app on a socket with @hono/node-server, and closing it gracefully: stop
// accepting, end long polls (they answer 204), let requests in flight finish, close every
// connection; connections still open after CLOSE_GRACE_MS are cut.

import { STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createAdaptorServer } from '@hono/node-server';
import type { SpoolService } from '@spoolmq/engine';
import { type Clock, monotonicClock } from '@spoolmq/protocol';
import { createGatewayApp } from './app.js';
import {
  CLOSE_GRACE_MS,
  CONNECTIONS_MAX,
  HEADER_MAX_BYTES,
  HEADERS_TIMEOUT_MS,
  KEEP_ALIVE_TIMEOUT_MS,
  REQUEST_TIMEOUT_MS,
  type GatewayOptions,
} from './options.js';
import { RuntimeMetrics } from './runtime-metrics.js';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type ListenerTls, type TlsReloader, loadTlsPair, watchTls } from './listener-tls.js';
import {
  type ConnectionLimits,
  type ConnectionStats,
  PUBLIC_CONNECTION_LIMITS,
  guardConnections,
} from './connection-guard.js';

export interface RunningServer {
  readonly port: number;
  readonly host: string;
  /** Connections open, refused at accept and reaped for silence (when the listener counts). */
  connectionStats?(): ConnectionStats;
  /** With TLS: checks the certificate files now, true when a new pair was applied (SIGHUP). */
  reloadTls?(): boolean;
  /** Graceful close; resolves when every connection is closed. Safe to call more than once. */
  close(): Promise<void>;
}

export interface ServerOptions extends GatewayOptions {
  /** Address to bind; default 127.0.0.1. */
  host?: string;
  /** Port to bind, 0 for an ephemeral one; default 8080. */
  port?: number;
  /** Bounds on connections; default PUBLIC_CONNECTION_LIMITS. */
  connectionLimits?: ConnectionLimits;
  /** Serve HTTPS with this certificate and key (reloaded when the files change). */
  tls?: ListenerTls;
  /** Told of each certificate reload (null) or refused reload (the error). */
  onTlsReload?: (error: Error | null) => void;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Status of a request Node's parser refused before the app saw it. */
function clientErrorStatus(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/**
 * Answers requests Node's HTTP parser refuses (malformed, headers over HEADER_MAX_BYTES, too
 * slow) with the interface's JSON error body instead of Node's bare status line.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(error.code);
  const body = JSON.stringify({
    kind: 'invalid_argument',
    message: `request refused by the HTTP parser (${error.code ?? 'malformed'})`,
    details: status === 431 ? { limitBytes: HEADER_MAX_BYTES } : {},
  });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function closeGracefully(server: Server, shutdown: AbortController, clock: Clock): Promise<void> {
  shutdown.abort();
  const closed = new Promise<void>((resolve, reject) => {
    server.close((error) => (error === undefined ? resolve() : reject(error)));
  });
  server.closeIdleConnections();
  const cut = clock.setTimer(() => server.closeAllConnections(), CLOSE_GRACE_MS);
  return closed.finally(() => clock.clearTimer(cut));
}

/**
 * A Node HTTP server for `fetch` with the gateway's bounds on header bytes, header time,
 * request time and keep-alive idle time (the public API and the admin listener share them).
 */
export function createBoundedServer(
  fetch: (request: Request) => Response | Promise<Response>,
  tls?: ListenerTls,
): Server {
  const serverOptions = {
    maxHeaderSize: HEADER_MAX_BYTES,
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  };
  if (tls === undefined) return createAdaptorServer({ fetch, serverOptions }) as Server;
  return createAdaptorServer({
    fetch,
    createServer: createHttpsServer,
    serverOptions: { ...serverOptions, ...loadTlsPair(tls) },
  }) as Server;
}

/** Starts watching the listener's certificate files on `clock`; undefined without TLS. */
export function reloadingTls(
  server: Server,
  tls: ListenerTls | undefined,
  onEvent: ((error: Error | null) => void) | undefined,
  clock: Clock,
): TlsReloader | undefined {
  if (tls === undefined) return undefined;
  const https = server as unknown as HttpsServer;
  return watchTls(https, tls, onEvent ?? (() => undefined), clock);
}

/**
 * Starts the gateway over `service` on `options.host`:`options.port` and resolves once it is
 * listening, with the bound port (the ephemeral one for port 0). Rejects with the listen error
 * (EADDRINUSE...). `options.shutdownSignal`, when given, also triggers the graceful close of
 * long polls (the server itself closes only through `close()`). Its /metrics also carries the
 * process's event loop lag and GC pauses (runtime-metrics.ts), ahead of `options.metricsExtra`.
 */
export async function startHttpServer(
  service: SpoolService,
  options: ServerOptions,
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const clock = options.clock ?? monotonicClock;
  const shutdown = new AbortController();
  const external = options.shutdownSignal;
  if (external?.aborted === true) shutdown.abort();
  external?.addEventListener('abort', () => shutdown.abort(), { once: true });
  const runtime = new RuntimeMetrics(clock);
  const extra = options.metricsExtra;
  const app = createGatewayApp(service, {
    ...options,
    clock,
    shutdownSignal: shutdown.signal,
    metricsExtra: () => runtime.render() + (extra?.() ?? ''),
  });
  const server = createBoundedServer(app.fetch, options.tls);
  // Header count is bounded by HEADER_MAX_BYTES; a count limit would drop headers silently,
  // hiding repeated or unknown Svc-* headers from validation.
  server.maxHeadersCount = 0;
  server.maxConnections = CONNECTIONS_MAX;
  const limits = options.connectionLimits ?? PUBLIC_CONNECTION_LIMITS;
  const connectionStats = guardConnections(server, limits, clock);
  server.on('clientError', answerClientError);
  try {
    await listen(server, options.port ?? 8080, host);
  } catch (error) {
    runtime.stop();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  const tls = reloadingTls(server, options.tls, options.onTlsReload, clock);
  let closing: Promise<void> | undefined;
  return {
    port,
    host,
    connectionStats,
    ...(tls && { reloadTls: tls.reload }),
    close: () =>
      (closing ??= closeGracefully(server, shutdown, clock).finally(() => {
        runtime.stop();
        tls?.stop();
      })),
  };
}
