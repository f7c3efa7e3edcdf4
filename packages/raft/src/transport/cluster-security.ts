// Who may speak on a member's gRPC port. Every link between processes of a cluster (member to
// member, gateway to member) is mutual TLS with certificates from the cluster's CA; each
// certificate names its holder's role and name in a URI subject alternative name
// (`mq://member/n1`, `mq://gateway/gw1`). The handshake proves the certificate chains to the CA;
// the role then decides which services the caller may use (a gateway calls spool operations and
// watches accounts, never speaks Raft or proposes metadata), and the name is checked against what
// the caller claims (a Raft message's `from`).
//
// The insecure mode exists for tests and for operators who put the links inside something that
// already authenticates them; the commands refuse to start without certificates unless asked to.

import { X509Certificate } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { defined } from '../core/assert.js';
import type { RevokedSerials } from './revocation.js';

export type PeerRole = 'member' | 'gateway';

export interface PeerIdentity {
  readonly role: PeerRole;
  readonly name: string;
}

/**
 * PEM bytes of the cluster CA's certificate and of this process's certificate and key, and the
 * serial numbers of the CA's certificates that are revoked (none when absent).
 */
export interface ClusterTls {
  readonly ca: Buffer;
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly revoked?: RevokedSerials;
}

/** Mutual TLS with `tls`, or no transport security at all (an explicit choice). */
export type ClusterSecurity =
  | { readonly mode: 'tls'; readonly tls: ClusterTls }
  | { readonly mode: 'insecure' };

export const INSECURE_CLUSTER: ClusterSecurity = { mode: 'insecure' };

const IDENTITY_URI = /^mq:\/\/(member|gateway)\/([A-Za-z0-9_.-]{1,64})$/;

/** The URI a certificate of `identity` carries as a subject alternative name. */
export function identityUri(identity: PeerIdentity): string {
  if (!IDENTITY_URI.test(`mq://${identity.role}/${identity.name}`)) {
    throw new RangeError(`not a valid ${identity.role} name: ${JSON.stringify(identity.name)}`);
  }
  return `mq://${identity.role}/${identity.name}`;
}

/**
 * The identity in a certificate's subject alternative names (`URI:mq://role/name`), or null
 * when it has none or more than one (a certificate naming two holders is refused, not guessed).
 */
export function identityOfAltNames(altNames: string | undefined): PeerIdentity | null {
  if (altNames === undefined) return null;
  const found: PeerIdentity[] = [];
  for (const part of altNames.split(',')) {
    const entry = part.trim();
    if (!entry.startsWith('URI:')) continue;
    const match = IDENTITY_URI.exec(entry.slice(4));
    if (match !== null) {
      found.push({ role: match[1] as PeerRole, name: defined(match[2], 'name group') });
    }
  }
  return found.length === 1 ? defined(found[0], 'one identity') : null;
}

/** The identity of a PEM or DER certificate, or null (unparsable, or no single identity). */
export function identityOfCertificate(certificate: Buffer): PeerIdentity | null {
  try {
    return identityOfAltNames(new X509Certificate(certificate).subjectAltName);
  } catch {
    return null;
  }
}

/**
 * The identity of this process's own certificate. Throws Error when the certificate has none
 * (made by something other than `mq certs`), so a misconfigured process stops at start.
 */
export function ownIdentity(security: ClusterSecurity): PeerIdentity | null {
  if (security.mode === 'insecure') return null;
  const identity = identityOfCertificate(security.tls.cert);
  if (identity === null) {
    throw new Error(
      'the cluster certificate names no mq identity (a URI SAN mq://member/ID or ' +
        'mq://gateway/NAME); make it with `mq certs`',
    );
  }
  return identity;
}

/** Server credentials: mutual TLS requiring a client certificate from the CA, or insecure. */
export function serverCredentials(security: ClusterSecurity): grpc.ServerCredentials {
  if (security.mode === 'insecure') return grpc.ServerCredentials.createInsecure();
  const { ca, cert, key } = security.tls;
  return grpc.ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true);
}

/**
 * Client credentials for dialling member `memberId`: our certificate for the server to check,
 * and the server's certificate checked to be that member's (not the host name: members move
 * between addresses, their identity does not). `memberId` null accepts any member.
 */
export function clientCredentials(
  security: ClusterSecurity,
  memberId: string | null,
): grpc.ChannelCredentials {
  if (security.mode === 'insecure') return grpc.credentials.createInsecure();
  const { ca, cert, key, revoked } = security.tls;
  return grpc.credentials.createSsl(ca, key, cert, {
    checkServerIdentity: (_host, peer) => {
      if (revoked?.has(peer.serialNumber) === true) {
        return new Error(`the server's certificate (serial ${peer.serialNumber}) is revoked`);
      }
      const identity = identityOfAltNames(peer.subjectaltname);
      if (identity?.role === 'member' && (memberId === null || identity.name === memberId)) {
        return undefined;
      }
      const wanted = memberId === null ? 'a member' : `member ${memberId}`;
      return new Error(`the server's certificate is not ${wanted}'s`);
    },
  });
}

/**
 * Channel options every cluster client adds: under TLS, the name sent in the handshake (SNI).
 * Peers are checked by identity, not host name, and members are often dialled by IP address,
 * which TLS may not carry as a server name (RFC 6066).
 */
export function clusterChannelOptions(security: ClusterSecurity): Record<string, string> {
  return security.mode === 'tls' ? { 'grpc.ssl_target_name_override': 'mq.cluster' } : {};
}

/**
 * The verified identity of a call's peer: null when the connection carries no certificate with
 * an identity (never the case under mutual TLS, which refuses such peers in the handshake, unless
 * the certificate lacks the URI) or the server is insecure.
 */
export function callerIdentity(call: CallWithAuthContext): PeerIdentity | null {
  return callerCertificate(call)?.identity ?? null;
}

/** The identity and serial number of a call's verified peer certificate (null: none). */
export function callerCertificate(
  call: CallWithAuthContext,
): { readonly identity: PeerIdentity | null; readonly serial: string | undefined } | null {
  const certificate = call.getAuthContext?.()?.sslPeerCertificate;
  if (certificate === undefined || certificate === null) return null;
  return {
    identity: identityOfAltNames(certificate.subjectaltname),
    serial: certificate.serialNumber,
  };
}

/** What grpc-js 1.14's server calls offer (its AuthContext type is not exported). */
export interface CallWithAuthContext {
  getAuthContext?: () => {
    sslPeerCertificate?: { subjectaltname?: string; serialNumber?: string } | null;
  } | null;
}
