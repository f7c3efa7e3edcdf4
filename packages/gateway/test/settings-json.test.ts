import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { parseJsonBytes, parseSettingsBody } from '../src/settings-json.js';

function errorOf(run: () => unknown): MqError {
  try {
    run();
  } catch (error) {
    return error as MqError;
  }
  throw new Error('expected a failure');
}

describe('parseSettingsBody', () => {
  it('accepts every field at its bounds', () => {
    const low = { leaseTimeoutSeconds: 0, maxRetries: 0, dedupWindowSeconds: 0, retentionSeconds: 0, recvRateLimit: { intervalMicros: 10_000, burst: 1 } };
    expect(parseSettingsBody(low)).toEqual(low);
    const high = { leaseTimeoutSeconds: 31_536_000, maxRetries: 65_535, dedupWindowSeconds: 300, retentionSeconds: 60, recvRateLimit: { intervalMicros: 10_000_000, burst: 2_147_483_647 } };
    expect(parseSettingsBody(high)).toEqual(high);
  });

  it('keeps absent fields absent and recvRateLimit null as null', () => {
    expect(parseSettingsBody({})).toEqual({});
    expect(parseSettingsBody({ recvRateLimit: null })).toEqual({ recvRateLimit: null });
  });

  it('refuses non-objects as invalid_json', () => {
    for (const body of [null, [], 'x', 3, true]) expect(errorOf(() => parseSettingsBody(body)).kind).toBe('invalid_json');
  });

  it('refuses unknown fields at any depth with unknown_field naming the path', () => {
    expect(errorOf(() => parseSettingsBody({ leaseTimeout: 1 })).details).toEqual({ field: 'leaseTimeout' });
    expect(errorOf(() => parseSettingsBody({ effectiveRetentionSeconds: 60 })).kind).toBe('unknown_field');
    const nested = errorOf(() => parseSettingsBody({ recvRateLimit: { intervalMicros: 10_000, burst: 1, rate: 2 } }));
    expect(nested.kind).toBe('unknown_field');
    expect(nested.details).toEqual({ field: 'recvRateLimit.rate' });
  });

  it('refuses wrong types and out-of-range values with invalid_argument naming the field', () => {
    const cases: [unknown, string][] = [
      [{ leaseTimeoutSeconds: -1 }, 'leaseTimeoutSeconds'],
      [{ leaseTimeoutSeconds: 31_536_001 }, 'leaseTimeoutSeconds'],
      [{ leaseTimeoutSeconds: '5' }, 'leaseTimeoutSeconds'],
      [{ maxRetries: 1.5 }, 'maxRetries'],
      [{ maxRetries: 65_536 }, 'maxRetries'],
      [{ dedupWindowSeconds: 301 }, 'dedupWindowSeconds'],
      [{ dedupWindowSeconds: null }, 'dedupWindowSeconds'],
      [{ retentionSeconds: 1 }, 'retentionSeconds'],
      [{ retentionSeconds: 59 }, 'retentionSeconds'],
      [{ recvRateLimit: 5 }, 'recvRateLimit'],
      [{ recvRateLimit: { intervalMicros: 9_999, burst: 1 } }, 'recvRateLimit.intervalMicros'],
      [{ recvRateLimit: { intervalMicros: 10_000, burst: 0 } }, 'recvRateLimit.burst'],
      [{ recvRateLimit: { intervalMicros: 10_000, burst: 2_147_483_648 } }, 'recvRateLimit.burst'],
      [{ recvRateLimit: { burst: 1 } }, 'recvRateLimit.intervalMicros'],
      [{ recvRateLimit: { intervalMicros: 0, burst: 0 } }, 'recvRateLimit.intervalMicros'],
    ];
    for (const [body, field] of cases) {
      const error = errorOf(() => parseSettingsBody(body));
      expect(error.kind, JSON.stringify(body)).toBe('invalid_argument');
      expect(error.details).toEqual({ field });
    }
  });
});

describe('parseJsonBytes', () => {
  it('parses UTF-8 JSON and treats an empty body as {}', () => {
    expect(parseJsonBytes(new TextEncoder().encode('{"a":"é"}'))).toEqual({ a: 'é' });
    expect(parseJsonBytes(new Uint8Array())).toEqual({});
  });

  it('refuses invalid JSON and invalid UTF-8 as invalid_json', () => {
    expect(errorOf(() => parseJsonBytes(new TextEncoder().encode('{'))).kind).toBe('invalid_json');
    expect(errorOf(() => parseJsonBytes(new TextEncoder().encode(' '))).kind).toBe('invalid_json');
    expect(errorOf(() => parseJsonBytes(new Uint8Array([0x7b, 0xff, 0x7d]))).kind).toBe('invalid_json');
  });
});
