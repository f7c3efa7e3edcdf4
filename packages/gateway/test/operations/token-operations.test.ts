import type { Hono } from 'hono';
import { beforeEach, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { createGatewayApp } from '../../src/app.js';
import { FakeService, HANDLE, LEASE } from '../fake-service.js';
import { call, errorOf } from '../http.js';

let service: FakeService;
let app: Hono;

beforeEach(() => {
  service = new FakeService();
  app = createGatewayApp(service);
});

const post = (op: string, headers: [string, string][] = [], rawHeaders = false): Promise<Response> =>
  call(app, 'POST', `/v1/spools/default/${op}`, { headers, rawHeaders });

describe('lease operations: ack, nack, fail', () => {
  for (const op of ['ack', 'nack', 'fail'] as const) {
    it(`${op}: 204 with the lease passed to the service`, async () => {
      const response = await post(op, [['Svc-Lease', LEASE]]);
      expect(response.status).toBe(204);
      expect(service.callsOf(op)).toEqual([['default', LEASE]]);
    });

    it(`${op}: requires a well-formed Svc-Lease and nothing else`, async () => {
      const cases: [[string, string][], string][] = [
        [[], 'invalid_argument'],
        [[['Svc-Lease', 'x'.repeat(15)]], 'invalid_argument'],
        [[['Svc-Lease', 'x'.repeat(129)]], 'invalid_argument'],
        [[['Svc-Lease', `${LEASE}!`]], 'invalid_argument'],
        [[['Svc-Lease', LEASE], ['Svc-Handle', HANDLE]], 'unknown_header'],
        [[['Svc-Lease', LEASE], ['Svc-Delay', '1s']], 'unknown_header'],
      ];
      for (const [headers, kind] of cases) {
        const response = await post(op, headers);
        expect(response.status).toBe(400);
        expect((await errorOf(response)).kind).toBe(kind);
      }
      const repeated = await post(op, [['Svc-Lease', LEASE], ['Svc-Lease', LEASE]], true);
      expect(await errorOf(repeated)).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Lease' } });
      expect(service.callsOf(op)).toEqual([]);
    });
  }

  it('passes 409, 410, 400 token_kind and 500 answers through', async () => {
    const errors = [
      new MqError('gone', 'gone', { reason: 'primary_changed' }),
      new MqError('token_kind', 'a handle'),
      new MqError('queue_deleting', 'deleting'),
      new MqError('operation_unconfirmed', 'maybe'),
    ];
    for (const error of errors) {
      service.failWith('ack', error);
      const response = await post('ack', [['Svc-Lease', LEASE]]);
      expect(response.status).toBe(error.status);
      expect(await errorOf(response)).toEqual({ kind: error.kind, message: error.message, details: error.details });
    }
  });
});

describe('release', () => {
  it('passes Svc-Delay as milliseconds, 0 when absent', async () => {
    expect((await post('release', [['Svc-Lease', LEASE]])).status).toBe(204);
    expect((await post('release', [['Svc-Lease', LEASE], ['Svc-Delay', '250ms']])).status).toBe(204);
    expect((await post('release', [['Svc-Lease', LEASE], ['Svc-Delay', '168h']])).status).toBe(204);
    expect(service.callsOf('release')).toEqual([
      ['default', LEASE, 0],
      ['default', LEASE, 250],
      ['default', LEASE, 604_800_000],
    ]);
  });

  it('refuses bad durations and Svc-Delay-Seconds', async () => {
    for (const value of ['1.5s', '10us', '-1s', '5', '1h 30m', '169h']) {
      const response = await post('release', [['Svc-Lease', LEASE], ['Svc-Delay', value]]);
      expect(await errorOf(response), value).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Delay' } });
    }
    const seconds = await post('release', [['Svc-Lease', LEASE], ['Svc-Delay-Seconds', '5']]);
    expect((await errorOf(seconds)).kind).toBe('unknown_header');
  });
});

describe('renew', () => {
  it('answers 204 with the new expiry, or without it on a queue with no timeout', async () => {
    const response = await post('renew', [['Svc-Lease', LEASE]]);
    expect(response.status).toBe(204);
    expect(response.headers.get('svc-lease-expires-at')).toBe('2026-11-21T10:10:00.000Z');
    service.on('renew', async () => ({}));
    const none = await post('renew', [['Svc-Lease', LEASE]]);
    expect(none.status).toBe(204);
    expect(none.headers.has('svc-lease-expires-at')).toBe(false);
  });
});

describe('recover and discard', () => {
  it('recover takes a handle or a failure lease, with Svc-Delay-Seconds', async () => {
    expect((await post('recover', [['Svc-Handle', HANDLE]])).status).toBe(204);
    expect((await post('recover', [['Svc-Lease', LEASE], ['Svc-Delay-Seconds', '30']])).status).toBe(204);
    expect(service.callsOf('recover')).toEqual([
      ['default', { handle: HANDLE }, 0],
      ['default', { lease: LEASE }, 30_000],
    ]);
  });

  it('discard takes a lease or a handle', async () => {
    expect((await post('discard', [['Svc-Lease', LEASE]])).status).toBe(204);
    expect((await post('discard', [['Svc-Handle', HANDLE]])).status).toBe(204);
    expect(service.callsOf('discard')).toEqual([
      ['default', { lease: LEASE }],
      ['default', { handle: HANDLE }],
    ]);
  });

  for (const op of ['recover', 'discard']) {
    it(`${op}: both tokens or neither is 400 invalid_argument`, async () => {
      for (const headers of [[], [['Svc-Lease', LEASE], ['Svc-Handle', HANDLE]]] as [string, string][][]) {
        const response = await post(op, headers);
        expect(response.status).toBe(400);
        expect((await errorOf(response)).kind).toBe('invalid_argument');
      }
      expect(service.operations()).toEqual([]);
    });
  }

  it('discard refuses a delay header; recover refuses Svc-Delay', async () => {
    expect((await errorOf(await post('discard', [['Svc-Lease', LEASE], ['Svc-Delay-Seconds', '1']]))).kind).toBe('unknown_header');
    expect((await errorOf(await post('recover', [['Svc-Handle', HANDLE], ['Svc-Delay', '1s']]))).kind).toBe('unknown_header');
    const bad = await post('recover', [['Svc-Handle', HANDLE], ['Svc-Delay-Seconds', '604801']]);
    expect(await errorOf(bad)).toMatchObject({ kind: 'invalid_argument', details: { field: 'Svc-Delay-Seconds' } });
  });

  it('passes message_leased through', async () => {
    service.failWith('discard', new MqError('message_leased', 'leased'));
    const response = await post('discard', [['Svc-Handle', HANDLE]]);
    expect(response.status).toBe(409);
    expect((await errorOf(response)).kind).toBe('message_leased');
  });
});
