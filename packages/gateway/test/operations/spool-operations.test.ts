import type { Hono } from 'hono';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createGatewayApp } from '../../src/app.js';
import { sharedMatchGuard } from '../../src/match-guard.js';
import { counts, FakeService, queueView } from '../fake-service.js';
import { call, errorOf } from '../http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});
afterAll(() => sharedMatchGuard.close());

describe('describe spool', () => {
  it('answers the Spool object with sampledAt and startedAt', async () => {
    const response = await call(app, 'GET', '/v1/spools/default');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      name: 'default',
      queueCount: 2,
      stats: { ...counts(), sampledAt: '2026-11-21T10:00:00.001Z', startedAt: '2026-11-21T10:00:00.000Z' },
    });
  });
});

describe('spool stats', () => {
  it('answers the rollup and a page of queues with stats', async () => {
    const response = await call(app, 'GET', '/v1/spools/default/stats');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { queueCount: number; stats: unknown; queues: { items: { name: string; stats: unknown; createdAt: string }[]; next?: string } };
    expect(body.queueCount).toBe(2);
    expect(body.stats).toEqual(counts());
    expect(body.queues.items[0]).toMatchObject({ name: 'jobs', createdAt: '2026-11-21T10:00:00.000Z', stats: counts(100) });
    expect('next' in body.queues).toBe(false);
    expect(service.callsOf('spoolStats')).toEqual([['default', { limit: 100, after: undefined }]]);
  });

  it('passes repeated queue parameters as a list, with limit, after and match', async () => {
    const response = await call(app, 'GET', '/v1/spools/default/stats?queue=a&queue=b&limit=2&after=c1&match=%5Ejo');
    expect(response.status).toBe(200);
    expect(service.callsOf('spoolStats')).toEqual([['default', { limit: 2, after: 'c1', match: '^jo', queues: ['a', 'b'] }]]);
  });

  it('refuses malformed queue names and too many queue parameters', async () => {
    expect((await call(app, 'GET', `/v1/spools/default/stats?queue=${'q'.repeat(64)}`)).status).toBe(400);
    const many = Array.from({ length: 1001 }, (_, i) => `queue=q${i}`).join('&');
    const response = await call(app, 'GET', `/v1/spools/default/stats?${many}`);
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toMatchObject({ kind: 'invalid_argument', details: { field: 'queue' } });
  });
});

describe('list queues', () => {
  it('answers {items, next} without stats', async () => {
    const response = await call(app, 'GET', '/v1/spools/default/queues?limit=1');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { items: Record<string, unknown>[]; next: string };
    expect(body.next).toBe('cursor-1');
    expect(body.items[0]).toMatchObject({ name: queueView().name, state: 'active' });
    expect('stats' in body.items[0]!).toBe(false);
  });

  it('checks limit, after and match', async () => {
    for (const query of ['limit=0', 'limit=1001', 'limit=+5', 'limit=1e3', 'after=', 'match=(%3F%3Dx)', 'match=(a)%5C1', 'match=%5B', 'queue=a']) {
      const response = await call(app, 'GET', `/v1/spools/default/queues?${query}`);
      expect(response.status, query).toBe(400);
    }
    expect(service.callsOf('listQueues')).toEqual([]);
  });

  it('passes a valid match pattern as a string; an empty one means no filter', async () => {
    await call(app, 'GET', '/v1/spools/default/queues?match=%5Ejobs-%5Cd%2B%24');
    await call(app, 'GET', '/v1/spools/default/queues?match=');
    expect(service.callsOf('listQueues')).toEqual([
      ['default', { limit: 100, after: undefined, match: '^jobs-\\d+$' }],
      ['default', { limit: 100, after: undefined }],
    ]);
  });

  it('answers 404 for an unknown spool even with a bad match', async () => {
    const response = await call(app, 'GET', '/v1/spools/nospool/queues?match=%5B');
    expect(response.status).toBe(404);
    expect((await errorOf(response)).kind).toBe('spool_not_found');
  });
});
