import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReceiveRequest, SendRequest } from '@spoolmq/engine';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { delivery, FakeService, LEASE } from './fake-service.js';

let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(service: FakeService, options: { messageSizeMaxBytes?: number } = {}): Promise<RunningServer> {
  server = await startHttpServer(service, { port: 0, ...options });
  return server;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

interface RawResponse {
  readonly status: number;
  readonly head: string;
  readonly body: Buffer;
}

/** Writes `request` verbatim and reads one response (its Content-Length worth of body). */
function rawExchange(port: number, request: string | Buffer): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = data.subarray(0, end).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (data.length < end + 4 + length) return;
      socket.destroy();
      resolve({ status: Number(head.split(' ')[1]), head, body: data.subarray(end + 4, end + 4 + length) });
    });
    socket.on('error', reject);
    socket.write(request);
  });
}

/** One request through node:http; resolves with status, headers and body. */
function request(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers: { authorization: 'Bearer k', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('startHttpServer', () => {
  it('listens on an ephemeral port and serves the API', async () => {
    const running = await start(new FakeService());
    expect(running.port).toBeGreaterThan(0);
    expect(running.host).toBe('127.0.0.1');
    const response = await request(running.port, 'GET', '/healthz');
    expect(response.status).toBe(200);
  });

  it('names every response with X-Request-Id, the client\'s when plain, on success and error', async () => {
    const running = await start(new FakeService());
    const made = await request(running.port, 'GET', '/healthz');
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-z]+$/);
    const given = await request(running.port, 'GET', '/healthz', { 'x-request-id': 'req-7' });
    expect(given.headers['x-request-id']).toBe('req-7');
    const missing = await request(running.port, 'GET', '/nowhere', { 'x-request-id': 'req-8' });
    expect(missing.status).toBe(404);
    expect(missing.headers['x-request-id']).toBe('req-8');
    expect(missing.headers['content-type']).toBe('application/json');
  });

  it('serves the process runtime metrics on /metrics, then what the caller adds', async () => {
    server = await startHttpServer(new FakeService(), { port: 0, metricsExtra: () => 'mq_extra 1\n' });
    const text = (await request(server.port, 'GET', '/metrics')).body.toString('utf8');
    const lag = text.indexOf('# TYPE mq_process_event_loop_lag_seconds histogram');
    const gc = text.indexOf('# TYPE mq_process_gc_pause_seconds histogram');
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(gc).toBeGreaterThan(lag);
    expect(text.indexOf('mq_extra 1\n')).toBeGreaterThan(gc);
  });

  it('keeps idle connections open longer than a load balancer does, and says so', async () => {
    const { port } = await start(new FakeService());
    const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: gateway\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.head).toMatch(/\r\nkeep-alive: timeout=65(\r\n|$)/i);
  });

  it('rejects when the port is taken', async () => {
    const running = await start(new FakeService());
    await expect(startHttpServer(new FakeService(), { port: running.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it('carries all 256 byte values through send and receive', async () => {
    const service = new FakeService();
    let stored: Uint8Array | undefined;
    service.on('send', async (_s, _q, req: SendRequest) => {
      stored = req.payload;
      return { messageId: 'm', duplicate: false };
    });
    service.on('receive', async () => delivery({ payload: stored! }));
    const running = await start(service);
    const payload = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    const sent = await request(running.port, 'POST', '/v1/spools/default/queues/jobs/send', { 'content-length': String(payload.length) }, payload);
    expect(sent.status).toBe(201);
    const received = await request(running.port, 'POST', '/v1/spools/default/queues/jobs/recv?waitSeconds=0');
    expect(received.status).toBe(200);
    expect(received.headers['content-type']).toBe('application/octet-stream');
    expect(received.headers['svc-lease']).toBe(LEASE);
    expect(received.body.equals(payload)).toBe(true);
  });

  it('answers 411 to a chunked send', async () => {
    const service = new FakeService();
    const running = await start(service);
    const response = await rawExchange(
      running.port,
      'POST /v1/spools/default/queues/jobs/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    );
    expect(response.status).toBe(411);
    expect(JSON.parse(response.body.toString()).kind).toBe('length_required');
    expect(service.callsOf('send')).toEqual([]);
  });

  it('answers 413 from Content-Length before any body byte is sent', async () => {
    const service = new FakeService();
    const running = await start(service, { messageSizeMaxBytes: 1_000 });
    // The body is never written: the answer must come from the headers alone.
    const response = await rawExchange(
      running.port,
      'POST /v1/spools/default/queues/jobs/send HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Length: 2000000\r\n\r\n',
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body.toString())).toMatchObject({ kind: 'message_too_large', details: { limitBytes: 1000 } });
    expect(service.callsOf('send')).toEqual([]);
  });

  it('answers oversized headers and malformed requests with the JSON error body', async () => {
    const running = await start(new FakeService());
    const big = await rawExchange(running.port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body.toString())).toMatchObject({ kind: 'invalid_argument', details: { limitBytes: 16_384 } });
    const malformed = await rawExchange(running.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body.toString()).kind).toBe('invalid_argument');
  });

  it('sees a repeated Svc header on the wire', async () => {
    const running = await start(new FakeService());
    const response = await rawExchange(
      running.port,
      `POST /v1/spools/default/ack HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nSvc-Lease: ${LEASE}\r\nsvc-lease: ${LEASE}\r\nContent-Length: 0\r\n\r\n`,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body.toString())).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Lease' } });
  });

  it('aborts the service wait when the client disconnects, and releases a late delivery', async () => {
    const service = new FakeService();
    const entered = deferred<ReceiveRequest>();
    const released = deferred<readonly unknown[]>();
    service.on('receive', (_s, _q, req) => {
      entered.resolve(req);
      return new Promise((resolve) => req.signal?.addEventListener('abort', () => resolve(delivery())));
    });
    service.on('release', async (...args) => released.resolve(args));
    const running = await start(service);
    const req = http.request({ host: '127.0.0.1', port: running.port, method: 'POST', path: '/v1/spools/default/queues/jobs/recv', headers: { authorization: 'Bearer k' } });
    req.on('error', () => undefined);
    req.end();
    const receiveRequest = await entered.promise;
    expect(receiveRequest.signal?.aborted).toBe(false);
    req.destroy();
    expect(await released.promise).toEqual(['default', LEASE, 0]);
    expect(receiveRequest.signal?.aborted).toBe(true);
  });

  it('closes gracefully: long polls end with 204 and close resolves', async () => {
    const service = new FakeService();
    const entered = deferred<void>();
    service.on('receive', (_s, _q, req) => {
      entered.resolve();
      return new Promise((resolve) => req.signal?.addEventListener('abort', () => resolve(null)));
    });
    const running = await start(service);
    const poll = request(running.port, 'POST', '/v1/spools/default/queues/jobs/recv');
    await entered.promise;
    const closed = running.close();
    const response = await poll;
    expect(response.status).toBe(204);
    expect(response.headers.connection).toBe('close');
    await closed;
    await expect(request(running.port, 'GET', '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    server = undefined;
  });

  it('lets a request in flight finish during close', async () => {
    const service = new FakeService();
    const entered = deferred<void>();
    const finish = deferred<void>();
    service.on('ack', async () => {
      entered.resolve();
      await finish.promise;
    });
    const running = await start(service);
    const ack = request(running.port, 'POST', '/v1/spools/default/ack', { 'svc-lease': LEASE });
    await entered.promise;
    const closed = running.close();
    finish.resolve();
    expect((await ack).status).toBe(204);
    await closed;
    server = undefined;
  });
});
