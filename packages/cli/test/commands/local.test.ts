import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HOST, DEFAULT_PORT, UsageError, parseLocalArgs, runCli, startLocal } from '../../src/index.js';
import { captureIo } from '../io.js';

const auth = { authorization: 'Bearer anything' };

describe('parseLocalArgs', () => {
  it('defaults to 127.0.0.1:8080', () => {
    expect(parseLocalArgs([], {})).toEqual({ host: DEFAULT_HOST, port: DEFAULT_PORT });
  });

  it('reads MQ_PORT and MQ_HOST, and flags win over them', () => {
    expect(parseLocalArgs([], { MQ_PORT: '9000', MQ_HOST: '0.0.0.0' })).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(parseLocalArgs(['--port', '9001', '--host', '::1'], { MQ_PORT: '9000', MQ_HOST: '0.0.0.0' })).toEqual({
      host: '::1',
      port: 9001,
    });
    expect(parseLocalArgs(['--port=0'], { MQ_PORT: 'bad' })).toEqual({ host: DEFAULT_HOST, port: 0 });
  });

  it('refuses bad values and unknown flags', () => {
    expect(() => parseLocalArgs(['--port', '99999'], {})).toThrow(UsageError);
    expect(() => parseLocalArgs([], { MQ_PORT: '-5' })).toThrow(UsageError);
    expect(() => parseLocalArgs(['--data', 'x'], {})).toThrow(UsageError);
  });

  it('returns undefined for --help', () => {
    expect(parseLocalArgs(['-h'], {})).toBeUndefined();
  });
});

describe('startLocal', () => {
  it('serves the API with any key and closes', async () => {
    const handle = await startLocal({ host: '127.0.0.1', port: 0 });
    try {
      expect(handle.port).toBeGreaterThan(0);
      expect(handle.baseUrl).toBe(`http://127.0.0.1:${handle.port}/v1`);
      const created = await fetch(`${handle.baseUrl}/spools/default/queues/jobs`, { method: 'PUT', headers: auth });
      expect(created.status).toBe(201);
      const unauthenticated = await fetch(`${handle.baseUrl}/spools/default`);
      expect(unauthenticated.status).toBe(401);
      const metrics = await (await fetch(handle.baseUrl.replace(/\/v1$/, '/metrics'))).text();
      expect(metrics).toContain('# TYPE mq_process_event_loop_lag_seconds histogram');
      expect(metrics).toContain('mq_process_gc_pause_seconds_bucket{kind="major",le="+Inf"}');
    } finally {
      await handle.close();
    }
    await expect(fetch(`${handle.baseUrl}/spools/default`, { headers: auth })).rejects.toThrow();
  });

  it('rejects when the port is taken', async () => {
    const first = await startLocal({ host: '127.0.0.1', port: 0 });
    try {
      await expect(startLocal({ host: '127.0.0.1', port: first.port })).rejects.toThrow();
    } finally {
      await first.close();
    }
  });
});

describe('mq local', () => {
  it('logs its address, serves, and on shutdown answers open long polls 204 and exits 0', async () => {
    const c = captureIo();
    const running = runCli(['local', '--port', '0'], c.io);
    const started = await c.waitForLog((record) => typeof record['port'] === 'number');
    const baseUrl = started['baseUrl'] as string;
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(String(started['msg'])).toContain(baseUrl);

    expect((await fetch(`${baseUrl}/spools/default/queues/q`, { method: 'PUT', headers: auth })).status).toBe(201);
    const longPoll = postAndWaitFlushed(`${baseUrl}/spools/default/queues/q/recv?waitSeconds=20`);
    await longPoll.flushed;
    // A full round trip on another connection, started after the poll's bytes were on the wire,
    // lets the server read the poll first: shutdown then finds it parked (or answers it 204).
    expect((await fetch(`${baseUrl}/spools/default`, { headers: auth })).status).toBe(200);
    c.shutdown.abort();
    expect(await longPoll.status).toBe(204);
    expect(await running).toBe(0);
    expect(c.logs.some((record) => record['msg'] === 'mq local stopped')).toBe(true);
  });
});

/** POSTs with an empty body on its own connection; `flushed` resolves once the request is sent. */
function postAndWaitFlushed(url: string): { flushed: Promise<void>; status: Promise<number> } {
  let onFlushed: () => void = () => undefined;
  const flushed = new Promise<void>((resolve) => {
    onFlushed = resolve;
  });
  const status = new Promise<number>((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent: false, headers: { ...auth, 'content-length': 0 } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.on('finish', onFlushed);
    request.end();
  });
  return { flushed, status };
}
