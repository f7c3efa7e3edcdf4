import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError, type SendRequest } from '@spoolmq/engine';
import { createGatewayApp } from '../../src/app.js';
import { fingerprintOf } from '../../src/dedup.js';
import { FakeService, HANDLE, LEASE } from '../fake-service.js';
import { call, errorOf, type CallOptions } from '../http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service, { messageSizeMaxBytes: 1_000 });
});

const SEND = '/v1/spools/default/queues/jobs/send';
const ACK_AND_SEND = '/v1/spools/default/queues/other/ack-and-send';
const ACK_AND_SEND_SPOOL = '/v1/spools/default/ack-and-send';

function send(path: string, body: Uint8Array | string, headers: CallOptions['headers'] = [], rawHeaders = false): Promise<Response> {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  return call(app, 'POST', path, { body, headers: [['Content-Length', String(length)], ...(headers ?? [])], rawHeaders });
}

function sentRequest(method: 'send' | 'ackAndSend' = 'send'): SendRequest {
  const calls = service.callsOf(method);
  expect(calls).toHaveLength(1);
  return calls[0]![method === 'send' ? 2 : 3] as SendRequest;
}

describe('send', () => {
  it('answers 201 with Svc-Message-Id and passes the payload bytes intact', async () => {
    const payload = Uint8Array.from({ length: 256 }, (_, i) => 255 - i);
    const response = await send(SEND, payload);
    expect(response.status).toBe(201);
    expect(response.headers.get('svc-message-id')).toBe('msg-new');
    expect(response.headers.get('svc-handle')).toBeNull();
    expect(await response.text()).toBe('');
    const request = sentRequest();
    expect(Buffer.from(request.payload)).toEqual(Buffer.from(payload));
    expect(request).toMatchObject({ delayMs: 0, wantHandle: false });
    expect(request.dedupKey).toBeUndefined();
  });

  it('sends an empty message with an explicit Content-Length of 0', async () => {
    const response = await call(app, 'POST', SEND, { headers: [['Content-Length', '0']] });
    expect(response.status).toBe(201);
    expect(sentRequest().payload).toHaveLength(0);
  });

  it('returns Svc-Handle when handle=true', async () => {
    const response = await send(`${SEND}?handle=true`, 'x');
    expect(response.headers.get('svc-handle')).toBe(HANDLE);
    expect(sentRequest().wantHandle).toBe(true);
  });

  it('answers a dedup hit with 200, the original id and no body', async () => {
    service.on('send', async () => ({ messageId: 'msg-original', duplicate: true }));
    const response = await send(SEND, 'x', [['Svc-Dedup-String', 'order-1']]);
    expect(response.status).toBe(200);
    expect(response.headers.get('svc-message-id')).toBe('msg-original');
    expect(await response.text()).toBe('');
  });

  it('turns Svc-Delay-Seconds into milliseconds', async () => {
    await send(SEND, 'x', [['Svc-Delay-Seconds', '604800']]);
    expect(sentRequest().delayMs).toBe(604_800_000);
  });

  it('refuses bad Svc-Delay-Seconds values', async () => {
    for (const value of ['604801', '-1', '1.5', '1s', '1 0', '+1']) {
      const response = await send(SEND, 'x', [['Svc-Delay-Seconds', value]]);
      expect(response.status, value).toBe(400);
      expect(await errorOf(response)).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Delay-Seconds' } });
    }
    expect(service.callsOf('send')).toEqual([]);
  });

  it('fingerprints Svc-Dedup-String and passes Svc-Dedup-Hash bytes', async () => {
    await send(SEND, 'x', [['Svc-Dedup-String', 'order-1']]);
    expect(sentRequest().dedupKey).toEqual(fingerprintOf('order-1'));
    service.calls.length = 0;
    const hex = Buffer.from(fingerprintOf('order-1')).toString('hex').toUpperCase();
    await send(SEND, 'x', [['Svc-Dedup-Hash', hex]]);
    expect(sentRequest().dedupKey).toEqual(fingerprintOf('order-1'));
  });

  it('refuses both dedup headers, and malformed ones, with 400 invalid_argument', async () => {
    const cases: [string, string][][] = [
      [['Svc-Dedup-String', 'a'], ['Svc-Dedup-Hash', '0'.repeat(32)]],
      [['Svc-Dedup-String', 'has space']],
      [['Svc-Dedup-String', 'x'.repeat(129)]],
      [['Svc-Dedup-Hash', 'z'.repeat(32)]],
    ];
    for (const headers of cases) {
      const response = await send(SEND, 'x', headers);
      expect(response.status).toBe(400);
      expect((await errorOf(response)).kind).toBe('invalid_argument');
    }
  });

  it('passes the service dedup_disabled answer through', async () => {
    service.failWith('send', new MqError('dedup_disabled', 'no window'));
    const response = await send(SEND, 'x', [['Svc-Dedup-String', 'k']]);
    expect(response.status).toBe(400);
    expect((await errorOf(response)).kind).toBe('dedup_disabled');
  });

  it('answers 411 without Content-Length or with a chunked body', async () => {
    const missing = await call(app, 'POST', SEND, {});
    expect(missing.status).toBe(411);
    expect((await errorOf(missing)).kind).toBe('length_required');
    const chunked = await call(app, 'POST', SEND, { headers: [['Transfer-Encoding', 'chunked']] });
    expect(chunked.status).toBe(411);
    expect(service.callsOf('send')).toEqual([]);
  });

  it('answers 413 from Content-Length alone, with limitBytes', async () => {
    const response = await call(app, 'POST', SEND, { headers: [['Content-Length', '1001']], body: 'tiny' });
    expect(response.status).toBe(413);
    expect(await errorOf(response)).toMatchObject({ kind: 'message_too_large', details: { limitBytes: 1000 } });
    const exact = await send(SEND, 'x'.repeat(1000));
    expect(exact.status).toBe(201);
  });

  it('answers 400 before 411 and 413 (headers before length)', async () => {
    const response = await call(app, 'POST', SEND, { headers: [['Svc-Delay-Seconds', 'x']] });
    expect(response.status).toBe(400);
    const big = await call(app, 'POST', SEND, { headers: [['Svc-Delay-Seconds', 'x'], ['Content-Length', '5000']] });
    expect(big.status).toBe(400);
  });

  it('refuses headers send does not define', async () => {
    for (const header of ['Svc-Lease', 'Svc-Delay', 'Svc-Queue', 'Svc-Handle', 'Svc-Message-Id', 'Svc-Whatever']) {
      const response = await send(SEND, 'x', [[header, 'value']]);
      expect(response.status, header).toBe(400);
      expect(await errorOf(response)).toMatchObject({ kind: 'unknown_header', details: { header } });
    }
  });

  it('refuses empty and repeated Svc headers', async () => {
    const empty = await send(SEND, 'x', [['Svc-Dedup-String', '']]);
    expect(empty.status).toBe(400);
    expect((await errorOf(empty)).kind).toBe('invalid_argument');
    const repeated = await send(SEND, 'x', [['Svc-Dedup-String', 'a'], ['Svc-Dedup-String', 'a']], true);
    expect(repeated.status).toBe(400);
    expect(await errorOf(repeated)).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Dedup-String' } });
    const joined = await send(SEND, 'x', [['Svc-Dedup-String', 'a'], ['Svc-Dedup-String', 'b']]);
    expect(joined.status).toBe(400);
  });

  it('ignores non-Svc headers', async () => {
    const response = await send(SEND, 'x', [['X-Request-Id', 'abc'], ['Svcx', '1']]);
    expect(response.status).toBe(201);
  });

  it('checks the handle query parameter strictly', async () => {
    for (const query of ['handle=1', 'handle=TRUE', 'handle=', 'handle=true&handle=true', 'other=1']) {
      const response = await send(`${SEND}?${query}`, 'x');
      expect(response.status, query).toBe(400);
    }
  });
});

describe('ack-and-send', () => {
  it('acks the lease and sends into the path queue (201, Svc-Message-Id)', async () => {
    const response = await send(`${ACK_AND_SEND}?handle=true`, 'next', [['Svc-Lease', LEASE], ['Svc-Delay', '1h30m']]);
    expect(response.status).toBe(201);
    expect(response.headers.get('svc-message-id')).toBe('msg-next');
    expect(response.headers.get('svc-handle')).toBe(HANDLE);
    const [spool, lease, queue, request] = service.callsOf('ackAndSend')[0]!;
    expect([spool, lease, queue]).toEqual(['default', LEASE, 'other']);
    expect(request).toMatchObject({ delayMs: 5_400_000, wantHandle: true });
    expect(Buffer.from((request as SendRequest).payload).toString()).toBe('next');
  });

  it('takes the destination from Svc-Queue in the spool form', async () => {
    const response = await send(ACK_AND_SEND_SPOOL, 'n', [['Svc-Lease', LEASE], ['Svc-Queue', 'other'], ['Svc-Dedup-String', 'k']]);
    expect(response.status).toBe(201);
    const [, , queue, request] = service.callsOf('ackAndSend')[0]!;
    expect(queue).toBe('other');
    expect((request as SendRequest).dedupKey).toEqual(fingerprintOf('k'));
  });

  it('requires Svc-Queue in the spool form and refuses it in the queue form', async () => {
    const missing = await send(ACK_AND_SEND_SPOOL, 'n', [['Svc-Lease', LEASE]]);
    expect(missing.status).toBe(400);
    expect(await errorOf(missing)).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Queue' } });
    const badName = await send(ACK_AND_SEND_SPOOL, 'n', [['Svc-Lease', LEASE], ['Svc-Queue', 'a b']]);
    expect(badName.status).toBe(400);
    const unexpected = await send(ACK_AND_SEND, 'n', [['Svc-Lease', LEASE], ['Svc-Queue', 'other']]);
    expect(unexpected.status).toBe(400);
    expect((await errorOf(unexpected)).kind).toBe('unknown_header');
  });

  it('requires a well-formed lease and refuses Svc-Delay-Seconds', async () => {
    expect((await send(ACK_AND_SEND, 'n', [])).status).toBe(400);
    expect((await send(ACK_AND_SEND, 'n', [['Svc-Lease', 'short']])).status).toBe(400);
    const seconds = await send(ACK_AND_SEND, 'n', [['Svc-Lease', LEASE], ['Svc-Delay-Seconds', '5']]);
    expect(await errorOf(seconds)).toMatchObject({ kind: 'unknown_header', details: { header: 'Svc-Delay-Seconds' } });
  });

  it('refuses a bad Svc-Delay before a missing Content-Length, and 411 before the lease is judged', async () => {
    const delay = await call(app, 'POST', ACK_AND_SEND, { headers: [['Svc-Lease', LEASE], ['Svc-Delay', '1.5s']] });
    expect(delay.status).toBe(400);
    expect(await errorOf(delay)).toMatchObject({ details: { field: 'Svc-Delay' } });
    const length = await call(app, 'POST', ACK_AND_SEND, { headers: [['Svc-Lease', LEASE]] });
    expect(length.status).toBe(411);
    expect(service.callsOf('ackAndSend')).toEqual([]);
  });

  it('passes dedup_claimed, gone and spool_full through', async () => {
    const cases: [MqError, number][] = [
      [new MqError('dedup_claimed', 'dup', { messageId: 'm-0' }), 409],
      [new MqError('gone', 'late', { reason: 'expired' }), 410],
      [new MqError('spool_full', 'full'), 507],
    ];
    for (const [error, status] of cases) {
      service.failWith('ackAndSend', error);
      const response = await send(ACK_AND_SEND, 'n', [['Svc-Lease', LEASE]]);
      expect(response.status).toBe(status);
      expect(await errorOf(response)).toEqual({ kind: error.kind, message: error.message, details: error.details });
    }
  });
});
