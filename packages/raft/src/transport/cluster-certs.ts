// Making the cluster's CA and its members' and gateways' certificates, in JavaScript (no openssl
// on the machine needed): ECDSA P-256 keys, a self-signed CA allowed to sign only end-entity
// certificates, and leaf certificates whose URI SAN names the holder (see cluster-security.ts).
// Leaves are for both TLS client and server authentication: a member is both.

// @peculiar/x509 resolves its services through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { type PeerIdentity, identityUri } from './cluster-security.js';

x509.cryptoProvider.set(webcrypto as never);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
/** How long certificates made here are valid: a CA for 10 years, leaves for 2. */
export const CA_VALIDITY_DAYS = 3_650;
export const LEAF_VALIDITY_DAYS = 730;
const DAY_MS = 86_400_000;

/** A certificate and its private key, both PEM. */
export interface PemPair {
  readonly cert: string;
  readonly key: string;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function serial(): string {
  // 128 random bits with the top bit clear: a positive serial number, as RFC 5280 wants.
  const hex = Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex');
  return hex.replace(/^[89a-f]/, '7');
}

/** The CA's private key, for signing only. */
function signingKeyOf(ca: PemPair): Promise<webcrypto.CryptoKey> {
  const der = x509.PemConverter.decodeFirst(ca.key);
  return webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, false, ['sign']);
}

/** A new self-signed CA named `name`, valid from `nowMs` for CA_VALIDITY_DAYS. */
export async function makeCa(name: string, nowMs: number): Promise<PemPair> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${name}`,
    notBefore: new Date(nowMs - DAY_MS),
    notAfter: new Date(nowMs + CA_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    keys: keys as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
        true,
      ),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/**
 * A certificate for `identity` signed by `ca`, valid from `nowMs` for LEAF_VALIDITY_DAYS, with
 * `hosts` (DNS names or IPv4 addresses) besides localhost and 127.0.0.1 as alternative names.
 * Throws RangeError for a name that cannot be an identity.
 */
export async function makeLeaf(
  ca: PemPair,
  identity: PeerIdentity,
  hosts: readonly string[],
  nowMs: number,
): Promise<PemPair> {
  const uri = identityUri(identity);
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await signingKeyOf(ca);
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const names = [...new Set(['localhost', '127.0.0.1', ...hosts])].map((host) =>
    IPV4.test(host) ? { type: 'ip' as const, value: host } : { type: 'dns' as const, value: host },
  );
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${identity.role} ${identity.name}`,
    issuer: caCert.subject,
    notBefore: new Date(nowMs - DAY_MS),
    notAfter: new Date(nowMs + LEAF_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey as never,
    signingKey: caKey as never,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(
        [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
        false,
      ),
      new x509.SubjectAlternativeNameExtension([{ type: 'url', value: uri }, ...names], false),
      await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
    ],
  });
  return { cert: cert.toString('pem'), key: await exportKey(keys.privateKey) };
}

/** Why a certificate was revoked (RFC 5280's reason codes that apply here). */
export type RevocationReason = 'keyCompromise' | 'superseded' | 'cessationOfOperation';

/** One revoked certificate: its serial number (hex), when and why it was revoked. */
export interface RevocationEntry {
  readonly serial: string;
  readonly revokedAtMs: number;
  readonly reason: RevocationReason;
}

const REASON_CODES: Readonly<Record<RevocationReason, number>> = {
  keyCompromise: 1,
  superseded: 4,
  cessationOfOperation: 5,
};

/**
 * The CA's revocation list naming `entries`, signed by `ca`, issued at `nowMs`. Its next update
 * is as far off as the CA's validity: processes reload the file when it changes, they do not
 * fetch it on a schedule. (It is also there because parsers, this library's included, misread a
 * CRL without one.)
 */
export async function makeCrl(
  ca: PemPair,
  entries: readonly RevocationEntry[],
  nowMs: number,
): Promise<string> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await signingKeyOf(ca);
  const crl = await x509.X509CrlGenerator.create({
    issuer: caCert.subject,
    thisUpdate: new Date(nowMs),
    nextUpdate: new Date(nowMs + CA_VALIDITY_DAYS * DAY_MS),
    signingAlgorithm: ALGORITHM,
    signingKey: caKey as never,
    // Every entry carries its reason: an entry with no extension at all is written as an empty
    // extension list, which RFC 5280 forbids and parsers (this library's included) reject.
    entries: entries.map((entry) => ({
      serialNumber: entry.serial,
      revocationDate: new Date(entry.revokedAtMs),
      reason: REASON_CODES[entry.reason],
    })),
  });
  // OpenSSL and most tools want the label X509 CRL (RFC 7468), not the library's CRL.
  return x509.PemConverter.encode(crl.rawData, 'X509 CRL');
}

/**
 * The entries of a PEM CRL after checking that `caPem` issued and signed it. Throws Error with
 * one sentence when it does not parse, names another issuer or its signature does not verify:
 * a list nobody can vouch for must not silently revoke (or un-revoke) anything.
 */
export async function readCrl(crlPem: string, caPem: string): Promise<RevocationEntry[]> {
  let crl: x509.X509Crl;
  try {
    crl = new x509.X509Crl(crlPem);
  } catch (error) {
    throw new Error(`not a certificate revocation list (PEM): ${(error as Error).message}`);
  }
  const caCert = new x509.X509Certificate(caPem);
  if (crl.issuer !== caCert.subject) {
    throw new Error(`the revocation list was issued by "${crl.issuer}", not by the cluster's CA`);
  }
  if (!(await crl.verify({ publicKey: caCert }))) {
    throw new Error("the revocation list's signature is not the cluster CA's");
  }
  return crl.entries.map((entry) => ({
    serial: entry.serialNumber,
    revokedAtMs: entry.revocationDate.getTime(),
    reason: reasonOf(entry.reason),
  }));
}

function reasonOf(code: number | undefined): RevocationReason {
  const found = Object.entries(REASON_CODES).find(([, value]) => value === code);
  return found === undefined ? 'cessationOfOperation' : (found[0] as RevocationReason);
}
