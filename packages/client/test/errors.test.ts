import { describe, expect, it } from 'vitest';
import { MqClientError, errorFromResponse, isMqClientError, isMqTransportError, parseRetryAfter } from '../src/index.js';
import { ERROR_KINDS, MqTransportError, isKnownErrorKind } from '../src/index.js';

describe('errorFromResponse', () => {
  it('reads kind, message and details from the JSON body', () => {
    const body = JSON.stringify({ kind: 'gone', message: 'settled', details: { reason: 'settled' } });
    const error = errorFromResponse(410, new Headers(), body);
    expect(error).toBeInstanceOf(MqClientError);
    expect(error).toMatchObject({ status: 410, kind: 'gone', message: 'settled', details: { reason: 'settled' } });
    expect(error.retryAfterSeconds).toBeUndefined();
  });

  it('leaves kind undefined for the blocked-key 403', () => {
    const error = errorFromResponse(403, new Headers(), JSON.stringify({ message: 'key blocked' }));
    expect(error.kind).toBeUndefined();
    expect(error.message).toBe('key blocked');
  });

  it('keeps a non-JSON body as the message', () => {
    const error = errorFromResponse(502, new Headers(), '<html>bad gateway</html>');
    expect(error).toMatchObject({ status: 502, kind: undefined, message: '<html>bad gateway</html>', details: {} });
    expect(errorFromResponse(504, new Headers(), '').message).toBe('HTTP 504');
  });

  it('reads Retry-After in whole seconds', () => {
    const error = errorFromResponse(429, new Headers({ 'retry-after': '4' }), '{"kind":"rate_limited"}');
    expect(error.retryAfterSeconds).toBe(4);
  });
});

describe('parseRetryAfter', () => {
  it('accepts only the delay-seconds form', () => {
    expect(parseRetryAfter('1')).toBe(1);
    expect(parseRetryAfter(' 30 ')).toBe(30);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
    expect(parseRetryAfter('-1')).toBeUndefined();
    expect(parseRetryAfter('1.5')).toBeUndefined();
  });
});

describe('guards', () => {
  it('tell the two failure kinds apart', () => {
    const answered = new MqClientError(500, 'internal', 'x');
    const unanswered = new MqTransportError('reset');
    expect(isMqClientError(answered) && !isMqTransportError(answered)).toBe(true);
    expect(isMqTransportError(unanswered) && !isMqClientError(unanswered)).toBe(true);
    expect(answered.transport).toBe(false);
    expect(unanswered.transport).toBe(true);
  });
});

describe('error kinds', () => {
  it('knows storage_full and spool_full, and not an invented kind', () => {
    expect(isKnownErrorKind('storage_full')).toBe(true);
    expect(isKnownErrorKind('spool_full')).toBe(true);
    expect(isKnownErrorKind('disk_on_fire')).toBe(false);
    expect(isKnownErrorKind(undefined)).toBe(false);
    expect(new Set(ERROR_KINDS).size).toBe(ERROR_KINDS.length);
  });
});
