// Serving the admin app on its own listener (default 127.0.0.1:8081, never the public port).

import type { AddressInfo } from 'node:net';
import type { AdminBackend } from './admin-backend.js';
import { createAdminApp, type AdminAppOptions } from './admin-app.js';
import { createBoundedServer, type RunningServer } from '../server.js';
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
}

/** Starts the admin API; rejects with the listen error (EADDRINUSE...). */
export async function startAdminServer(
  backend: AdminBackend,
  options: AdminServerOptions,
): Promise<RunningServer> {
  const app = createAdminApp(backend, options);
  const host = options.host ?? ADMIN_HOST_DEFAULT;
  const server = createBoundedServer(app.fetch);
  server.maxConnections = ADMIN_CONNECTIONS_MAX;
  const connectionStats = guardConnections(server, options.connectionLimits ?? ADMIN_CONNECTION_LIMITS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? ADMIN_PORT_DEFAULT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }));
  return { port, host, close, connectionStats };
}
