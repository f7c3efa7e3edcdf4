import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { canonicalHeaderName, checkSvcHeaders, scanHeaders } from '../src/request-headers.js';

function errorOf(run: () => unknown): MqError {
  try {
    run();
  } catch (error) {
    return error as MqError;
  }
  throw new Error('expected a failure');
}

const ALLOWED = new Set(['svc-lease', 'svc-delay']);

describe('scanHeaders', () => {
  it('collects standard and Svc-* headers from raw headers, any case', () => {
    const scanned = scanHeaders(
      ['AUTHORIZATION', 'Bearer k', 'Content-Length', '3', 'SVC-Lease', 'abc', 'X-Other', 'y', 'Transfer-Encoding', 'chunked', 'Content-Type', 'application/json'],
      new Headers(),
    );
    expect(scanned.authorization).toBe('Bearer k');
    expect(scanned.contentLength).toBe('3');
    expect(scanned.transferEncoding).toBe('chunked');
    expect(scanned.contentType).toBe('application/json');
    expect([...scanned.svc]).toEqual([['svc-lease', 'abc']]);
    expect(scanned.svcRepeated).toBeUndefined();
  });

  it('sees repetition in raw headers, which a Headers object would join', () => {
    const scanned = scanHeaders(['Svc-Lease', 'a', 'svc-lease', 'b'], new Headers());
    expect(scanned.svcRepeated).toBe('svc-lease');
    expect(scanned.svc.get('svc-lease')).toBe('a');
  });

  it('falls back to the Headers object without raw headers', () => {
    const scanned = scanHeaders(undefined, new Headers([['svc-delay', '1s'], ['authorization', 'Bearer x']]));
    expect(scanned.svc.get('svc-delay')).toBe('1s');
    expect(scanned.authorization).toBe('Bearer x');
  });
});

describe('checkSvcHeaders', () => {
  it('accepts defined headers and ignores non-Svc ones', () => {
    checkSvcHeaders(scanHeaders(['Svc-Lease', 'x', 'X-Trace', ''], new Headers()), ALLOWED);
  });

  it('refuses a header the operation does not define with unknown_header naming it', () => {
    const error = errorOf(() => checkSvcHeaders(scanHeaders(['svc-dedup-string', 'k'], new Headers()), ALLOWED));
    expect(error.kind).toBe('unknown_header');
    expect(error.details).toEqual({ header: 'Svc-Dedup-String' });
    const invented = errorOf(() => checkSvcHeaders(scanHeaders(['Svc-Made-Up', 'k'], new Headers()), ALLOWED));
    expect(invented.details).toEqual({ header: 'Svc-Made-Up' });
  });

  it('refuses repeated and empty headers with invalid_argument', () => {
    const repeated = errorOf(() => checkSvcHeaders(scanHeaders(['Svc-Lease', 'a', 'Svc-Lease', 'a'], new Headers()), ALLOWED));
    expect(repeated.kind).toBe('invalid_argument');
    expect(repeated.details).toEqual({ field: 'Svc-Lease' });
    const empty = errorOf(() => checkSvcHeaders(scanHeaders(['Svc-Delay', ''], new Headers()), ALLOWED));
    expect(empty.kind).toBe('invalid_argument');
    expect(empty.details).toEqual({ field: 'Svc-Delay' });
  });

  it('spells header names canonically', () => {
    expect(canonicalHeaderName('svc-delay-seconds')).toBe('Svc-Delay-Seconds');
    expect(canonicalHeaderName('svc--x')).toBe('Svc--X');
  });
});
