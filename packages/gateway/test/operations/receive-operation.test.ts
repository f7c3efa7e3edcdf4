import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError, type ReceiveRequest } from '@spoolmq/engine';
import { createGatewayApp } from '../../src/app.js';
import { delivery, FakeService, LEASE } from '../fake-service.js';
import { call, errorOf } from '../http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});

const RECV = '/v1/spools/default/queues/jobs/recv';

function receiveRequest(): ReceiveRequest {
  const calls = service.callsOf('receive');
  expect(calls).toHaveLength(1);
  expect(calls[0]!.slice(0, 2)).toEqual(['default', 'jobs']);
  return calls[0]![2] as ReceiveRequest;
}

/** Resolves when the signal passed to the service aborts, with null. */
function waitForAbort(request: ReceiveRequest): Promise<null> {
  return new Promise((resolve) => {
    if (request.signal?.aborted === true) resolve(null);
    request.signal?.addEventListener('abort', () => resolve(null));
  });
}

describe('receive', () => {
  it('answers 200 with the payload and the delivery headers', async () => {
    const payload = Uint8Array.from({ length: 256 }, (_, i) => i);
    service.on('receive', async () => delivery({ payload }));
    const response = await call(app, 'POST', RECV);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/octet-stream');
    expect(response.headers.get('svc-lease')).toBe(LEASE);
    expect(response.headers.get('svc-message-id')).toBe('msg-1');
    expect(response.headers.get('svc-message-retries')).toBe('2');
    expect(response.headers.get('svc-lease-expires-at')).toBe('2026-11-21T10:05:00.000Z');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(Buffer.from(payload));
  });

  it('omits Svc-Lease-Expires-At when the queue has no lease timeout', async () => {
    service.on('receive', async () => delivery({ leaseExpiresAtMs: undefined }));
    const response = await call(app, 'POST', RECV);
    expect(response.headers.has('svc-lease-expires-at')).toBe(false);
  });

  it('answers 204 with no body when nothing arrived', async () => {
    const response = await call(app, 'POST', `${RECV}?waitSeconds=0`);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect(receiveRequest().waitMs).toBe(0);
  });

  it('waits 20 seconds by default and accepts 0-20', async () => {
    await call(app, 'POST', RECV);
    expect(receiveRequest().waitMs).toBe(20_000);
    for (const bad of ['21', '-1', '1.5', 'x', '']) {
      const response = await call(app, 'POST', `${RECV}?waitSeconds=${bad}`);
      expect(response.status, bad).toBe(400);
      expect(await errorOf(response)).toMatchObject({ kind: 'invalid_argument', details: { field: 'waitSeconds' } });
    }
  });

  it('takes no Svc headers', async () => {
    const response = await call(app, 'POST', RECV, { headers: [['Svc-Lease', LEASE]] });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).kind).toBe('unknown_header');
  });

  it('aborts the service wait when the client goes away', async () => {
    const client = new AbortController();
    let seen: ReceiveRequest | undefined;
    service.on('receive', (_spool, _queue, request) => {
      seen = request;
      client.abort();
      return waitForAbort(request);
    });
    await call(app, 'POST', RECV, { signal: client.signal }).catch(() => undefined);
    expect(seen?.signal?.aborted).toBe(true);
  });

  it('releases at once, without a retry, a delivery that arrives after the client left', async () => {
    const client = new AbortController();
    service.on('receive', async () => {
      client.abort();
      return delivery();
    });
    await call(app, 'POST', RECV, { signal: client.signal }).catch(() => undefined);
    expect(service.callsOf('release')).toEqual([['default', LEASE, 0]]);
  });

  it('ends a long poll with 204 on shutdown, and answers later ones at once', async () => {
    const shutdown = new AbortController();
    app = createGatewayApp(service, { shutdownSignal: shutdown.signal });
    service.on('receive', (_spool, _queue, request) => {
      shutdown.abort();
      return waitForAbort(request);
    });
    const response = await call(app, 'POST', RECV);
    expect(response.status).toBe(204);
    expect(response.headers.get('connection')).toBe('close');
    const later = await call(app, 'POST', RECV);
    expect(later.status).toBe(204);
    expect(service.callsOf('receive')).toHaveLength(1);
  });

  it('passes queue errors through', async () => {
    service.failWith('receive', new MqError('queue_deleting', 'deleting'));
    const response = await call(app, 'POST', RECV);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).kind).toBe('queue_deleting');
  });
});
