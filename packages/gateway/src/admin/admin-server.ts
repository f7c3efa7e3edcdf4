// Serving the admin app on its own listener (default 127.0.0.1:8081, never the public port).

import type { AddressInfo } from 'node:net';
import { type AdminBackend, type Clock, monotonicClock } from '@spoolmq/protocol';
import { createAdminApp, type AdminAppOptions } from './admin-app.js';
import { createBoundedServer, reloadingTls, type RunningServer } from '../server.js';
import type { ListenerTls } from '../listener-tls.js';
import {
  ADMIN_CONNECTION_LIMITS,
  type ConnectionLimits,
  guardConnections,
} from '../connection-guard.js';

export const ADMIN_HOST_DEFAULT = '127.0.0.1';
export const ADMIN_PORT_DEFAULT = 8081;
/** Admin connections served at once. */
export const ADMIN_CONNECTIONS_MAX = 64;

export interface AdminServerOptions extends AdminAppOptions {
  readonly host?: string;
  readonly port?: number;
  /** Bounds on connections; default ADMIN_CONNECTION_LIMITS. */
  readonly connectionLimits?: ConnectionLimits;
  /** Serve HTTPS with this certificate and key (reloaded when the files change). */
  readonly tls?: ListenerTls;
  readonly onTlsReload?: (error: Error | null) => void;
  /** Time for connection deadlines and certificate checks; default monotonicClock. */
  readonly clock?: Clock;
}

/** Starts the admin API; rejects with the listen error (EADDRINUSE...). */
export async function startAdminServer(
  backend: AdminBackend,
  options: AdminServerOptions,
): Promise<RunningServer> {
  const app = createAdminApp(backend, options);
  const host = options.host ?? ADMIN_HOST_DEFAULT;
  const clock = options.clock ?? monotonicClock;
  const server = createBoundedServer(app.fetch, options.tls);
  server.maxConnections = ADMIN_CONNECTIONS_MAX;
  const limits = options.connectionLimits ?? ADMIN_CONNECTION_LIMITS;
  const connectionStats = guardConnections(server, limits, clock);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? ADMIN_PORT_DEFAULT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const tls = reloadingTls(server, options.tls, options.onTlsReload, clock);
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      tls?.stop();
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  return { port, host, close, connectionStats, ...(tls && { reloadTls: tls.reload }) };
}
