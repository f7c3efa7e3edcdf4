import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { createGatewayApp } from '../../src/app.js';
import { isJsonContentType } from '../../src/operations/queue-operations.js';
import { FakeService } from '../fake-service.js';
import { call, errorOf } from '../http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});

const QUEUE = '/v1/spools/default/queues/jobs';
const NEW = '/v1/spools/default/queues/fresh';

function json(method: string, path: string, body: string, contentType = 'application/json'): Promise<Response> {
  return call(app, method, path, {
    body,
    headers: [['Content-Type', contentType], ['Content-Length', String(Buffer.byteLength(body))]],
  });
}

const QUEUE_JSON = {
  name: 'jobs',
  createdAt: '2026-11-21T10:00:00.000Z',
  state: 'active',
  settings: {
    leaseTimeoutSeconds: 300,
    maxRetries: 10,
    dedupWindowSeconds: 0,
    retentionSeconds: 345_600,
    effectiveRetentionSeconds: 345_600,
    recvRateLimit: { intervalMicros: 0, burst: 0 },
  },
};

describe('describe queue', () => {
  it('answers the Queue object', async () => {
    const response = await call(app, 'GET', QUEUE);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(QUEUE_JSON);
  });
});

describe('create queue', () => {
  it('answers 201 with the Queue object; no body or an empty one means defaults', async () => {
    const bare = await call(app, 'PUT', NEW);
    expect(bare.status).toBe(201);
    expect(await bare.json()).toEqual({ ...QUEUE_JSON, name: 'fresh' });
    const empty = await call(app, 'PUT', NEW, { headers: [['Content-Length', '0']] });
    expect(empty.status).toBe(201);
    expect(service.callsOf('createQueue')).toEqual([
      ['default', 'fresh', {}],
      ['default', 'fresh', {}],
    ]);
  });

  it('passes the validated settings', async () => {
    const body = { leaseTimeoutSeconds: 30, maxRetries: 3, dedupWindowSeconds: 60, retentionSeconds: 3600, recvRateLimit: { intervalMicros: 10_000, burst: 5 } };
    const response = await json('PUT', NEW, JSON.stringify(body), 'application/json; charset=utf-8');
    expect(response.status).toBe(201);
    expect(service.callsOf('createQueue')).toEqual([['default', 'fresh', body]]);
  });

  it('answers 415 for a body that is not application/json', async () => {
    for (const type of ['text/plain', 'application/jsonx', 'application/x-www-form-urlencoded']) {
      const response = await json('PUT', NEW, '{}', type);
      expect(response.status, type).toBe(415);
      expect((await errorOf(response)).kind).toBe('unsupported_media_type');
    }
    const none = await call(app, 'PUT', NEW, { body: new Uint8Array([123, 125]), headers: [['Content-Length', '2']] });
    expect(none.status).toBe(415);
  });

  it('answers invalid_json, unknown_field and invalid_argument from the body', async () => {
    const cases: [string, string, Record<string, unknown>][] = [
      ['{', 'invalid_json', {}],
      ['[]', 'invalid_json', {}],
      ['null', 'invalid_json', {}],
      ['{"maxRetries":1,"colour":"red"}', 'unknown_field', { field: 'colour' }],
      ['{"recvRateLimit":{"intervalMicros":10000,"burst":1,"x":1}}', 'unknown_field', { field: 'recvRateLimit.x' }],
      ['{"retentionSeconds":30}', 'invalid_argument', { field: 'retentionSeconds' }],
      ['{"maxRetries":"3"}', 'invalid_argument', { field: 'maxRetries' }],
    ];
    for (const [body, kind, details] of cases) {
      const response = await json('PUT', NEW, body);
      expect(response.status, body).toBe(400);
      expect(await errorOf(response)).toMatchObject({ kind, details });
    }
    expect(service.callsOf('createQueue')).toEqual([]);
  });

  it('answers 413 for an oversized settings body', async () => {
    const response = await json('PUT', NEW, `{"maxRetries":1${' '.repeat(20_000)}}`);
    expect(response.status).toBe(413);
  });

  it('passes queue_exists, queue_limit and retention_limit through', async () => {
    for (const [kind, status] of [['queue_exists', 409], ['queue_limit', 403], ['retention_limit', 403]] as const) {
      service.failWith('createQueue', new MqError(kind, kind));
      const response = await call(app, 'PUT', NEW);
      expect(response.status).toBe(status);
      expect((await errorOf(response)).kind).toBe(kind);
    }
  });
});

describe('update queue', () => {
  it('answers 200 with the Queue object; {} changes nothing', async () => {
    const response = await json('PATCH', QUEUE, '{}');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(QUEUE_JSON);
    expect(service.callsOf('updateQueue')).toEqual([['default', 'jobs', {}]]);
  });

  it('passes recvRateLimit null to remove the limit', async () => {
    await json('PATCH', QUEUE, '{"recvRateLimit":null,"maxRetries":0}');
    expect(service.callsOf('updateQueue')).toEqual([['default', 'jobs', { recvRateLimit: null, maxRetries: 0 }]]);
  });

  it('refuses retention of 1-59 seconds', async () => {
    const response = await json('PATCH', QUEUE, '{"retentionSeconds":59}');
    expect(await errorOf(response)).toMatchObject({ kind: 'invalid_argument', details: { field: 'retentionSeconds' } });
  });
});

describe('delete queue', () => {
  it('answers 204 when deleted and 202 when accepted', async () => {
    expect((await call(app, 'DELETE', `${QUEUE}?mode=force`)).status).toBe(204);
    expect((await call(app, 'DELETE', `${QUEUE}?mode=drain`)).status).toBe(202);
    expect(service.callsOf('deleteQueue')).toEqual([
      ['default', 'jobs', 'force'],
      ['default', 'jobs', 'drain'],
    ]);
  });

  it('requires mode force or drain', async () => {
    for (const query of ['', '?mode=', '?mode=Force', '?mode=soft', '?mode=force&mode=drain']) {
      const response = await call(app, 'DELETE', `${QUEUE}${query}`);
      expect(response.status, query).toBe(400);
      expect((await errorOf(response)).kind).toBe('invalid_argument');
    }
  });

  it('passes conflict through', async () => {
    service.failWith('deleteQueue', new MqError('conflict', 'lost a race'));
    expect((await call(app, 'DELETE', `${QUEUE}?mode=force`)).status).toBe(409);
  });
});

describe('isJsonContentType', () => {
  it('matches application/json with parameters, in any case', () => {
    expect(isJsonContentType('application/json')).toBe(true);
    expect(isJsonContentType('Application/JSON; charset=utf-8')).toBe(true);
    expect(isJsonContentType(undefined)).toBe(false);
    expect(isJsonContentType('application/problem+json')).toBe(false);
  });
});
