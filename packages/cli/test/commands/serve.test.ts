import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVE_DATA_DIR_DEFAULT, UsageError, parseServeArgs, runCli, startServe } from '../../src/index.js';
import { captureIo } from '../io.js';

let auth: Record<string, string> = {};
const ADMIN = { adminHost: '127.0.0.1', adminPort: 0, adminTokenFile: null, adminToken: 'a'.repeat(32), tls: null, adminTls: null, connectionsPerAddress: 1024 };

/** A key of a fresh account on `server` (through its admin backend). */
async function keyOn(server: { member: { admin: { createAccount(id: string, plan?: string): Promise<unknown>; createKey(id: string): Promise<{ key: string }> } } }): Promise<Record<string, string>> {
  await server.member.admin.createAccount('t', undefined);
  return { authorization: `Bearer ${(await server.member.admin.createKey('t')).key}` };
}
const dirs: string[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mq-serve-test-'));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('parseServeArgs', () => {
  it('defaults to ./data on 127.0.0.1:8080', () => {
    expect(parseServeArgs([], {})).toEqual({
      dataDir: SERVE_DATA_DIR_DEFAULT,
      host: '127.0.0.1',
      port: 8080,
      adminHost: '127.0.0.1',
      adminPort: 8081,
      adminTokenFile: join(SERVE_DATA_DIR_DEFAULT, 'admin-token'),
      adminToken: null,
      tls: null,
      adminTls: null,
      connectionsPerAddress: 1024,
    });
  });

  it('takes HTTPS files for the API, and for the admin API (the public pair by default)', () => {
    const pair = ['--tls-cert', 'api.crt', '--tls-key', 'api.key'];
    expect(parseServeArgs(pair, {})).toMatchObject({
      tls: { certFile: 'api.crt', keyFile: 'api.key' },
      adminTls: { certFile: 'api.crt', keyFile: 'api.key' },
    });
    const env = { MQ_ADMIN_TLS_CERT: 'admin.crt', MQ_ADMIN_TLS_KEY: 'admin.key' };
    expect(parseServeArgs(pair, env)).toMatchObject({ adminTls: { certFile: 'admin.crt', keyFile: 'admin.key' } });
    expect(() => parseServeArgs(['--tls-cert', 'api.crt'], {})).toThrow(/go together/);
  });

  it('reads MQ_DATA_DIR, MQ_PORT, MQ_HOST; flags win', () => {
    const env = { MQ_DATA_DIR: '/var/mq', MQ_PORT: '9000', MQ_HOST: '0.0.0.0' };
    expect(parseServeArgs([], env)).toMatchObject({ dataDir: '/var/mq', host: '0.0.0.0', port: 9000 });
    expect(parseServeArgs(['--data', './d', '--port=0', '--host', '::1'], env)).toMatchObject({ dataDir: './d', host: '::1', port: 0 });
    const admin = { MQ_ADMIN_PORT: '9001', MQ_ADMIN_HOST: '::1', MQ_ADMIN_TOKEN: 't'.repeat(16) };
    expect(parseServeArgs(['--admin-port', '9002'], admin)).toMatchObject({ adminPort: 9002, adminHost: '::1', adminToken: 't'.repeat(16), adminTokenFile: null });
    expect(parseServeArgs(['--admin-token-file', '/etc/mq/token'], {})).toMatchObject({ adminTokenFile: '/etc/mq/token', adminToken: null });
    expect(() => parseServeArgs([], { MQ_ADMIN_TOKEN: 'short' })).toThrow(/MQ_ADMIN_TOKEN/);
  });

  it('refuses unknown flags, an empty data directory and bad ports; --help is undefined', () => {
    expect(() => parseServeArgs(['--peers', 'x'], {})).toThrow(UsageError);
    expect(() => parseServeArgs(['--data', ''], {})).toThrow(UsageError);
    expect(() => parseServeArgs([], { MQ_DATA_DIR: '' })).toThrow(/MQ_DATA_DIR/);
    expect(() => parseServeArgs([], { MQ_PORT: '65536' })).toThrow(UsageError);
    expect(parseServeArgs(['-h'], {})).toBeUndefined();
  });
});

describe('startServe', () => {
  it('keeps acknowledged messages across a restart on the same data directory', async () => {
    const dataDir = await tempDir();
    const first = await startServe({ dataDir, host: '127.0.0.1', port: 0, ...ADMIN });
    let lease: string;
    try {
      auth = await keyOn(first);
      expect((await fetch(`${first.baseUrl}/spools/default/queues/jobs`, { method: 'PUT', headers: auth })).status).toBe(201);
      for (const body of ['one', 'two', 'three']) {
        const sent = await fetch(`${first.baseUrl}/spools/default/queues/jobs/send`, { method: 'POST', headers: auth, body });
        expect(sent.status).toBe(201);
      }
      const received = await fetch(`${first.baseUrl}/spools/default/queues/jobs/recv?waitSeconds=0`, { method: 'POST', headers: auth });
      expect(await received.text()).toBe('one');
      lease = received.headers.get('svc-lease')!;
      expect((await fetch(`${first.baseUrl}/spools/default/ack`, { method: 'POST', headers: { ...auth, 'svc-lease': lease } })).status).toBe(204);
      // A second server on the same directory is refused while the first holds it.
      await expect(startServe({ dataDir, host: '127.0.0.1', port: 0, ...ADMIN })).rejects.toThrow();
    } finally {
      await first.close();
    }
    const second = await startServe({ dataDir, host: '127.0.0.1', port: 0, ...ADMIN });
    try {
      const bodies: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const received = await fetch(`${second.baseUrl}/spools/default/queues/jobs/recv?waitSeconds=0`, { method: 'POST', headers: auth });
        if (received.status === 204) break;
        bodies.push(await received.text());
      }
      expect(bodies).toEqual(['two', 'three']);
    } finally {
      await second.close();
    }
  });

  it('exports storage counters on /metrics that move with durable writes', async () => {
    const server = await startServe({ dataDir: await tempDir(), host: '127.0.0.1', port: 0, ...ADMIN });
    try {
      auth = await keyOn(server);
      const metricsUrl = server.baseUrl.replace(/\/v1$/, '/metrics');
      const scrape = async (): Promise<Map<string, number>> => {
        const text = await (await fetch(metricsUrl)).text();
        const values = new Map<string, number>();
        for (const m of text.matchAll(/^(mq_member_storage_[a-z_]+)\{member="n1"\} (\S+)$/gm)) values.set(m[1]!, Number(m[2]));
        for (const m of text.matchAll(/^mq_member_storage_fsync_seconds_bucket\{member="n1",le="\+Inf"\} (\S+)$/gm)) {
          values.set('fsync_seconds_bucket_inf', Number(m[1]));
        }
        return values;
      };
      expect((await fetch(`${server.baseUrl}/spools/default/queues/jobs`, { method: 'PUT', headers: auth })).status).toBe(201);
      const before = await scrape();
      for (const name of [
        'mq_member_storage_fsyncs_total',
        'mq_member_storage_batches_total',
        'mq_member_storage_entries_written_total',
        'mq_member_storage_bytes_written_total',
        'mq_member_storage_fsync_seconds_count',
        'mq_member_storage_fsync_seconds_sum',
      ]) {
        expect(before.has(name), name).toBe(true);
      }
      const body = 'x'.repeat(1000);
      for (let i = 0; i < 5; i += 1) {
        const sent = await fetch(`${server.baseUrl}/spools/default/queues/jobs/send`, { method: 'POST', headers: auth, body });
        expect(sent.status).toBe(201);
      }
      const after = await scrape();
      const grew = (name: string): number => after.get(name)! - before.get(name)!;
      // Each answered send was made durable first: at least one fsync and one entry per send
      // when they come one at a time, and at least the payload bytes.
      expect(grew('mq_member_storage_fsyncs_total')).toBeGreaterThanOrEqual(5);
      expect(grew('mq_member_storage_entries_written_total')).toBeGreaterThanOrEqual(5);
      expect(grew('mq_member_storage_bytes_written_total')).toBeGreaterThanOrEqual(5 * 1000);
      expect(grew('mq_member_storage_batches_total')).toBeGreaterThanOrEqual(grew('mq_member_storage_fsyncs_total'));
      expect(after.get('mq_member_storage_fsync_seconds_count')).toBe(after.get('mq_member_storage_fsyncs_total'));
      expect(after.get('fsync_seconds_bucket_inf')).toBe(after.get('mq_member_storage_fsyncs_total'));
      expect(grew('mq_member_storage_fsync_seconds_sum')).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });

  it('rejects when the port is taken, leaving the data directory usable', async () => {
    const dataDir = await tempDir();
    const first = await startServe({ dataDir: await tempDir(), host: '127.0.0.1', port: 0, ...ADMIN });
    try {
      await expect(startServe({ dataDir, host: '127.0.0.1', port: first.port, ...ADMIN })).rejects.toThrow();
      const again = await startServe({ dataDir, host: '127.0.0.1', port: 0, ...ADMIN });
      await again.close();
    } finally {
      await first.close();
    }
  });
});

describe('mq serve', () => {
  it('logs one start line with its address and data directory, serves, and exits 0 on shutdown', async () => {
    const dataDir = await tempDir();
    const c = captureIo({ MQ_DATA_DIR: dataDir });
    const running = runCli(['serve', '--port', '0', '--admin-port', '0'], c.io);
    const started = await c.waitForLog((record) => typeof record['port'] === 'number');
    expect(started).toMatchObject({ dataDir, variant: 'durable', memberId: 'n1', adminTokenFile: join(dataDir, 'admin-token') });
    const baseUrl = started['baseUrl'] as string;
    // Without an account's key the API answers 401; the admin API (token written to the data
    // directory, mode 0600) makes one.
    expect((await fetch(`${baseUrl}/spools/default`, { headers: { authorization: 'Bearer any' } })).status).toBe(401);
    const token = (await readFile(join(dataDir, 'admin-token'), 'utf8')).trim();
    expect((await stat(join(dataDir, 'admin-token'))).mode & 0o777).toBe(0o600);
    const admin = `http://${started['adminAddress'] as string}/admin/v1`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    expect((await fetch(`${admin}/accounts`, { method: 'POST', headers: { ...headers, authorization: 'Bearer wrong-token-wrong-token' }, body: '{"id":"a"}' })).status).toBe(401);
    expect((await fetch(`${admin}/accounts`, { method: 'POST', headers, body: '{"id":"a"}' })).status).toBe(201);
    const key = (await (await fetch(`${admin}/accounts/a/keys`, { method: 'POST', headers })).json()) as { key: string };
    expect((await fetch(`${baseUrl}/spools/default`, { headers: { authorization: `Bearer ${key.key}` } })).status).toBe(200);
    const metrics = await (await fetch(baseUrl.replace(/\/v1$/, '/metrics'))).text();
    // Nothing naming a spool or an account on the public listener; all of it behind the token.
    expect(metrics).not.toContain('spool=');
    expect(metrics).toContain('mq_member_ready{member="n1"} 1');
    const adminMetrics = await fetch(`http://${started['adminAddress'] as string}/metrics`, { headers });
    expect(await adminMetrics.text()).toContain('mq_member_spool_serving{member="n1",spool="default"');
    expect(metrics).toContain('# TYPE mq_process_event_loop_lag_seconds histogram');
    expect(metrics).toContain('# TYPE mq_process_gc_pause_seconds histogram');
    c.shutdown.abort();
    expect(await running).toBe(0);
    expect(c.logs.some((record) => record['msg'] === 'mq serve stopped')).toBe(true);
  });

  it('exits 2 with the usage for a bad command line', async () => {
    const c = captureIo();
    expect(await runCli(['serve', '--nope'], c.io)).toBe(2);
    expect(c.err()).toContain('Usage: mq serve');
  });
});
