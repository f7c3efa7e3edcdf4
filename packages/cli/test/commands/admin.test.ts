import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError, adminRequest, parseAdminArgs, runCli, startServe, type ServeHandle } from '../../src/index.js';
import { captureIo } from '../io.js';

const request = (...argv: string[]) => adminRequest(parseAdminArgs(argv));

describe('mq admin command lines', () => {
  it('map to admin API requests', () => {
    expect(request('accounts', 'list')).toEqual({ method: 'GET', path: '/accounts' });
    expect(request('accounts', 'create', 'acme', '--plan', 'pro')).toEqual({ method: 'POST', path: '/accounts', body: { id: 'acme', plan: 'pro' } });
    expect(request('accounts', 'suspend', 'acme')).toEqual({ method: 'PATCH', path: '/accounts/acme', body: { state: 'suspended' } });
    expect(request('accounts', 'block', 'acme')).toEqual({ method: 'PATCH', path: '/accounts/acme', body: { state: 'blocked' } });
    expect(request('accounts', 'activate', 'acme')).toEqual({ method: 'PATCH', path: '/accounts/acme', body: { state: 'active' } });
    expect(request('accounts', 'set-plan', 'acme', 'pro')).toEqual({ method: 'PATCH', path: '/accounts/acme', body: { plan: 'pro' } });
    expect(request('keys', 'create', 'acme')).toEqual({ method: 'POST', path: '/accounts/acme/keys' });
    expect(request('keys', 'block', 'k1')).toEqual({ method: 'PATCH', path: '/keys/k1', body: { blocked: true } });
    expect(request('keys', 'unblock', 'k1')).toEqual({ method: 'PATCH', path: '/keys/k1', body: { blocked: false } });
    expect(request('keys', 'revoke', 'k1')).toEqual({ method: 'DELETE', path: '/keys/k1' });
    expect(request('plans', 'set', 'pro', '--rate', '50', '--queues', '10')).toEqual({ method: 'PUT', path: '/plans/pro', body: { requestsPerSecond: 50, queuesPerSpoolMax: 10 } });
    expect(request('spools', 'create', 'acme', 'orders')).toEqual({ method: 'PUT', path: '/accounts/acme/spools/orders' });
    expect(request('spools', 'move', 'acme', 'orders', 'n2')).toEqual({ method: 'POST', path: '/accounts/acme/spools/orders/move', body: { to: 'n2' } });
    expect(request('cluster')).toEqual({ method: 'GET', path: '/cluster' });
    expect(request('members', 'add', 'n4', '10.0.0.4:7001')).toEqual({ method: 'POST', path: '/members', body: { id: 'n4', address: '10.0.0.4:7001' } });
    expect(request('members', 'remove', 'n4')).toEqual({ method: 'DELETE', path: '/members/n4' });
    expect(request('members', 'remove', 'n4', '--allow-shrink')).toEqual({ method: 'DELETE', path: '/members/n4?allowShrink=true' });
    expect(request('spools', 'move-replica', 'acme', 'orders', '--from', 'n1', '--to', 'n4')).toEqual({ method: 'POST', path: '/accounts/acme/spools/orders/move-replica', body: { from: 'n1', to: 'n4' } });
  });

  it('refuses unknown commands, wrong argument counts and bad numbers', () => {
    expect(() => request('accounts', 'explode')).toThrow(UsageError);
    expect(() => request('accounts', 'show')).toThrow(UsageError);
    expect(() => request('plans', 'set', 'p', '--rate', '-3')).toThrow(UsageError);
    expect(() => parseAdminArgs(['--nope'])).toThrow(UsageError);
    expect(() => request('spools', 'move-replica', 'acme', 'orders', '--from', 'n1')).toThrow(/--to MEMBER is required/);
  });
});

describe('mq admin against mq serve', () => {
  let root = '';
  let server: ServeHandle | undefined;
  const token = 't'.repeat(24);

  afterAll(async () => {
    await server?.close();
    if (root !== '') await rm(root, { recursive: true, force: true });
  });

  it('creates an account and prints only its key with -q; the key works at once', async () => {
    root = await mkdtemp(join(tmpdir(), 'mq-admin-test-'));
    server = await startServe({ dataDir: join(root, 'data'), host: '127.0.0.1', port: 0, adminHost: '127.0.0.1', adminPort: 0, adminTokenFile: null, adminToken: token, tls: null, adminTls: null, connectionsPerAddress: 1024 });
    const env = { MQ_ADMIN_TOKEN: token, MQ_ADMIN_URL: `http://127.0.0.1:${server.adminPort}` };
    const c = captureIo(env);
    expect(await runCli(['admin', 'accounts', 'create', 'acme', '-q'], c.io)).toBe(0);
    const key = c.out().trim();
    expect(key).toMatch(/^mqk_/);
    // The key's id, to block or revoke it later, goes to stderr so $(...) gets the key alone.
    expect(c.err()).toMatch(/^key id [0-9a-f]{16}\n$/);
    const response = await fetch(`${server.baseUrl}/spools/default`, { headers: { authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const again = captureIo(env);
    expect(await runCli(['admin', 'accounts', 'create', 'acme'], again.io)).toBe(1);
    expect(JSON.parse(again.out())).toMatchObject({ kind: 'conflict' });
    const wrong = captureIo({ ...env, MQ_ADMIN_TOKEN: 'w'.repeat(24) });
    expect(await runCli(['admin', 'accounts', 'list'], wrong.io)).toBe(1);
    expect(JSON.parse(wrong.out())).toMatchObject({ kind: 'unauthenticated' });
    // Pointed at the public API, or at nothing: one sentence saying where the admin API is.
    const publicPort = captureIo({ ...env, MQ_ADMIN_URL: server.baseUrl.replace(/\/v1$/, '') });
    expect(await runCli(['admin', 'accounts', 'list'], publicPort.io)).toBe(1);
    expect(publicPort.err()).toContain('is not an admin API (it answers like the public API)');
    const nothing = captureIo({ ...env, MQ_ADMIN_URL: 'http://127.0.0.1:1' });
    expect(await runCli(['admin', 'accounts', 'list'], nothing.io)).toBe(1);
    expect(nothing.err()).toMatch(/^mq: no admin API answered at http:\/\/127\.0\.0\.1:1 /);
  }, 60_000);
});
