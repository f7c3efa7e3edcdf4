import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { ManualClock } from '@spoolmq/protocol';
import { AccountDirectory, hashKey } from '../src/accounts/account-directory.js';
import { createGatewayApp } from '../src/app.js';
import { FakeService, LEASE } from './fake-service.js';
import { call, errorOf, KEY } from './http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});

type CallHeaders = readonly (readonly [string, string])[];

describe('authentication', () => {
  it('requires a Bearer key: missing or malformed is 401 unauthenticated', async () => {
    const variants: (readonly [string, string])[][] = [[], [['Authorization', 'Basic abc']], [['Authorization', 'Bearer']], [['Authorization', 'Bearer a b']], [['Authorization', KEY]]];
    for (const headers of variants) {
      const response = await call(app, 'GET', '/v1/spools/default', { noAuth: true, headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect((await errorOf(response)).kind).toBe('unauthenticated');
    }
    expect(service.calls).toEqual([]);
  });

  it('never takes the key from the query string', async () => {
    const response = await call(app, 'GET', `/v1/spools/default?key=${KEY}&api_key=${KEY}`, { noAuth: true });
    expect(response.status).toBe(401);
  });

  it('accepts the scheme in any case and passes the key to authenticate', async () => {
    const seen: string[] = [];
    app = createGatewayApp(service, { authenticate: async (key) => void seen.push(key) });
    const response = await call(app, 'GET', '/v1/spools/default', { noAuth: true, headers: [['Authorization', 'bearer  k-123']] });
    expect(response.status).toBe(200);
    expect(seen).toEqual(['k-123']);
  });

  it('renders what authenticate rejects with; a blocked key is a 403 without kind', async () => {
    const cases: [MqError, number, string | undefined][] = [
      [new MqError('unauthenticated', 'unknown key'), 401, 'unauthenticated'],
      [new MqError('account_suspended', 'suspended'), 402, 'account_suspended'],
      [new MqError('account_blocked', 'held'), 403, 'account_blocked'],
      [new MqError('key_blocked', 'blocked'), 403, undefined],
    ];
    for (const [error, status, kind] of cases) {
      app = createGatewayApp(service, { authenticate: () => Promise.reject(error) });
      const response = await call(app, 'GET', '/v1/spools/default');
      expect(response.status).toBe(status);
      const body = await errorOf(response);
      expect(body.kind).toBe(kind);
      expect('kind' in body).toBe(kind !== undefined);
      expect(body.message).toBe(error.message);
    }
    expect(service.operations()).toEqual([]);
  });

  it('authenticates before checking the spool or the request', async () => {
    const response = await call(app, 'POST', '/v1/spools/nospool/ack', { noAuth: true, headers: [['Svc-Lease', 'bad']] });
    expect(response.status).toBe(401);
    expect(service.calls).toEqual([]);
  });
});

describe('accounts (AccountDirectory as authenticate)', () => {
  function accountsApp(rate = 0): { app: Hono; directory: AccountDirectory } {
    const directory = new AccountDirectory({ clock: new ManualClock(0) });
    directory.replace({
      version: 1,
      accounts: [
        { id: 'acme', state: 'active', messageSizeMaxBytes: 8, requestsPerSecond: rate, requestBurst: rate },
        { id: 'other', state: 'active', messageSizeMaxBytes: 1024, requestsPerSecond: 0, requestBurst: 0 },
      ],
      keys: [
        { hashHex: hashKey(KEY), accountId: 'acme', blocked: false },
        { hashHex: hashKey('other-key'), accountId: 'other', blocked: false },
      ],
    });
    service.spools.add('acme/default');
    service.queues.add('acme/default/jobs');
    return { app: createGatewayApp(service, { authenticate: (key) => directory.authenticate(key) }), directory };
  }

  it("scopes the path's spool to the key's account and shows the path's name", async () => {
    const { app } = accountsApp();
    const response = await call(app, 'GET', '/v1/spools/default');
    expect(response.status).toBe(200);
    expect(((await response.json()) as { name: string }).name).toBe('default');
    expect(service.callsOf('describeSpool')).toEqual([['acme/default']]);
    const other = await call(app, 'GET', '/v1/spools/default', { noAuth: true, headers: [['Authorization', 'Bearer other-key']] });
    expect(other.status).toBe(200);
    expect(service.callsOf('describeSpool')).toEqual([['acme/default'], ['other/default']]);
  });

  it("never names the account's spool identity in an error", async () => {
    const { app } = accountsApp();
    service.failWith('describeQueue', new MqError('queue_not_found', 'queue jobs of spool acme/default does not exist'));
    const response = await call(app, 'GET', '/v1/spools/default/queues/jobs');
    expect(response.status).toBe(404);
    expect((await errorOf(response)).message).toBe('queue jobs of spool default does not exist');
  });

  it("applies the account's message size limit (413 from Content-Length, nothing sent)", async () => {
    const { app } = accountsApp();
    const response = await call(app, 'POST', '/v1/spools/default/queues/jobs/send', { headers: [['Content-Length', '9']], body: '123456789' });
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({ kind: 'message_too_large', details: { limitBytes: 8 } });
    expect(service.callsOf('send')).toEqual([]);
    const ok = await call(app, 'POST', '/v1/spools/default/queues/jobs/send', { headers: [['Content-Length', '8']], body: '12345678' });
    expect(ok.status).toBe(201);
  });

  it('answers 429 rate_limited with a whole-second Retry-After past the rate, before the operation', async () => {
    const { app } = accountsApp(2);
    expect((await call(app, 'GET', '/v1/spools/default')).status).toBe(200);
    expect((await call(app, 'GET', '/v1/spools/default')).status).toBe(200);
    const refused = await call(app, 'POST', '/v1/spools/default/queues/jobs/send', { headers: [['Content-Length', '1']], body: 'x' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    const body = await errorOf(refused);
    expect(body).toEqual({ kind: 'rate_limited', message: body.message, details: {} });
    expect(service.callsOf('send')).toEqual([]);
  });
});

describe('validation order', () => {
  it('answers 404 for an unknown spool or queue ahead of 400, 411 and 413', async () => {
    const cases: [string, string, CallHeaders, string][] = [
      ['POST', '/v1/spools/nospool/ack', [['Svc-Lease', 'short']], 'spool_not_found'],
      ['POST', '/v1/spools/default/queues/nope/send', [], 'queue_not_found'],
      ['POST', '/v1/spools/default/queues/nope/send', [['Content-Length', '99999999']], 'queue_not_found'],
      ['POST', '/v1/spools/default/queues/nope/send', [['Svc-Delay-Seconds', '-1'], ['Content-Length', '1']], 'queue_not_found'],
      ['POST', '/v1/spools/default/queues/nope/recv?waitSeconds=21', [], 'queue_not_found'],
      ['DELETE', '/v1/spools/default/queues/nope', [], 'queue_not_found'],
      ['DELETE', '/v1/spools/default/queues/nope?mode=soft', [], 'queue_not_found'],
      ['GET', '/v1/spools/default/queues/nope/messages?limit=0', [], 'queue_not_found'],
      ['POST', '/v1/spools/default/ack-and-send', [['Svc-Queue', 'nope'], ['Svc-Lease', LEASE]], 'queue_not_found'],
      ['PUT', '/v1/spools/nospool/queues/new', [['Content-Type', 'text/plain'], ['Content-Length', '2']], 'spool_not_found'],
      ['GET', '/v1/spools/nospool/queues/bad%20name', [], 'spool_not_found'],
    ];
    for (const [method, path, headers, kind] of cases) {
      const response = await call(app, method, path, { headers });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect((await errorOf(response)).kind).toBe(kind);
      expect(service.operations()).toEqual([]);
    }
  });

  it('answers the validation error when the target exists, without calling the operation', async () => {
    const response = await call(app, 'POST', '/v1/spools/default/queues/jobs/send', { headers: [['Content-Length', '99999999']] });
    expect(response.status).toBe(413);
    expect(service.callsOf('checkTarget')).toEqual([['default', 'jobs']]);
    expect(service.operations()).toEqual([]);
  });

  it('does not look the target up for a valid request (the operation answers 404 itself)', async () => {
    service.failWith('describeQueue', new MqError('queue_not_found', 'gone'));
    const response = await call(app, 'GET', '/v1/spools/default/queues/jobs');
    expect(response.status).toBe(404);
    expect(service.callsOf('checkTarget')).toEqual([]);
  });

  it('checks only the spool before refusing a create, whose queue need not exist', async () => {
    const response = await call(app, 'PUT', '/v1/spools/default/queues/new', { headers: [['Content-Type', 'text/plain'], ['Content-Length', '2']], body: '{}' });
    expect(response.status).toBe(415);
    expect(service.callsOf('checkTarget')).toEqual([['default', undefined]]);
  });

  it('refuses a malformed name with 400 invalid_argument (64 characters is too long)', async () => {
    const long = 'q'.repeat(64);
    const queue = await call(app, 'GET', `/v1/spools/default/queues/${long}`);
    expect(queue.status).toBe(400);
    expect(await errorOf(queue)).toMatchObject({ kind: 'invalid_argument', details: { field: 'queue' } });
    const spool = await call(app, 'GET', `/v1/spools/${'s'.repeat(64)}`);
    expect(spool.status).toBe(400);
    expect(await errorOf(spool)).toMatchObject({ kind: 'invalid_argument', details: { field: 'spool' } });
    const ok = await call(app, 'PUT', `/v1/spools/default/queues/${'q'.repeat(63)}`);
    expect(ok.status).toBe(201);
  });

  it('keeps a 404 answer of the lookup only: a 503 from it leaves the validation error', async () => {
    service.failWith('checkTarget', new MqError('unavailable', 'no primary'));
    const response = await call(app, 'POST', '/v1/spools/default/ack', { headers: [['Svc-Lease', 'x']] });
    expect(response.status).toBe(400);
  });
});

