// `--cluster-ca`, `--cluster-cert`, `--cluster-key` and `--insecure-cluster` of `mq member` and
// `mq gateway`: the mutual TLS of every gRPC link. A process started with neither certificates
// nor the insecure flag refuses to start, so a cluster is never open by accident.

import { readFile } from 'node:fs/promises';
import {
  type ClusterSecurity,
  INSECURE_CLUSTER,
  type PeerIdentity,
  type Refusal,
  RevokedSerials,
  ownIdentity,
} from '@spoolmq/raft';
import { loadClusterCrl, watchClusterCrl } from './cluster-crl.js';
import { type Env, flagOrEnv } from './cluster-options.js';
import type { Logger } from './logger.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const CLUSTER_TLS_FLAGS = {
  'cluster-ca': { type: 'string' },
  'cluster-cert': { type: 'string' },
  'cluster-key': { type: 'string' },
  'cluster-crl': { type: 'string' },
  'insecure-cluster': { type: 'boolean' },
} as const;

export const CLUSTER_TLS_USAGE = `\
  --cluster-ca FILE   The cluster CA's certificate (PEM). Env MQ_CLUSTER_CA.
  --cluster-cert FILE This process's certificate from \`mq certs\` (PEM). Env MQ_CLUSTER_CERT.
  --cluster-key FILE  Its private key (PEM). Env MQ_CLUSTER_KEY.
  --cluster-crl FILE  The CA's revocation list from \`mq certs revoke\` (PEM), re-read when it
                      changes (checked every 30 s and on SIGHUP). Env MQ_CLUSTER_CRL.
  --insecure-cluster  Run the gRPC links without TLS: anyone who reaches the port can read and
                      write every spool. Env MQ_INSECURE_CLUSTER=true. Not for production.`;

/** Where the certificates are, or the explicit choice to run without. */
export type ClusterTlsChoice =
  | {
      readonly mode: 'tls';
      readonly caFile: string;
      readonly certFile: string;
      readonly keyFile: string;
      /** The CA's revocation list, when given. */
      readonly crlFile: string | null;
    }
  | { readonly mode: 'insecure' };

/** The choice from flags and environment; UsageError when it is missing, partial or both. */
export function clusterTlsOf(flags: Flags, env: Env, command: string): ClusterTlsChoice {
  const ca = flagOrEnv(flags, 'cluster-ca', env, 'MQ_CLUSTER_CA');
  const cert = flagOrEnv(flags, 'cluster-cert', env, 'MQ_CLUSTER_CERT');
  const key = flagOrEnv(flags, 'cluster-key', env, 'MQ_CLUSTER_KEY');
  const crl = flagOrEnv(flags, 'cluster-crl', env, 'MQ_CLUSTER_CRL');
  const insecureEnv = env['MQ_INSECURE_CLUSTER'];
  if (insecureEnv !== undefined && !['true', 'false', '1', '0'].includes(insecureEnv)) {
    const shown = JSON.stringify(insecureEnv);
    throw new UsageError(`MQ_INSECURE_CLUSTER must be true or false, not ${shown}`);
  }
  const insecure =
    flags['insecure-cluster'] === true || insecureEnv === 'true' || insecureEnv === '1';
  const given = [ca, cert, key].filter((value) => value !== undefined).length;
  if (insecure && given > 0) {
    throw new UsageError('give either the cluster certificates or --insecure-cluster, not both');
  }
  if (insecure && crl !== undefined) {
    throw new UsageError('--cluster-crl needs the cluster certificates, not --insecure-cluster');
  }
  if (insecure) return { mode: 'insecure' };
  if (given === 0) {
    throw new UsageError(
      `${command} needs the cluster's certificates: pass --cluster-ca, --cluster-cert and ` +
        '--cluster-key (make them with `mq certs`), or --insecure-cluster to run without TLS',
    );
  }
  if (ca === undefined || cert === undefined || key === undefined || given !== 3) {
    throw new UsageError('--cluster-ca, --cluster-cert and --cluster-key go together');
  }
  for (const value of [ca, cert, key, ...(crl === undefined ? [] : [crl])]) {
    if (value.value === '') throw new UsageError(`${value.source} must name a file`);
  }
  const files = { caFile: ca.value, certFile: cert.value, keyFile: key.value };
  return { mode: 'tls', ...files, crlFile: crl?.value ?? null };
}

/**
 * Reads the files of `choice` and checks that the certificate is `expected`'s (a member's
 * certificate names its id; a gateway's any gateway name). Rejects with UsageError naming the
 * file when one cannot be read or the certificate is someone else's.
 */
export async function loadClusterSecurity(
  choice: ClusterTlsChoice,
  expected: { readonly role: PeerIdentity['role']; readonly name?: string },
): Promise<ClusterSecurity> {
  if (choice.mode === 'insecure') return INSECURE_CLUSTER;
  const read = async (file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (error) {
      throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const tls = {
    ca: await read(choice.caFile),
    cert: await read(choice.certFile),
    key: await read(choice.keyFile),
    // Filled from --cluster-crl (loadClusterCrl) before any link opens; empty without it.
    revoked: new RevokedSerials(),
  };
  const security: ClusterSecurity = { mode: 'tls', tls };
  if (choice.crlFile !== null) await loadClusterCrl(choice.crlFile, security);
  let identity: PeerIdentity | null;
  try {
    identity = ownIdentity(security);
  } catch (error) {
    throw new UsageError(`${choice.certFile}: ${(error as Error).message}`);
  }
  const { role, name } = expected;
  const wanted = name === undefined ? `a ${role}` : `${role} ${name}`;
  if (identity?.role !== role || (name !== undefined && identity.name !== name)) {
    const holder = `${identity?.role} ${identity?.name}`;
    throw new UsageError(`${choice.certFile} is the certificate of ${holder}, not of ${wanted}`);
  }
  return security;
}

/** Logs the insecure choice at every start, so it is never forgotten. */
export function warnIfInsecure(security: ClusterSecurity, logger: Logger | undefined): void {
  if (security.mode !== 'insecure') return;
  logger?.warn(
    { insecureCluster: true },
    'cluster links run WITHOUT TLS (--insecure-cluster): any process that reaches the gRPC ' +
      'port can read and change every spool and account',
  );
}

/** Logs each refused peer once (address and claimed identity), then counts it silently. */
export function refusalLogger(logger: Logger | undefined): (refusal: Refusal) => void {
  const seen = new Set<string>();
  const SEEN_MAX = 1_024;
  return (refusal) => {
    const key = `${refusal.peer}\u0000${refusal.identity?.role}/${refusal.identity?.name}`;
    if (seen.has(key) || seen.size >= SEEN_MAX) return;
    seen.add(key);
    logger?.warn(
      {
        peer: refusal.peer,
        identity: refusal.identity,
        method: refusal.method,
        reason: refusal.reason,
      },
      'refused a gRPC call: the caller has no right to it',
    );
  };
}

/** Follows --cluster-crl while the process runs (nothing without it); returns the stop. */
export function followClusterCrl(
  choice: ClusterTlsChoice,
  security: ClusterSecurity,
  logger: Logger | undefined,
): () => void {
  if (choice.mode !== 'tls' || choice.crlFile === null) return () => undefined;
  return watchClusterCrl(choice.crlFile, security, logger);
}
