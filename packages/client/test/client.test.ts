// The client against a scripted fetch: request shapes, response parsing, and the send retry
// rules of the interface. Sleeps are recorded, not waited, and advance a fake clock.

import { describe, expect, it } from 'vitest';
import { MqClient, MqClientError, MqTransportError, decodeText } from '../src/index.js';
import { type Step, created, errorReply, fakeFetch, noResponse, queueJson, reply } from './fake-fetch.js';

interface Rig {
  readonly client: MqClient;
  readonly requests: ReturnType<typeof fakeFetch>['requests'];
  readonly sleeps: number[];
  remaining(): number;
}

function rig(steps: readonly Step[], options: { retries?: number; baseDelayMs?: number } = {}): Rig {
  const fake = fakeFetch(steps);
  const sleeps: number[] = [];
  let clockMs = 1_000_000;
  let keys = 0;
  const client = new MqClient({
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: 'k1',
    fetch: fake.fetch,
    sendRetry: { retries: options.retries ?? 3, baseDelayMs: options.baseDelayMs ?? 100, maxDelayMs: 5_000 },
    sleep: async (delayMs, signal) => {
      if (signal?.aborted === true) throw signal.reason;
      sleeps.push(delayMs);
      clockMs += delayMs;
    },
    random: () => 0.5,
    nowMs: () => clockMs,
    newDedupKey: () => `auto-key-${++keys}`,
  });
  return { client, requests: fake.requests, sleeps, remaining: fake.remaining };
}

const sendsOf = (r: Rig) => r.requests.filter((q) => q.url.endsWith('/send') || q.url.includes('/send?'));

describe('request shapes', () => {
  it('sends the bearer key, the raw payload and the send headers', async () => {
    const r = rig([reply(201, { 'svc-message-id': 'm1', 'svc-handle': 'h'.repeat(20) })]);
    const result = await r.client.send('jobs', 'hello', { delaySeconds: 5, handle: true, retries: 0 });
    expect(result).toEqual({ messageId: 'm1', handle: 'h'.repeat(20), duplicate: false });
    const [request] = r.requests;
    expect(request?.url).toBe('http://127.0.0.1:9/v1/spools/default/queues/jobs/send?handle=true');
    expect(request?.method).toBe('POST');
    expect(request?.headers['authorization']).toBe('Bearer k1');
    expect(request?.headers['content-type']).toBe('application/octet-stream');
    expect(request?.headers['svc-delay-seconds']).toBe('5');
    expect(decodeText(request?.body ?? new Uint8Array())).toBe('hello');
  });

  it('reads a dedup hit (200) as a duplicate with the original id', async () => {
    const r = rig([reply(200, { 'svc-message-id': 'orig' })]);
    const result = await r.client.send('jobs', new Uint8Array([1, 2]), { dedupKey: 'k', retries: 0 });
    expect(result).toEqual({ messageId: 'orig', duplicate: true });
    expect(r.requests[0]?.headers['svc-dedup-string']).toBe('k');
  });

  it('refuses both dedup forms at once without sending', async () => {
    const r = rig([]);
    await expect(r.client.send('q', 'x', { dedupKey: 'a', dedupHash: '0'.repeat(32) })).rejects.toThrow(TypeError);
    expect(r.requests).toHaveLength(0);
  });

  it('parses a delivery and an empty receive', async () => {
    const r = rig([
      reply(
        200,
        {
          'svc-lease': 'L'.repeat(20),
          'svc-message-id': 'm9',
          'svc-message-retries': '2',
          'svc-lease-expires-at': '2026-01-01T00:05:00.000Z',
        },
        'payload',
      ),
      reply(204),
    ]);
    const delivery = await r.client.receive('jobs', { waitSeconds: 3 });
    expect(delivery).not.toBeNull();
    expect(decodeText(delivery?.body ?? new Uint8Array())).toBe('payload');
    expect(delivery?.lease).toBe('L'.repeat(20));
    expect(delivery?.retries).toBe(2);
    expect(delivery?.leaseExpiresAt).toBe('2026-01-01T00:05:00.000Z');
    expect(r.requests[0]?.url).toBe('http://127.0.0.1:9/v1/spools/default/queues/jobs/recv?waitSeconds=3');
    expect(await r.client.receive('jobs', { waitSeconds: 0 })).toBeNull();
  });

  it('puts lease operations on the spool path with the token in Svc-Lease', async () => {
    const r = rig([reply(204), reply(204), reply(204), reply(204), reply(204, { 'svc-lease-expires-at': 'T' })]);
    await r.client.ack('lease-aaaaaaaaaaaaa');
    await r.client.nack('lease-aaaaaaaaaaaaa');
    await r.client.release('lease-aaaaaaaaaaaaa', { delayMs: 1_500 });
    await r.client.fail('lease-aaaaaaaaaaaaa');
    expect(await r.client.renew('lease-aaaaaaaaaaaaa')).toEqual({ leaseExpiresAt: 'T' });
    const paths = r.requests.map((q) => new URL(q.url).pathname);
    expect(paths).toEqual([
      '/v1/spools/default/ack',
      '/v1/spools/default/nack',
      '/v1/spools/default/release',
      '/v1/spools/default/fail',
      '/v1/spools/default/renew',
    ]);
    expect(r.requests.every((q) => q.headers['svc-lease'] === 'lease-aaaaaaaaaaaaa')).toBe(true);
    expect(r.requests[2]?.headers['svc-delay']).toBe('1500ms');
  });

  it('sends handles and failure leases to recover and discard', async () => {
    const r = rig([reply(204), reply(204), reply(204)]);
    await r.client.recover({ handle: 'h'.repeat(16) }, { delaySeconds: 7 });
    await r.client.recover({ lease: 'f'.repeat(16) });
    await r.client.discard({ handle: 'h'.repeat(16) });
    expect(r.requests[0]?.headers['svc-handle']).toBe('h'.repeat(16));
    expect(r.requests[0]?.headers['svc-delay-seconds']).toBe('7');
    expect(r.requests[1]?.headers['svc-lease']).toBe('f'.repeat(16));
    expect(r.requests[1]?.headers['svc-handle']).toBeUndefined();
    expect(new URL(r.requests[2]?.url ?? '').pathname).toBe('/v1/spools/default/discard');
  });

  it('uses both ack-and-send forms', async () => {
    const r = rig([created('n1'), created('n2')]);
    await r.client.ackAndSend('l'.repeat(16), 'next', 'a', { delayMs: 60_000, handle: true });
    await r.client.ackAndSend('l'.repeat(16), 'next', 'b', { form: 'header', dedupKey: 'd' });
    expect(r.requests[0]?.url).toBe('http://127.0.0.1:9/v1/spools/default/queues/next/ack-and-send?handle=true');
    expect(r.requests[0]?.headers['svc-delay']).toBe('60s');
    expect(r.requests[1]?.url).toBe('http://127.0.0.1:9/v1/spools/default/ack-and-send');
    expect(r.requests[1]?.headers['svc-queue']).toBe('next');
    expect(r.requests[1]?.headers['svc-dedup-string']).toBe('d');
  });

  it('encodes list and stats queries, repeating queue filters', async () => {
    const page = JSON.stringify({ queueCount: 0, stats: {}, queues: { items: [] } });
    const r = rig([reply(200, {}, page), reply(200, {}, JSON.stringify({ items: [] }))]);
    await r.client.forSpool('s:1').stats({ queues: ['a', 'b'], limit: 5, match: '^a' });
    await r.client.listMessages('q', { state: 'failed', handle: true, after: 'c1' });
    expect(r.requests[0]?.url).toBe('http://127.0.0.1:9/v1/spools/s:1/stats?queue=a&queue=b&limit=5&match=%5Ea');
    expect(r.requests[1]?.url).toBe(
      'http://127.0.0.1:9/v1/spools/default/queues/q/messages?state=failed&after=c1&handle=true',
    );
  });

  it('walks pages until next is absent', async () => {
    const q = (name: string) => ({ name, createdAt: 'x', state: 'active', settings: { dedupWindowSeconds: 0 } });
    const r = rig([
      reply(200, {}, JSON.stringify({ items: [q('a'), q('b')], next: 'c1' })),
      reply(200, {}, JSON.stringify({ items: [q('c')] })),
    ]);
    const names: string[] = [];
    for await (const queue of r.client.queues({ limit: 2 })) names.push(queue.name);
    expect(names).toEqual(['a', 'b', 'c']);
    expect(r.requests[1]?.url).toContain('after=c1');
  });

  it('creates with a JSON body and maps delete statuses', async () => {
    const r = rig([queueJson('q', 0), reply(202), reply(204)]);
    const queue = await r.client.createQueue('q', { maxRetries: 2 });
    expect(queue.name).toBe('q');
    expect(r.requests[0]?.method).toBe('PUT');
    expect(r.requests[0]?.headers['content-type']).toBe('application/json');
    expect(decodeText(r.requests[0]?.body ?? new Uint8Array())).toBe('{"maxRetries":2}');
    expect(await r.client.deleteQueue('q', 'drain')).toBe('accepted');
    expect(await r.client.deleteQueue('q', 'force')).toBe('deleted');
    expect(r.requests[2]?.url).toContain('mode=force');
  });

  it('turns an error body into a typed error', async () => {
    const r = rig([
      reply(
        409,
        { 'content-type': 'application/json' },
        JSON.stringify({ kind: 'dedup_claimed', message: 'taken', details: { messageId: 'm0' } }),
      ),
    ]);
    const error = await r.client.ackAndSend('l'.repeat(16), 'q', 'x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MqClientError);
    expect(error).toMatchObject({ status: 409, kind: 'dedup_claimed', message: 'taken', details: { messageId: 'm0' } });
  });

  it('turns a failed connection into a transport error', async () => {
    const r = rig([noResponse()]);
    const error = await r.client.describeSpool().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MqTransportError);
    expect((error as MqTransportError).transport).toBe(true);
  });
});

describe('send retry rules', () => {
  it('retries 429 after the Retry-After seconds', async () => {
    const r = rig([queueJson('q', 0), errorReply(429, 'rate_limited', { 'retry-after': '2' }), created('m1')]);
    expect((await r.client.send('q', 'x')).messageId).toBe('m1');
    expect(r.sleeps).toEqual([2_000]);
    expect(sendsOf(r)).toHaveLength(2);
  });

  it('retries 507 storage_full (a disk alarm) after its Retry-After; spool_full is a verdict', async () => {
    const r = rig([queueJson('q', 0), errorReply(507, 'storage_full', { 'retry-after': '5' }), created('m2')]);
    expect((await r.client.send('q', 'x')).messageId).toBe('m2');
    expect(r.sleeps).toEqual([5_000]);
    expect(sendsOf(r)).toHaveLength(2);
  });

  it('retries 503 and 409 dedup_in_flight with backoff', async () => {
    const r = rig([queueJson('q', 0), errorReply(503, 'unavailable'), errorReply(409, 'dedup_in_flight'), created('m')]);
    await r.client.send('q', 'x');
    // random 0.5: step/2 + step/4 of 100 ms then 200 ms.
    expect(r.sleeps).toEqual([75, 150]);
  });

  it('does not retry a 500 on a queue without a dedup window', async () => {
    const r = rig([queueJson('q', 0), errorReply(500, 'internal')]);
    await expect(r.client.send('q', 'x')).rejects.toMatchObject({ status: 500 });
    expect(sendsOf(r)).toHaveLength(1);
    expect(sendsOf(r)[0]?.headers['svc-dedup-string']).toBeUndefined();
  });

  it('does not retry a lost answer without a dedup key', async () => {
    const r = rig([queueJson('q', 0), noResponse()]);
    await expect(r.client.send('q', 'x')).rejects.toBeInstanceOf(MqTransportError);
    expect(sendsOf(r)).toHaveLength(1);
  });

  it('assigns one key before the first attempt on a dedup queue and reuses it', async () => {
    const r = rig([
      queueJson('q', 60),
      errorReply(500, 'operation_unconfirmed'),
      errorReply(502, undefined),
      noResponse(),
      created('m1'),
    ]);
    expect((await r.client.send('q', 'x')).messageId).toBe('m1');
    const keys = sendsOf(r).map((q) => q.headers['svc-dedup-string']);
    expect(keys).toEqual(['auto-key-1', 'auto-key-1', 'auto-key-1', 'auto-key-1']);
  });

  it('describes a queue once and reuses what it learned', async () => {
    const r = rig([queueJson('q', 60), created('m1'), created('m2')]);
    await r.client.send('q', 'a');
    await r.client.send('q', 'b');
    expect(r.requests.filter((q) => q.method === 'GET')).toHaveLength(1);
    expect(sendsOf(r).map((q) => q.headers['svc-dedup-string'])).toEqual(['auto-key-1', 'auto-key-2']);
  });

  it('retries ambiguous failures with a caller key once the window is known', async () => {
    const r = rig([errorReply(504, undefined), queueJson('q', 30), created('m1')]);
    await r.client.send('q', 'x', { dedupKey: 'mine', autoDedupKey: false });
    expect(sendsOf(r).map((q) => q.headers['svc-dedup-string'])).toEqual(['mine', 'mine']);
  });

  it('stops retrying ambiguous failures once the retry could land outside the window', async () => {
    // Window 2 s; backoff 750 ms then 1,500 ms, plus a 1 s travel margin.
    const r = rig([queueJson('q', 2), errorReply(500, 'internal'), errorReply(500, 'internal'), created('m')], {
      baseDelayMs: 1_000,
    });
    await expect(r.client.send('q', 'x')).rejects.toMatchObject({ status: 500 });
    expect(sendsOf(r)).toHaveLength(2);
    expect(r.remaining()).toBe(1);
  });

  it('treats other statuses as verdicts', async () => {
    for (const [status, kind] of [
      [400, 'invalid_argument'],
      [404, 'queue_not_found'],
      [409, 'queue_draining'],
      [413, 'message_too_large'],
      [507, 'spool_full'],
    ] as const) {
      const r = rig([errorReply(status, kind)]);
      await expect(r.client.send('q', 'x', { dedupKey: 'k' })).rejects.toMatchObject({ status, kind });
      expect(sendsOf(r)).toHaveLength(1);
    }
  });

  it('gives up after the configured retries with the last error', async () => {
    const r = rig([errorReply(503, 'unavailable'), errorReply(503, 'unavailable'), errorReply(503, 'a_last')], {
      retries: 2,
    });
    await expect(r.client.send('q', 'x', { autoDedupKey: false })).rejects.toMatchObject({ kind: 'a_last' });
    expect(r.sleeps).toHaveLength(2);
  });

  it('sends once and assigns no key when retries are 0', async () => {
    const r = rig([errorReply(503, 'unavailable')]);
    await expect(r.client.send('q', 'x', { retries: 0 })).rejects.toMatchObject({ status: 503 });
    expect(r.requests).toHaveLength(1);
    expect(r.requests[0]?.headers['svc-dedup-string']).toBeUndefined();
  });

  it('drops its own key and resends bare when the window went to 0', async () => {
    const r = rig([queueJson('q', 60), errorReply(400, 'dedup_disabled'), created('m1'), queueJson('q', 0), created('m2')]);
    expect((await r.client.send('q', 'x')).messageId).toBe('m1');
    expect(sendsOf(r).map((q) => q.headers['svc-dedup-string'])).toEqual(['auto-key-1', undefined]);
    // The forgotten window is learned again on the next send.
    expect((await r.client.send('q', 'y')).messageId).toBe('m2');
    expect(r.remaining()).toBe(0);
  });

  it('keeps dedup_disabled a verdict for a caller key', async () => {
    const r = rig([errorReply(400, 'dedup_disabled')]);
    await expect(r.client.send('q', 'x', { dedupKey: 'k' })).rejects.toMatchObject({ kind: 'dedup_disabled' });
    expect(r.requests).toHaveLength(1);
  });

  it('stops waiting when the caller aborts', async () => {
    const controller = new AbortController();
    const r = rig([
      queueJson('q', 0),
      (request) => {
        controller.abort(new Error('stop'));
        return errorReply(503, 'unavailable')(request);
      },
    ]);
    await expect(r.client.send('q', 'x', { signal: controller.signal })).rejects.toThrow('stop');
    expect(sendsOf(r)).toHaveLength(1);
  });
});
