import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { createGatewayApp } from '../../src/app.js';
import { delivery, FakeService, HANDLE, LEASE, T0_MS } from '../fake-service.js';
import { call, errorOf } from '../http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});

describe('peek and inspect', () => {
  for (const op of ['peek', 'inspect']) {
    it(`${op}: 200 with the payload, id, state, retries and no-store`, async () => {
      const response = await call(app, 'POST', `/v1/spools/default/${op}`, { headers: [['Svc-Handle', HANDLE]] });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/octet-stream');
      expect(response.headers.get('svc-message-id')).toBe('msg-9');
      expect(response.headers.get('svc-message-state')).toBe('failed');
      expect(response.headers.get('svc-retry-count')).toBe('4');
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect([...new Uint8Array(await response.arrayBuffer())]).toEqual([9, 8, 7]);
      expect(service.callsOf('peek')).toEqual([['default', HANDLE]]);
    });
  }

  it('requires Svc-Handle and refuses Svc-Lease', async () => {
    expect((await errorOf(await call(app, 'POST', '/v1/spools/default/peek'))).kind).toBe('invalid_argument');
    const lease = await call(app, 'POST', '/v1/spools/default/peek', { headers: [['Svc-Lease', LEASE]] });
    expect(await errorOf(lease)).toMatchObject({ kind: 'unknown_header', details: { header: 'Svc-Lease' } });
  });

  it('passes 410 through', async () => {
    service.failWith('peek', new MqError('gone', 'stale', { reason: 'stale' }));
    const response = await call(app, 'POST', '/v1/spools/default/peek', { headers: [['Svc-Handle', HANDLE]] });
    expect(response.status).toBe(410);
  });
});

describe('list messages', () => {
  const PATH = '/v1/spools/default/queues/jobs/messages';

  it('answers the page with timestamps and no-store', async () => {
    service.on('listMessages', async () => ({
      items: [{ id: 'm1', state: 'delayed', retries: 1, createdAtMs: T0_MS, visibleAtMs: T0_MS + 1000, handle: HANDLE }],
      next: 'c2',
    }));
    const response = await call(app, 'GET', `${PATH}?state=delayed&limit=5&after=c1&handle=true`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      items: [{ id: 'm1', state: 'delayed', retries: 1, createdAt: '2026-11-21T10:00:00.000Z', visibleAt: '2026-11-21T10:00:01.000Z', handle: HANDLE }],
      next: 'c2',
    });
    expect(service.callsOf('listMessages')).toEqual([['default', 'jobs', { state: 'delayed', limit: 5, after: 'c1', withHandles: true }]]);
  });

  it('defaults to every state, 100 items, no handles', async () => {
    await call(app, 'GET', PATH);
    expect(service.callsOf('listMessages')[0]![2]).toEqual({ limit: 100, after: undefined, withHandles: false });
  });

  it('checks state, limit, after and handle', async () => {
    for (const query of ['state=Visible', 'state=gone', 'limit=0', 'limit=1001', 'after=', `after=${'c'.repeat(257)}`, 'handle=yes', 'match=x']) {
      const response = await call(app, 'GET', `${PATH}?${query}`);
      expect(response.status, query).toBe(400);
      expect((await errorOf(response)).kind).toBe('invalid_argument');
    }
    expect((await call(app, 'GET', `${PATH}?state=unavailable&limit=1000`)).status).toBe(200);
  });
});

describe('failure head', () => {
  const PATH = '/v1/spools/default/queues/jobs/failures/head';

  it('answers 200 with the payload, failure lease, id, retry count and no-store', async () => {
    service.on('failureHead', async () => delivery({ leaseExpiresAtMs: undefined, retries: 10 }));
    const response = await call(app, 'GET', PATH);
    expect(response.status).toBe(200);
    expect(response.headers.get('svc-lease')).toBe(LEASE);
    expect(response.headers.get('svc-message-id')).toBe('msg-1');
    expect(response.headers.get('svc-retry-count')).toBe('10');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect([...new Uint8Array(await response.arrayBuffer())]).toEqual([1, 2, 3]);
  });

  it('answers 204 when the failure queue is empty', async () => {
    const response = await call(app, 'GET', PATH);
    expect(response.status).toBe(204);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});
