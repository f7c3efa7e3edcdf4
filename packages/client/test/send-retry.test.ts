import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SEND_RETRY_POLICY,
  MqClientError,
  MqTransportError,
  backoffDelayMs,
  classifySendFailure,
  nextSendRetryDelayMs,
} from '../src/index.js';

const err = (status: number, kind?: string, retryAfterSeconds?: number) =>
  new MqClientError(status, kind, 'x', {}, retryAfterSeconds);
const context = { retry: 1, hasDedupKey: true, elapsedMs: 0, dedupWindowMs: 300_000 };

describe('classifySendFailure', () => {
  it('follows the interface table', () => {
    expect(classifySendFailure(err(429, 'rate_limited'))).toBe('transient');
    expect(classifySendFailure(err(503, 'unavailable'))).toBe('transient');
    expect(classifySendFailure(err(409, 'dedup_in_flight'))).toBe('transient');
    expect(classifySendFailure(err(507, 'storage_full'))).toBe('transient');
    expect(classifySendFailure(err(507, 'spool_full'))).toBe('verdict');
    expect(classifySendFailure(err(409, 'queue_draining'))).toBe('verdict');
    expect(classifySendFailure(err(500, 'operation_unconfirmed'))).toBe('ambiguous');
    expect(classifySendFailure(err(500, 'internal'))).toBe('ambiguous');
    expect(classifySendFailure(err(502))).toBe('ambiguous');
    expect(classifySendFailure(err(504))).toBe('ambiguous');
    expect(classifySendFailure(new MqTransportError('reset'))).toBe('ambiguous');
    for (const status of [400, 401, 402, 403, 404, 410, 411, 413, 415, 501, 507]) {
      expect(classifySendFailure(err(status, 'k'))).toBe('verdict');
    }
  });
});

describe('nextSendRetryDelayMs', () => {
  it('never retries a verdict, and an ambiguous failure only with a key', () => {
    const statuses = fc.constantFrom(400, 404, 409, 410, 413, 429, 500, 502, 503, 504, 507);
    fc.assert(
      fc.property(statuses, fc.boolean(), fc.integer({ min: 1, max: 5 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (status, hasKey, retry, random01) => {
        const failure = err(status, status === 409 ? 'dedup_in_flight' : 'k');
        const delay = nextSendRetryDelayMs(failure, { ...context, retry, hasDedupKey: hasKey }, DEFAULT_SEND_RETRY_POLICY, random01);
        const failureClass = classifySendFailure(failure);
        if (retry > DEFAULT_SEND_RETRY_POLICY.retries || failureClass === 'verdict') expect(delay).toBeUndefined();
        else if (failureClass === 'ambiguous' && !hasKey) expect(delay).toBeUndefined();
        else expect(delay).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('needs a known window for ambiguous retries', () => {
    const failure = new MqTransportError('reset');
    expect(nextSendRetryDelayMs(failure, { ...context, dedupWindowMs: undefined }, DEFAULT_SEND_RETRY_POLICY, 0)).toBeUndefined();
    expect(nextSendRetryDelayMs(failure, context, DEFAULT_SEND_RETRY_POLICY, 0)).toBe(50);
    // 2 s window: elapsed 900 + delay 50 + margin 1,000 passes 1,950 < 2,000; 1,000 does not.
    expect(nextSendRetryDelayMs(failure, { ...context, elapsedMs: 900, dedupWindowMs: 2_000 }, DEFAULT_SEND_RETRY_POLICY, 0)).toBe(50);
    expect(nextSendRetryDelayMs(failure, { ...context, elapsedMs: 1_000, dedupWindowMs: 2_000 }, DEFAULT_SEND_RETRY_POLICY, 0)).toBeUndefined();
  });

  it('retries transient failures without a key or window', () => {
    const delay = nextSendRetryDelayMs(err(503), { ...context, hasDedupKey: false, dedupWindowMs: undefined }, DEFAULT_SEND_RETRY_POLICY, 0);
    expect(delay).toBe(50);
  });
});

describe('backoffDelayMs', () => {
  it('honours Retry-After over backoff', () => {
    expect(backoffDelayMs(err(429, 'rate_limited', 3), 1, DEFAULT_SEND_RETRY_POLICY, 0.9)).toBe(3_000);
  });

  it('doubles per retry within [half, full] of the capped step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 0.999, noNaN: true }), (retry, random01) => {
        const policy = DEFAULT_SEND_RETRY_POLICY;
        const stepMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
        const delay = backoffDelayMs(err(503), retry, policy, random01);
        expect(delay).toBeGreaterThanOrEqual(stepMs / 2 - 1);
        expect(delay).toBeLessThanOrEqual(stepMs);
      }),
    );
  });
});
