// Certificates for the clusters the scripts start (`npm run cluster`, benchmarks): a CA and one
// certificate per process under `dir`, made once and kept (mutual TLS on every link, as in
// production), and the CA's revocation list (empty until `mq certs revoke ... --dir` adds to it).
// Returns each process's `--cluster-*` flags by name.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeCa, makeCrl, makeLeaf } from '../packages/raft/dist/index.js';

/**
 * @param {string} dir
 * @param {readonly string[]} members member ids
 * @param {readonly string[]} gateways gateway names
 * @returns {Promise<Map<string, string[]>>} `--cluster-ca ... --cluster-key ...` by id or name
 */
export async function clusterCertFlags(dir, members, gateways) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const caCert = join(dir, 'ca.crt');
  const caKey = join(dir, 'ca.key');
  const nowMs = Date.now();
  if (!existsSync(caCert)) {
    const ca = await makeCa('mq cluster CA', nowMs);
    writeFileSync(caKey, ca.key, { mode: 0o600 });
    writeFileSync(caCert, ca.cert);
  }
  const ca = { cert: readFileSync(caCert, 'utf8'), key: readFileSync(caKey, 'utf8') };
  const crl = join(dir, 'revoked.crl');
  if (!existsSync(crl)) writeFileSync(crl, await makeCrl(ca, [], nowMs));
  const flags = new Map();
  const holders = [
    ...members.map((name) => ({ role: 'member', name })),
    ...gateways.map((name) => ({ role: 'gateway', name })),
  ];
  for (const { role, name } of holders) {
    const stem = join(dir, `${role}-${name}`);
    if (!existsSync(`${stem}.crt`)) {
      const leaf = await makeLeaf(ca, { role, name }, [], nowMs);
      writeFileSync(`${stem}.key`, leaf.key, { mode: 0o600 });
      writeFileSync(`${stem}.crt`, leaf.cert);
    }
    flags.set(name, [
      '--cluster-ca', caCert,
      '--cluster-cert', `${stem}.crt`,
      '--cluster-key', `${stem}.key`,
      '--cluster-crl', crl,
    ]);
  }
  return flags;
}
