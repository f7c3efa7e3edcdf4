// `mq certs`, revocation included, and `--cluster-crl`: the list is made and extended by the CA,
// loaded at start (a list another CA signed stops the start), and re-read while running (a
// broken file never un-revokes anything).

import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCa, makeCrl, normalizeSerial, readCrl } from '@spoolmq/raft';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchClusterCrl } from '../../src/cluster-crl.js';
import { loadClusterSecurity } from '../../src/cluster-tls-options.js';
import { runCli } from '../../src/index.js';
import { captureIo } from '../io.js';

let dir: string;

async function certs(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo();
  const code = await runCli(['certs', ...args], io.io);
  return { code, out: io.out(), err: io.err() };
}

async function serialOf(file: string): Promise<string> {
  return normalizeSerial(new X509Certificate(await readFile(join(dir, file))).serialNumber);
}

async function revokedSerials(): Promise<string[]> {
  const ca = await readFile(join(dir, 'ca.crt'), 'utf8');
  const entries = await readCrl(await readFile(join(dir, 'revoked.crl'), 'utf8'), ca);
  return entries.map((entry) => normalizeSerial(entry.serial)).sort();
}

/** The choice `mq member --cluster-crl` makes for member n1 of `dir`. */
function memberChoice(crlFile: string) {
  return {
    mode: 'tls' as const,
    caFile: join(dir, 'ca.crt'),
    certFile: join(dir, 'member-n1.crt'),
    keyFile: join(dir, 'member-n1.key'),
    crlFile,
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mq-certs-'));
  expect((await certs('ca', '--dir', dir)).code).toBe(0);
  expect((await certs('member', 'n1', '--dir', dir)).code).toBe(0);
  expect((await certs('member', 'n2', '--dir', dir)).code).toBe(0);
  expect((await certs('gateway', 'gw', '--dir', dir)).code).toBe(0);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mq certs revoke', () => {
  it('starts with an empty list made with the CA, readable by the processes', async () => {
    expect(await revokedSerials()).toEqual([]);
    expect((await stat(join(dir, 'revoked.crl'))).mode & 0o777).toBe(0o644);
  });

  it('adds a certificate by file or by serial, keeping the earlier entries', async () => {
    const gw = await serialOf('gateway-gw.crt');
    const byFile = await certs('revoke', join(dir, 'gateway-gw.crt'), '--dir', dir, '--reason', 'key-compromise');
    expect(byFile.code).toBe(0);
    expect(byFile.out).toContain(`revoked serial ${gw}`);
    expect((await certs('revoke', join(dir, 'gateway-gw.crt'), '--dir', dir)).out).toContain('already');
    expect((await certs('revoke', '--serial', 'AB:CD:01', '--dir', dir)).code).toBe(0);
    expect(await revokedSerials()).toEqual([gw, 'abcd01'].sort());
  });

  it('refuses what it cannot vouch for: a foreign certificate, a bad reason or serial', async () => {
    const other = await mkdtemp(join(tmpdir(), 'mq-certs-other-'));
    try {
      expect((await certs('ca', '--dir', other)).code).toBe(0);
      expect((await certs('member', 'x', '--dir', other)).code).toBe(0);
      const foreign = await certs('revoke', join(other, 'member-x.crt'), '--dir', dir);
      expect(foreign.code).toBe(2);
      expect(foreign.err).toContain('was not made by the CA');
    } finally {
      await rm(other, { recursive: true, force: true });
    }
    expect((await certs('revoke', '--serial', 'xyz', '--dir', dir)).code).toBe(2);
    expect((await certs('revoke', '--serial', 'ab', '--reason', 'bored', '--dir', dir)).code).toBe(2);
    expect((await certs('revoke', '--dir', dir)).code).toBe(2);
  });
});

describe('--cluster-crl', () => {
  it('loads the list at start', async () => {
    const security = await loadClusterSecurity(memberChoice(join(dir, 'revoked.crl')), {
      role: 'member',
      name: 'n1',
    });
    expect(security.mode === 'tls' && security.tls.revoked?.has(await serialOf('gateway-gw.crt'))).toBe(
      true,
    );
  });

  it('stops the start on a list another CA signed', async () => {
    const foreign = join(dir, 'foreign.crl');
    const otherCa = await makeCa('other', Date.now());
    await writeFile(foreign, await makeCrl(otherCa, [], Date.now()));
    await expect(
      loadClusterSecurity(memberChoice(foreign), { role: 'member', name: 'n1' }),
    ).rejects.toThrow(/foreign\.crl: .*not by the cluster's CA/);
  });

  it('applies a changed list while running, and keeps the old one when the new is broken', async () => {
    const file = join(dir, 'running.crl');
    await writeFile(file, await readFile(join(dir, 'revoked.crl')));
    const security = await loadClusterSecurity(memberChoice(file), { role: 'member', name: 'n1' });
    if (security.mode !== 'tls' || security.tls.revoked === undefined) throw new Error('no list');
    const revoked = security.tls.revoked;
    const io = captureIo();
    const stop = watchClusterCrl(file, security, io.io.logger, 20);
    try {
      const n2 = await serialOf('member-n2.crt');
      expect(revoked.has(n2)).toBe(false);
      expect((await certs('revoke', join(dir, 'member-n2.crt'), '--dir', dir)).code).toBe(0);
      await writeFile(file, await readFile(join(dir, 'revoked.crl')));
      await io.waitForLog((record) => String(record['msg']).includes('revocation list changed'));
      expect(revoked.has(n2)).toBe(true);
      await writeFile(file, 'not a list');
      await io.waitForLog((record) => String(record['msg']).includes('refused'));
      expect(revoked.has(n2)).toBe(true);
      expect(revoked.has(await serialOf('gateway-gw.crt'))).toBe(true);
    } finally {
      stop();
    }
  });
});
