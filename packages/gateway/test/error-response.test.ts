import { describe, expect, it } from 'vitest';
import { MqError, STATUS_OF_KIND, type ErrorKind } from '@spoolmq/engine';
import { errorResponse, mqErrorResponse } from '../src/error-response.js';

describe('error rendering', () => {
  it('renders every kind with its status and the JSON body', async () => {
    for (const kind of Object.keys(STATUS_OF_KIND) as ErrorKind[]) {
      const response = mqErrorResponse(new MqError(kind, `msg ${kind}`, { field: 'x' }));
      expect(response.status, kind).toBe(STATUS_OF_KIND[kind]);
      expect(response.headers.get('content-type')).toBe('application/json');
      const body = (await response.json()) as Record<string, unknown>;
      if (kind === 'key_blocked') {
        expect(body).toEqual({ message: 'msg key_blocked', details: { field: 'x' } });
      } else {
        expect(body).toEqual({ kind, message: `msg ${kind}`, details: { field: 'x' } });
      }
    }
  });

  it('puts the 429 wait in Retry-After as whole seconds of at least 1, not in the body', async () => {
    const cases: [Record<string, number>, string][] = [
      [{}, '1'],
      [{ retryAfterMs: 1 }, '1'],
      [{ retryAfterMs: 0 }, '1'],
      [{ retryAfterMs: 2001 }, '3'],
      [{ retryAfterSeconds: 4 }, '4'],
      [{ retryAfterSeconds: 0.2 }, '1'],
    ];
    for (const [details, header] of cases) {
      const response = mqErrorResponse(new MqError('rate_limited', 'slow down', { ...details, scope: 'account' }));
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe(header);
      expect(await response.json()).toEqual({ kind: 'rate_limited', message: 'slow down', details: { scope: 'account' } });
    }
  });

  it('puts the 507 storage_full wait in Retry-After; spool_full (a plan cap) has none', async () => {
    const full = new MqError('storage_full', 'disk low', { retryAfterSeconds: 5, freeBytes: 10 });
    const response = mqErrorResponse(full);
    expect(response.status).toBe(507);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toEqual({
      kind: 'storage_full',
      message: 'disk low',
      details: { freeBytes: 10 },
    });
    const cap = mqErrorResponse(new MqError('spool_full', 'cap'));
    expect(cap.status).toBe(507);
    expect(cap.headers.get('retry-after')).toBeNull();
  });

  it('adds Retry-After: 1 to 503', () => {
    expect(mqErrorResponse(new MqError('unavailable', 'no primary')).headers.get('retry-after')).toBe('1');
    expect(mqErrorResponse(new MqError('internal', 'x')).headers.get('retry-after')).toBeNull();
  });

  it('turns anything else into 500 internal after logging it', async () => {
    const logged: unknown[] = [];
    const response = errorResponse(new RangeError('secret detail'), (error) => logged.push(error));
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ kind: 'internal', message: 'internal error', details: {} });
    expect(logged).toHaveLength(1);
    expect(errorResponse(new MqError('gone', 'g'), (error) => logged.push(error)).status).toBe(410);
    expect(logged).toHaveLength(1);
  });
});
