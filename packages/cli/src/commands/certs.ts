// `mq certs`: the cluster's CA and the certificates of its members and gateways, made in
// JavaScript (no openssl needed). Each step writes only what is missing, so the same script can
// run again to add a member; private keys are written 0600 in a directory that is 0700.

import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { X509Certificate } from 'node:crypto';
import {
  type PemPair,
  type PeerRole,
  type RevocationEntry,
  type RevocationReason,
  identityUri,
  makeCa,
  makeCrl,
  makeLeaf,
  normalizeSerial,
  readCrl,
} from '@spoolmq/raft';
import type { Command, CommandContext } from '../command.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: mq certs ca --dir DIR
       mq certs member ID --dir DIR [--host NAME]...
       mq certs gateway NAME --dir DIR [--host NAME]...
       mq certs revoke (CERT_FILE | --serial HEX) --dir DIR [--reason REASON]

Makes the cluster's certificates for mutual TLS between members and gateways.
  ca        DIR/ca.crt and DIR/ca.key: the cluster's CA (kept if present). Keep ca.key secret:
            whoever holds it can make members.
  member    DIR/member-ID.crt and .key for member ID (pass to \`mq member\` with
            --cluster-ca DIR/ca.crt --cluster-cert DIR/member-ID.crt --cluster-key ...key).
  gateway   DIR/gateway-NAME.crt and .key for a gateway.
  revoke    Adds the certificate to DIR/revoked.crl, the CA's revocation list (made with the CA,
            earlier entries kept). Copy it to every member and gateway started with
            --cluster-crl: they read it again within 30 s (or at SIGHUP), then refuse that
            certificate and cut its open links. To give the holder a new certificate, delete
            its files and make them again (a new serial number).
An existing certificate is kept; delete it to make a new one. Keys are written mode 0600.

Options:
  --dir DIR     Where the files are. Required.
  --host NAME   A DNS name or IPv4 address the process is reached at (repeatable); localhost
                and 127.0.0.1 are always included. Peers check identities, not host names.
  --serial HEX  revoke: the certificate's serial number, when its file is gone.
  --reason R    revoke: retired (default: the holder left the cluster), superseded (a new
                certificate replaced it) or key-compromise.
  -h, --help    Show this help.`;

const exists = (path: string): Promise<boolean> =>
  access(path, constants.F_OK).then(
    () => true,
    () => false,
  );

async function writePair(dir: string, stem: string, pair: PemPair): Promise<void> {
  await writeFile(join(dir, `${stem}.key`), pair.key, { mode: 0o600, flag: 'wx' });
  await writeFile(join(dir, `${stem}.crt`), pair.cert, { mode: 0o644, flag: 'wx' });
}

async function readCa(dir: string): Promise<PemPair> {
  try {
    const [cert, key] = await Promise.all([
      readFile(join(dir, 'ca.crt'), 'utf8'),
      readFile(join(dir, 'ca.key'), 'utf8'),
    ]);
    return { cert, key };
  } catch {
    throw new UsageError(`no CA in ${dir}: run \`mq certs ca --dir ${dir}\` first`);
  }
}

interface CertsRequest {
  readonly kind: 'ca' | PeerRole;
  readonly name: string;
  readonly dir: string;
  readonly hosts: readonly string[];
}

interface RevokeRequest {
  readonly kind: 'revoke';
  readonly dir: string;
  /** A certificate file, or null with `serial`. */
  readonly certFile: string | null;
  readonly serial: string | null;
  readonly reason: RevocationReason;
}

/** The revocation list's file in the certificates' directory. */
export const CRL_FILE = 'revoked.crl';

const REASONS: Readonly<Record<string, RevocationReason>> = {
  retired: 'cessationOfOperation',
  superseded: 'superseded',
  'key-compromise': 'keyCompromise',
};

function parseCertsArgs(argv: readonly string[]): CertsRequest | RevokeRequest | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string' },
        host: { type: 'string', multiple: true },
        serial: { type: 'string' },
        reason: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help === true) return undefined;
  const [kind, name, ...rest] = positionals;
  if (values.dir === undefined || values.dir === '') throw new UsageError('--dir is required');
  if (kind === 'ca' && name === undefined) {
    return { kind, name: '', dir: values.dir, hosts: [] };
  }
  if (kind === 'revoke') return revokeRequest(values, name, rest, values.dir);
  if ((kind !== 'member' && kind !== 'gateway') || name === undefined || rest.length > 0) {
    throw new UsageError('say what to make: ca, member ID or gateway NAME');
  }
  try {
    identityUri({ role: kind, name });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  return { kind, name, dir: values.dir, hosts: values.host ?? [] };
}

function revokeRequest(
  values: { readonly serial?: string; readonly reason?: string },
  certFile: string | undefined,
  rest: readonly string[],
  dir: string,
): RevokeRequest {
  if (rest.length > 0 || (certFile === undefined) === (values.serial === undefined)) {
    throw new UsageError('revoke takes one certificate file or --serial HEX');
  }
  const reason = REASONS[values.reason ?? 'retired'];
  if (reason === undefined) {
    throw new UsageError(`--reason is retired, superseded or key-compromise, not ${values.reason}`);
  }
  const serial = values.serial === undefined ? null : normalizeSerial(values.serial);
  if (serial !== null && !/^[0-9a-f]{1,40}$/.test(serial)) {
    throw new UsageError(`--serial takes a hex serial number, not ${values.serial}`);
  }
  return { kind: 'revoke', dir, certFile: certFile ?? null, serial, reason };
}

/** The entries of DIR/revoked.crl, checked against the CA; none when there is no list yet. */
async function readRevoked(dir: string, ca: PemPair): Promise<RevocationEntry[]> {
  const path = join(dir, CRL_FILE);
  if (!(await exists(path))) return [];
  try {
    return await readCrl(await readFile(path, 'utf8'), ca.cert);
  } catch (error) {
    throw new UsageError(`${path}: ${(error as Error).message}`);
  }
}

/** Writes DIR/revoked.crl naming `entries` (replacing the file whole, atomically). */
async function writeRevoked(dir: string, ca: PemPair, entries: RevocationEntry[]): Promise<void> {
  const path = join(dir, CRL_FILE);
  const temporary = `${path}.tmp`;
  await writeFile(temporary, await makeCrl(ca, entries, Date.now()), { mode: 0o644 });
  await rename(temporary, path);
}

async function runRevoke(request: RevokeRequest, context: CommandContext): Promise<number> {
  const ca = await readCa(request.dir);
  let serial = request.serial;
  if (request.certFile !== null) {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(await readFile(request.certFile));
    } catch (error) {
      const why = (error as Error).message;
      throw new UsageError(`cannot read a certificate from ${request.certFile}: ${why}`);
    }
    if (!certificate.checkIssued(new X509Certificate(ca.cert))) {
      throw new UsageError(`${request.certFile} was not made by the CA in ${request.dir}`);
    }
    serial = normalizeSerial(certificate.serialNumber);
  }
  const entries = await readRevoked(request.dir, ca);
  const path = join(request.dir, CRL_FILE);
  if (entries.some((entry) => normalizeSerial(entry.serial) === serial)) {
    context.out(`serial ${serial} is already in ${path}\n`);
    return 0;
  }
  entries.push({ serial: serial!, revokedAtMs: Date.now(), reason: request.reason });
  await writeRevoked(request.dir, ca, entries);
  context.out(
    `revoked serial ${serial} in ${path} (${entries.length} in all); copy it to every member ` +
      'and gateway started with --cluster-crl\n',
  );
  return 0;
}

async function runCerts(argv: readonly string[], context: CommandContext): Promise<number> {
  const request = parseCertsArgs(argv);
  if (request === undefined) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  const { dir } = request;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  if (request.kind === 'revoke') return runRevoke(request, context);
  const nowMs = Date.now();
  if (request.kind === 'ca') {
    if (await exists(join(dir, 'ca.crt'))) {
      context.out(`${join(dir, 'ca.crt')} exists; kept\n`);
      return 0;
    }
    const ca = await makeCa('mq cluster CA', nowMs);
    await writePair(dir, 'ca', ca);
    // An empty list from the start, so processes can be given --cluster-crl before any revoke.
    await writeRevoked(dir, ca, []);
    context.out(`made ${join(dir, 'ca.crt')}, ${join(dir, 'ca.key')} and ${join(dir, CRL_FILE)}\n`);
    return 0;
  }
  const stem = `${request.kind}-${request.name}`;
  if (await exists(join(dir, `${stem}.crt`))) {
    context.out(`${join(dir, `${stem}.crt`)} exists; kept\n`);
    return 0;
  }
  const ca = await readCa(dir);
  const leaf = await makeLeaf(ca, { role: request.kind, name: request.name }, request.hosts, nowMs);
  await writePair(dir, stem, leaf);
  context.out(`made ${join(dir, `${stem}.crt`)} and ${join(dir, `${stem}.key`)}\n`);
  return 0;
}

export const certsCommand: Command = {
  name: 'certs',
  summary: "make the cluster's CA and member and gateway certificates (mutual TLS)",
  usage: USAGE,
  run: runCerts,
};
