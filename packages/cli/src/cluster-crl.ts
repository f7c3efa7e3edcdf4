// `--cluster-crl FILE` of `mq member` and `mq gateway`: the cluster CA's revocation list (made by
// `mq certs revoke`). It is read at start (a list the CA did not sign stops the start), then
// checked every TLS_RELOAD_CHECK_MS and on SIGHUP; a changed list that verifies replaces the
// revoked set at once (open links of a newly revoked peer are cut), and one that does not is
// logged and the old set kept: a broken file must never un-revoke anything.

import { readFile } from 'node:fs/promises';
import { TLS_RELOAD_CHECK_MS } from '@spoolmq/gateway';
import { type Clock, type TimerHandle, systemClock } from '@spoolmq/member';
import { type ClusterSecurity, readCrl } from '@spoolmq/raft';
import type { Logger } from './logger.js';
import { UsageError } from './usage-error.js';

/** The serials `file` revokes, after checking the CA (`caPem`) signed it. */
async function loadSerials(file: string, caPem: Buffer): Promise<string[]> {
  const bytes = await readFile(file);
  const entries = await readCrl(bytes.toString('utf8'), caPem.toString('utf8'));
  return entries.map((entry) => entry.serial);
}

/**
 * Fills `security`'s revoked set from `file`. Rejects with UsageError naming the file when it
 * cannot be read or the CA did not sign it.
 */
export async function loadClusterCrl(file: string, security: ClusterSecurity): Promise<void> {
  if (security.mode !== 'tls' || security.tls.revoked === undefined) {
    throw new UsageError('--cluster-crl needs the cluster certificates');
  }
  try {
    security.tls.revoked.replace(await loadSerials(file, security.tls.ca));
  } catch (error) {
    throw new UsageError(`${file}: ${(error as Error).message}`);
  }
}

/**
 * Re-reads `file` every `checkEveryMs` on `clock` and on SIGHUP; returns the function that stops
 * it.
 */
export function watchClusterCrl(
  file: string,
  security: ClusterSecurity,
  logger: Logger | undefined,
  checkEveryMs = TLS_RELOAD_CHECK_MS,
  clock: Clock = systemClock,
): () => void {
  if (security.mode !== 'tls' || security.tls.revoked === undefined) return () => undefined;
  const revoked = security.tls.revoked;
  let running = false;
  const reload = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      if (!revoked.replace(await loadSerials(file, security.tls.ca))) return;
      logger?.warn({ file, revoked: revoked.size }, 'cluster revocation list changed: applied');
    } catch (error) {
      const message = 'new cluster revocation list refused; the old one stays in force';
      logger?.error({ file, err: error }, message);
    } finally {
      running = false;
    }
  };
  const onHangup = (): void => void reload();
  let timer: TimerHandle | null = null;
  let stopped = false;
  const arm = (): void => {
    if (stopped) return;
    timer = clock.setTimer(() => {
      onHangup();
      arm();
    }, checkEveryMs);
  };
  arm();
  process.on('SIGHUP', onHangup);
  return () => {
    stopped = true;
    if (timer !== null) clock.clearTimer(timer);
    process.off('SIGHUP', onHangup);
  };
}
