// HTTPS on the public and admin listeners, and a certificate replaced on disk served to new
// connections without a restart; a broken replacement keeps the old one serving.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { createLocalService } from '@spoolmq/member';
import { makeCa, makeLeaf } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { startAdminServer } from '../src/admin/admin-server.js';
import { type RunningServer, startHttpServer } from '../src/server.js';

const servers: RunningServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** The serial number of the certificate a new TLS connection to `port` is shown. */
function servedSerial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ca, servername: 'localhost' }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

async function certFiles() {
  const dir = await mkdtemp(join(tmpdir(), 'mq-listener-tls-'));
  dirs.push(dir);
  const ca = await makeCa('listener CA', Date.now());
  const first = await makeLeaf(ca, { role: 'gateway', name: 'api' }, [], Date.now());
  const second = await makeLeaf(ca, { role: 'gateway', name: 'api' }, [], Date.now());
  const tls = { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
  const install = async (pair: { cert: string; key: string }): Promise<void> => {
    await writeFile(tls.keyFile, pair.key);
    await writeFile(tls.certFile, pair.cert);
  };
  await install(first);
  return { ca, first, second, tls, install };
}

const serialOf = async (pem: string): Promise<string> =>
  new (await import('node:crypto')).X509Certificate(pem).serialNumber;

describe('TLS on the HTTP listeners', () => {
  it('serves the API over HTTPS and reloads a replaced certificate without a restart', async () => {
    const { ca, first, second, tls, install } = await certFiles();
    const events: Array<Error | null> = [];
    const server = await startHttpServer(createLocalService(), {
      port: 0,
      tls,
      onTlsReload: (event) => events.push(event),
    });
    servers.push(server);
    expect(await servedSerial(server.port, ca.cert)).toBe(await serialOf(first.cert));
    expect(server.reloadTls!()).toBe(false); // nothing changed
    await install(second);
    expect(server.reloadTls!()).toBe(true);
    expect(await servedSerial(server.port, ca.cert)).toBe(await serialOf(second.cert));
    // A broken replacement is refused; the last good certificate keeps serving.
    await writeFile(tls.certFile, 'not a certificate');
    expect(server.reloadTls!()).toBe(false);
    expect(events).toEqual([null, expect.any(Error)]);
    expect(await servedSerial(server.port, ca.cert)).toBe(await serialOf(second.cert));
  });

  it('serves the admin API over HTTPS', async () => {
    const { ca, first, tls } = await certFiles();
    const backend = {} as Parameters<typeof startAdminServer>[0];
    const admin = await startAdminServer(backend, { token: 'admin-token-0123456789', host: '127.0.0.1', port: 0, tls });
    servers.push(admin);
    expect(await servedSerial(admin.port, ca.cert)).toBe(await serialOf(first.cert));
  });
});
