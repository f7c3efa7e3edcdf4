// `--tls-cert`/`--tls-key` (the public API) and `--admin-tls-cert`/`--admin-tls-key` (the admin
// listener, falling back to the public pair): HTTPS on the listeners people and load balancers
// reach. The files are re-read when they change (and on SIGHUP), so a renewed certificate needs
// no restart.

import type { ListenerTls, RunningServer } from '@spoolmq/gateway';
import { type Env, flagOrEnv } from './cluster-options.js';
import type { Logger } from './logger.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const TLS_FLAGS = {
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
} as const;

export const ADMIN_TLS_FLAGS = {
  'admin-tls-cert': { type: 'string' },
  'admin-tls-key': { type: 'string' },
} as const;

export const TLS_USAGE = `\
  --tls-cert FILE     Serve the API over HTTPS with this certificate (PEM; reloaded when the
                      file changes or on SIGHUP). Env MQ_TLS_CERT. Needs --tls-key.
  --tls-key FILE      Its private key (PEM). Env MQ_TLS_KEY.`;

export const ADMIN_TLS_USAGE = `  --admin-tls-cert FILE, --admin-tls-key FILE
                      HTTPS for the admin API (env MQ_ADMIN_TLS_CERT, MQ_ADMIN_TLS_KEY);
                      default the --tls-cert pair when that is given.`;

function pairOf(flags: Flags, env: Env, prefix: '' | 'admin-'): ListenerTls | null {
  const variable = prefix === '' ? 'MQ_TLS' : 'MQ_ADMIN_TLS';
  const cert = flagOrEnv(flags, `${prefix}tls-cert`, env, `${variable}_CERT`);
  const key = flagOrEnv(flags, `${prefix}tls-key`, env, `${variable}_KEY`);
  if (cert === undefined && key === undefined) return null;
  if (cert === undefined || key === undefined) {
    throw new UsageError(`--${prefix}tls-cert and --${prefix}tls-key go together`);
  }
  if (cert.value === '' || key.value === '') {
    throw new UsageError(`--${prefix}tls-* must name files`);
  }
  return { certFile: cert.value, keyFile: key.value };
}

/** The public listener's certificate files, or null for plain HTTP. UsageError if half given. */
export function tlsOf(flags: Flags, env: Env): { readonly tls: ListenerTls | null } {
  return { tls: pairOf(flags, env, '') };
}

/** The admin listener's: its own pair, else the public one, else null. */
export function adminTlsOf(flags: Flags, env: Env): { readonly adminTls: ListenerTls | null } {
  return { adminTls: pairOf(flags, env, 'admin-') ?? pairOf(flags, env, '') };
}

/** Server options for a listener with `tls`, logging every reload. */
export function listenerTlsOptions(
  tls: ListenerTls | null,
  logger: Logger | undefined,
  listener: string,
): { tls?: ListenerTls; onTlsReload?: (error: Error | null) => void } {
  if (tls === null) return {};
  return {
    tls,
    onTlsReload: (error) => {
      if (error === null) {
        logger?.info({ listener, certFile: tls.certFile }, `${listener}: TLS certificate reloaded`);
      } else {
        const message = `${listener}: new TLS certificate refused; the old one serves`;
        logger?.error({ listener, err: error }, message);
      }
    },
  };
}

/** Re-reads the listeners' certificates on SIGHUP; returns the function that stops it. */
export function reloadOnHangup(servers: readonly RunningServer[]): () => void {
  if (servers.every((server) => server.reloadTls === undefined)) return () => undefined;
  const onHangup = (): void => {
    for (const server of servers) server.reloadTls?.();
  };
  process.on('SIGHUP', onHangup);
  return () => process.off('SIGHUP', onHangup);
}
