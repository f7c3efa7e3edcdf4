// TLS on the public and admin HTTP listeners, with the certificate and key reloaded without a
// restart: the files' contents are checked every TLS_RELOAD_CHECK_MS (and on `reload()`, which the
// commands call on SIGHUP); a changed pair that loads is applied to new connections with
// `setSecureContext`, a pair that does not load is reported and the old one kept serving.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import { type Clock, repeatEvery } from '@spoolmq/protocol';

/** The PEM files of a listener's certificate (chain) and private key. */
export interface ListenerTls {
  readonly certFile: string;
  readonly keyFile: string;
}

/** How often the files are checked for a new certificate (renewals by cert-manager, certbot). */
export const TLS_RELOAD_CHECK_MS = 30_000;

export interface TlsPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** Reads and checks the pair (a mismatched key throws here, not at the next handshake). */
export function loadTlsPair(tls: ListenerTls): TlsPair {
  const pair = { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) };
  createSecureContext(pair);
  return pair;
}

/** What the files hold now: their contents' digest (a same-size rewrite within the same
 * millisecond changes it, where a modification time might not). */
function stamp(tls: ListenerTls): string {
  const digest = createHash('sha256');
  digest.update(readFileSync(tls.certFile));
  digest.update(readFileSync(tls.keyFile));
  return digest.digest('hex');
}

export interface TlsReloader {
  /** Checks the files now; resolves true when a new pair was applied. */
  reload(): boolean;
  stop(): void;
}

/**
 * Watches `tls` for `server`, checking every `checkEveryMs` on `clock`. `onEvent` hears every
 * applied reload (`null`) and every refused one (the error); the old certificate keeps serving
 * after a refusal.
 */
export function watchTls(
  server: HttpsServer,
  tls: ListenerTls,
  onEvent: (error: Error | null) => void,
  clock: Clock,
  checkEveryMs = TLS_RELOAD_CHECK_MS,
): TlsReloader {
  let applied = stamp(tls);
  const reload = (): boolean => {
    let current: string;
    try {
      current = stamp(tls);
      if (current === applied) return false;
      server.setSecureContext(loadTlsPair(tls));
    } catch (error) {
      onEvent(error as Error);
      return false;
    }
    applied = current;
    onEvent(null);
    return true;
  };
  const stop = repeatEvery(clock, checkEveryMs, reload);
  return { reload, stop };
}
