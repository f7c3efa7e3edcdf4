import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { type AdminAuditRecord, createAdminApp } from '../../src/admin/admin-app.js';
import { startAdminServer } from '../../src/admin/admin-server.js';
import type { AdminAccount, AdminBackend } from '@spoolmq/protocol';

const TOKEN = 'admin-token-0123456789';
const ACCOUNT: AdminAccount = { id: 'acme', state: 'active', plan: 'default', spools: ['default'], keys: [] };

/** Records every backend call; `fail` makes the next call reject. */
function backend(): { calls: unknown[][]; backend: AdminBackend; fail: (error: MqError) => void } {
  const calls: unknown[][] = [];
  let failure: MqError | null = null;
  const record =
    <T>(name: string, answer: T) =>
    async (...args: unknown[]): Promise<T> => {
      calls.push([name, ...args]);
      if (failure !== null) {
        const error = failure;
        failure = null;
        throw error;
      }
      return answer;
    };
  const plan = { queuesPerSpoolMax: 1, retentionLimitSeconds: 1, retentionDefaultSeconds: 1, messagesPerSpoolMax: 1, payloadBytesPerSpoolMax: 1, messageSizeMaxBytes: 1, dedupKeysPerSpoolMax: 1, requestsPerSecond: 0, requestBurst: 0 };
  const spool = { account: 'acme', name: 'default', replicas: ['n1'], primary: 'n1' };
  return {
    calls,
    fail: (error) => (failure = error),
    backend: {
      listAccounts: record('listAccounts', [ACCOUNT]),
      account: record('account', ACCOUNT),
      createAccount: record('createAccount', ACCOUNT),
      updateAccount: record('updateAccount', ACCOUNT),
      createKey: record('createKey', { id: 'abcd', accountId: 'acme', blocked: false, key: 'mqk_x' }),
      setKeyBlocked: record('setKeyBlocked', { id: 'abcd', accountId: 'acme', blocked: true }),
      revokeKey: record('revokeKey', undefined),
      listPlans: record('listPlans', { default: plan }),
      putPlan: record('putPlan', plan),
      createSpool: record('createSpool', spool),
      deleteSpool: record('deleteSpool', undefined),
      cluster: record('cluster', { members: ['n1'], metaLeader: 'n1', spools: [spool] }),
      moveSpool: record('moveSpool', spool),
      moveReplica: record('moveReplica', spool),
      addMember: record('addMember', { members: ['n1', 'n2'], metaLeader: 'n1', spools: [] }),
      removeMember: record('removeMember', { members: ['n1'], metaLeader: 'n1', spools: [] }),
    },
  };
}

function call(app: ReturnType<typeof createAdminApp>, method: string, path: string, body?: string, token = TOKEN): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== '') headers['authorization'] = `Bearer ${token}`;
  return Promise.resolve(app.request(`http://admin.test/admin/v1${path}`, { method, headers, ...(body === undefined ? {} : { body }) }));
}

describe('admin app', () => {
  it('refuses a missing or wrong admin token with 401, and a short token at start-up', async () => {
    const { backend: b, calls } = backend();
    const app = createAdminApp(b, { token: TOKEN });
    expect((await call(app, 'GET', '/accounts', undefined, '')).status).toBe(401);
    expect((await call(app, 'GET', '/accounts', undefined, 'wrong-token-wrong-token')).status).toBe(401);
    expect(calls).toEqual([]);
    expect(() => createAdminApp(b, { token: 'short' })).toThrow(/at least 16/);
  });

  it('maps every route to the backend with the parsed arguments', async () => {
    const { backend: b, calls } = backend();
    const app = createAdminApp(b, { token: TOKEN });
    const expectations: [string, string, string | undefined, number, unknown[]][] = [
      ['GET', '/accounts', undefined, 200, ['listAccounts']],
      ['POST', '/accounts', '{"id":"acme","plan":"pro"}', 201, ['createAccount', 'acme', 'pro']],
      ['GET', '/accounts/acme', undefined, 200, ['account', 'acme']],
      ['PATCH', '/accounts/acme', '{"state":"suspended"}', 200, ['updateAccount', 'acme', { state: 'suspended' }]],
      ['POST', '/accounts/acme/keys', undefined, 201, ['createKey', 'acme']],
      ['PATCH', '/keys/abcd', '{"blocked":true}', 200, ['setKeyBlocked', 'abcd', true]],
      ['DELETE', '/keys/abcd', undefined, 204, ['revokeKey', 'abcd']],
      ['GET', '/plans', undefined, 200, ['listPlans']],
      ['PUT', '/plans/pro', '{"requestsPerSecond":10}', 200, ['putPlan', 'pro', { requestsPerSecond: 10 }]],
      ['PUT', '/accounts/acme/spools/orders', undefined, 201, ['createSpool', 'acme', 'orders']],
      ['DELETE', '/accounts/acme/spools/orders', undefined, 204, ['deleteSpool', 'acme', 'orders']],
      ['POST', '/accounts/acme/spools/default/move', '{"to":"n2"}', 200, ['moveSpool', 'acme', 'default', 'n2']],
      ['GET', '/cluster', undefined, 200, ['cluster']],
      ['POST', '/members', '{"id":"n2","address":"h:7002"}', 200, ['addMember', 'n2', 'h:7002']],
      ['DELETE', '/members/n2', undefined, 200, ['removeMember', 'n2', { allowShrink: false }]],
      ['DELETE', '/members/n2?allowShrink=true', undefined, 200, ['removeMember', 'n2', { allowShrink: true }]],
      ['POST', '/accounts/acme/spools/default/move-replica', '{"from":"n1","to":"n4"}', 200, ['moveReplica', 'acme', 'default', 'n1', 'n4']],
    ];
    for (const [method, path, body, status, expected] of expectations) {
      const response = await call(app, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(status);
      expect(calls.at(-1)).toEqual(expected);
    }
  });

  it('refuses bad bodies with the public kinds, and renders backend errors', async () => {
    const { backend: b, calls, fail } = backend();
    const app = createAdminApp(b, { token: TOKEN });
    const bad: [string, string, string, string][] = [
      ['POST', '/accounts', '{}', 'invalid_argument'],
      ['POST', '/accounts', '{"id":"a","extra":1}', 'unknown_field'],
      ['POST', '/accounts', 'nope', 'invalid_json'],
      ['PATCH', '/accounts/acme', '{"state":"frozen"}', 'invalid_argument'],
      ['PATCH', '/keys/abcd', '{"blocked":"yes"}', 'invalid_argument'],
      ['PUT', '/plans/pro', '{"requestsPerSecond":-1}', 'invalid_argument'],
      ['PUT', '/plans/pro', '{"colour":1}', 'unknown_field'],
      ['POST', '/accounts/acme/spools/default/move', '{}', 'invalid_argument'],
      ['POST', '/members', '{"id":"n2"}', 'invalid_argument'],
      ['POST', '/accounts/acme/spools/default/move-replica', '{"to":"n4"}', 'invalid_argument'],
      ['POST', '/accounts/acme/spools/default/move-replica', '{"from":"n1"}', 'invalid_argument'],
      ['POST', '/accounts/acme/spools/default/move-replica', '{"from":"n1","to":"n4","x":1}', 'unknown_field'],
      ['DELETE', '/members/n2?allowShrink=maybe', '', 'invalid_argument'],
    ];
    for (const [method, path, body, kind] of bad) {
      const response = await call(app, method, path, body);
      expect(response.status, `${method} ${path} ${body}`).toBe(400);
      expect(((await response.json()) as { kind: string }).kind).toBe(kind);
    }
    expect(calls).toEqual([]);
    fail(new MqError('conflict', 'account acme already exists'));
    const conflict = await call(app, 'POST', '/accounts', '{"id":"acme"}');
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toEqual({ kind: 'conflict', message: 'account acme already exists', details: {} });
    expect((await call(app, 'GET', '/nothing')).status).toBe(404);
  });
});

describe('the admin audit log', () => {
  it('records every change and every refused token with the client address, never a secret', async () => {
    const records: AdminAuditRecord[] = [];
    const server = await startAdminServer(backend().backend, {
      token: TOKEN,
      host: '127.0.0.1',
      port: 0,
      audit: (record) => records.push(record),
    });
    try {
      const url = `http://127.0.0.1:${server.port}/admin/v1`;
      const auth = { authorization: `Bearer ${TOKEN}` };
      await fetch(`${url}/accounts`, { headers: auth });
      const created = await fetch(`${url}/accounts/acme/keys`, { method: 'POST', headers: auth });
      expect(created.status).toBe(201);
      await fetch(`${url}/accounts/acme`, { method: 'PATCH', headers: auth, body: JSON.stringify({ state: 'blocked' }) });
      await fetch(`${url}/accounts/acme`, { method: 'PATCH', headers: auth, body: JSON.stringify({ nope: 1 }) });
      await fetch(`${url}/accounts`, { headers: { authorization: 'Bearer guess-0123456789abcdef' } });
      expect(records).toEqual([
        { event: 'admin_change', method: 'POST', path: '/admin/v1/accounts/acme/keys', client: '127.0.0.1', status: 201 },
        {
          event: 'admin_change',
          method: 'PATCH',
          path: '/admin/v1/accounts/acme',
          client: '127.0.0.1',
          status: 200,
          body: { state: 'blocked' },
        },
        { event: 'admin_login_failed', method: 'GET', path: '/admin/v1/accounts', client: '127.0.0.1' },
      ]);
      const text = JSON.stringify(records);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('guess-0123456789abcdef');
      expect(text).not.toContain('mqk_x');
    } finally {
      await server.close();
    }
  });
});
