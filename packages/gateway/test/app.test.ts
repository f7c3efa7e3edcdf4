import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { createGatewayApp } from '../src/app.js';
import { FakeService, LEASE } from './fake-service.js';
import { call, errorOf, KEY } from './http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});

describe('routing', () => {
  it('answers 404 not_found as JSON for paths outside the table, before auth', async () => {
    for (const path of ['/', '/v2/spools/default', '/v1', '/v1/spools', '/v1/spools/default/queues/jobs/nope', '/v1/spools/default/']) {
      const response = await call(app, 'GET', path, { noAuth: true });
      expect(response.status, path).toBe(404);
      expect((await errorOf(response)).kind).toBe('not_found');
    }
    expect(service.calls).toEqual([]);
  });

  it('answers 405 method_not_allowed with Allow for a known path, before auth', async () => {
    const cases: [string, string, string][] = [
      ['GET', '/v1/spools/default/ack', 'POST'],
      ['POST', '/v1/spools/default', 'GET'],
      ['POST', '/v1/spools/default/queues/jobs', 'GET, PUT, PATCH, DELETE'],
      ['GET', '/v1/spools/default/queues/jobs/send', 'POST'],
      ['DELETE', '/v1/spools/default/queues/jobs/messages', 'GET'],
      ['POST', '/healthz', 'GET'],
      ['HEAD', '/v1/spools/default/queues/jobs/send', 'POST'],
      ['OPTIONS', '/v1/spools/default', 'GET'],
      ['constructor', '/v1/spools/default', 'GET'],
    ];
    for (const [method, path, allow] of cases) {
      const response = await call(app, method, path, { noAuth: true });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
      // A HEAD answer carries no body.
      if (method !== 'HEAD') expect((await errorOf(response)).kind).toBe('method_not_allowed');
    }
  });

  it('routes every operation of the interface to its service method', async () => {
    const lease = [['Svc-Lease', LEASE]] as const;
    const routes: [string, string, string, CallHeaders?][] = [
      ['GET', '/v1/spools/default', 'describeSpool'],
      ['GET', '/v1/spools/default/stats', 'spoolStats'],
      ['GET', '/v1/spools/default/queues', 'listQueues'],
      ['GET', '/v1/spools/default/queues/jobs', 'describeQueue'],
      ['PUT', '/v1/spools/default/queues/new', 'createQueue'],
      ['PATCH', '/v1/spools/default/queues/jobs', 'updateQueue'],
      ['DELETE', '/v1/spools/default/queues/jobs?mode=force', 'deleteQueue'],
      ['POST', '/v1/spools/default/queues/jobs/send', 'send', [['Content-Length', '0']]],
      ['POST', '/v1/spools/default/queues/jobs/recv?waitSeconds=0', 'receive'],
      ['POST', '/v1/spools/default/ack', 'ack', lease],
      ['POST', '/v1/spools/default/nack', 'nack', lease],
      ['POST', '/v1/spools/default/release', 'release', lease],
      ['POST', '/v1/spools/default/fail', 'fail', lease],
      ['POST', '/v1/spools/default/renew', 'renew', lease],
      ['POST', '/v1/spools/default/peek', 'peek', [['Svc-Handle', LEASE]]],
      ['POST', '/v1/spools/default/inspect', 'peek', [['Svc-Handle', LEASE]]],
      ['POST', '/v1/spools/default/recover', 'recover', lease],
      ['POST', '/v1/spools/default/discard', 'discard', lease],
      ['GET', '/v1/spools/default/queues/jobs/messages', 'listMessages'],
      ['GET', '/v1/spools/default/queues/jobs/failures/head', 'failureHead'],
      ['POST', '/v1/spools/default/queues/jobs/ack-and-send', 'ackAndSend', [...lease, ['Content-Length', '0']]],
      ['POST', '/v1/spools/default/ack-and-send', 'ackAndSend', [...lease, ['Svc-Queue', 'jobs'], ['Content-Length', '0']]],
    ];
    for (const [method, path, serviceMethod, headers] of routes) {
      service.calls.length = 0;
      const response = await call(app, method, path, { headers: headers ?? [] });
      expect(response.status, `${method} ${path}`).toBeLessThan(300);
      expect(service.operations().map((c) => c.method)).toEqual([serviceMethod]);
    }
  });
});

type CallHeaders = readonly (readonly [string, string])[];

describe('errors', () => {
  it('renders service errors with status, kind, message and details unchanged', async () => {
    service.failWith('ack', new MqError('gone', 'no longer', { reason: 'settled' }));
    const response = await call(app, 'POST', '/v1/spools/default/ack', { headers: [['Svc-Lease', LEASE]] });
    expect(response.status).toBe(410);
    expect(await errorOf(response)).toEqual({ kind: 'gone', message: 'no longer', details: { reason: 'settled' } });
  });

  it('renders unexpected exceptions as 500 internal and logs them', async () => {
    const logged: [unknown, string][] = [];
    app = createGatewayApp(service, { logError: (error, context) => void logged.push([error, context.operation]) });
    const boom = new TypeError('boom');
    service.on('describeSpool', () => Promise.reject(boom));
    const response = await call(app, 'GET', '/v1/spools/default');
    expect(response.status).toBe(500);
    const body = await errorOf(response);
    expect(body).toEqual({ kind: 'internal', message: 'internal error', details: {} });
    expect(logged).toEqual([[boom, 'describe_spool']]);
  });
});

describe('probes and metrics', () => {
  it('serves /healthz without auth', async () => {
    const response = await call(app, 'GET', '/healthz', { noAuth: true });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('serves /readyz as 200 iff the service is ready', async () => {
    expect((await call(app, 'GET', '/readyz', { noAuth: true })).status).toBe(200);
    service.readyNow = false;
    const response = await call(app, 'GET', '/readyz', { noAuth: true });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect((await errorOf(response)).kind).toBe('unavailable');
  });

  it('adds readyDetail to /readyz, ready or not', async () => {
    const disk = { alarm: true, freeBytes: 10 };
    const detailed = createGatewayApp(service, { readyDetail: () => ({ disk }) });
    const ready = await call(detailed, 'GET', '/readyz', { noAuth: true });
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', disk });
    service.readyNow = false;
    const response = await call(detailed, 'GET', '/readyz', { noAuth: true });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({
      kind: 'unavailable',
      message: 'not every spool has a known primary',
      details: { disk },
    });
  });

  it('counts requests by operation and status, with a latency histogram', async () => {
    await call(app, 'GET', '/v1/spools/default');
    await call(app, 'GET', '/v1/spools/default');
    await call(app, 'POST', '/v1/spools/default/ack', { headers: [['Svc-Lease', 'x']] });
    await call(app, 'GET', '/nowhere');
    const response = await call(app, 'GET', '/metrics', { noAuth: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toContain('mq_gateway_requests_total{operation="describe_spool",status="200"} 2');
    expect(text).toContain('mq_gateway_requests_total{operation="ack",status="400"} 1');
    expect(text).toContain('mq_gateway_requests_total{operation="unmatched",status="404"} 1');
    expect(text).toContain('mq_gateway_request_duration_seconds_count{operation="describe_spool",status="200"} 2');
    expect(text).toContain('mq_gateway_request_duration_seconds_bucket{operation="describe_spool",status="200",le="+Inf"} 2');
  });

  it('appends metricsExtra to /metrics at every scrape', async () => {
    let scrapes = 0;
    app = createGatewayApp(service, { metricsExtra: () => `mq_test_scrapes ${++scrapes}\n` });
    const first = await (await call(app, 'GET', '/metrics', { noAuth: true })).text();
    expect(first).toContain('mq_gateway_requests_in_flight');
    expect(first.endsWith('mq_test_scrapes 1\n')).toBe(true);
    const second = await (await call(app, 'GET', '/metrics', { noAuth: true })).text();
    expect(second.endsWith('mq_test_scrapes 2\n')).toBe(true);
  });

  it('requires a key for /metrics when it is not public', async () => {
    app = createGatewayApp(service, { metricsPublic: false, authenticate: async (key) => { if (key !== KEY) throw new MqError('unauthenticated', 'no'); } });
    expect((await call(app, 'GET', '/metrics', { noAuth: true })).status).toBe(401);
    expect((await call(app, 'GET', '/metrics')).status).toBe(200);
  });
});

describe('request ids and logs', () => {
  it("echoes a plain X-Request-Id, makes one otherwise, and logs each request with it", async () => {
    const entries: { requestId: string; operation: string; status: number; account: string | undefined }[] = [];
    const errors: unknown[] = [];
    app = createGatewayApp(service, {
      authenticate: () => ({ accountId: 'acme', spoolPrefix: 'acme/', messageSizeMaxBytes: 10 }),
      logRequest: (entry) => entries.push(entry),
      logError: (_error, context) => errors.push(context),
    });
    service.spools.add('acme/default');
    const given = await call(app, 'GET', '/v1/spools/default', { headers: [['X-Request-Id', 'req-42']] });
    expect(given.headers.get('x-request-id')).toBe('req-42');
    const made = await call(app, 'GET', '/v1/spools/default', { headers: [['X-Request-Id', 'not ok!']] });
    const madeId = made.headers.get('x-request-id');
    expect(madeId).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    expect(entries.map((e) => [e.requestId, e.operation, e.status, e.account])).toEqual([
      ['req-42', 'describe_spool', 200, 'acme'],
      [madeId, 'describe_spool', 200, 'acme'],
    ]);
    service.on('describeSpool', () => Promise.reject(new Error('boom')));
    const failed = await call(app, 'GET', '/v1/spools/default', { headers: [['X-Request-Id', 'req-43']] });
    expect(failed.status).toBe(500);
    expect(errors).toEqual([{ operation: 'describe_spool', requestId: 'req-43' }]);
  });
});
