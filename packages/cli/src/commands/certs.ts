// `mq certs`: the cluster's CA and the certificates of its members and gateways, made in
// JavaScript (no openssl needed). Each step writes only what is missing, so the same script can
// run again to add a member; private keys are written 0600 in a directory that is 0700.

import { constants } from 'node:fs';
import { access, chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type PemPair, type PeerRole, identityUri, makeCa, makeLeaf } from '@spoolmq/raft';
import type { Command, CommandContext } from '../command.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: mq certs ca --dir DIR
       mq certs member ID --dir DIR [--host NAME]...
       mq certs gateway NAME --dir DIR [--host NAME]...

Makes the cluster's certificates for mutual TLS between members and gateways.
  ca        DIR/ca.crt and DIR/ca.key: the cluster's CA (kept if present). Keep ca.key secret:
            whoever holds it can make members.
  member    DIR/member-ID.crt and .key for member ID (pass to \`mq member\` with
            --cluster-ca DIR/ca.crt --cluster-cert DIR/member-ID.crt --cluster-key ...key).
  gateway   DIR/gateway-NAME.crt and .key for a gateway.
An existing certificate is kept; delete it to make a new one. Keys are written mode 0600.

Options:
  --dir DIR     Where the files are. Required.
  --host NAME   A DNS name or IPv4 address the process is reached at (repeatable); localhost
                and 127.0.0.1 are always included. Peers check identities, not host names.
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

function parseCertsArgs(argv: readonly string[]): CertsRequest | undefined {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      options: {
        dir: { type: 'string' },
        host: { type: 'string', multiple: true },
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

async function runCerts(argv: readonly string[], context: CommandContext): Promise<number> {
  const request = parseCertsArgs(argv);
  if (request === undefined) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  const { dir } = request;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const nowMs = Date.now();
  if (request.kind === 'ca') {
    if (await exists(join(dir, 'ca.crt'))) {
      context.out(`${join(dir, 'ca.crt')} exists; kept\n`);
      return 0;
    }
    await writePair(dir, 'ca', await makeCa('mq cluster CA', nowMs));
    context.out(`made ${join(dir, 'ca.crt')} and ${join(dir, 'ca.key')}\n`);
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
