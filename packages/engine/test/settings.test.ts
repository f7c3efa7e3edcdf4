import { describe, expect, it } from 'vitest';
import { MqError } from '../src/errors.js';
import { DEFAULT_PLAN, resolvePlan } from '../src/plan.js';
import { defaultSettings, effectiveRetentionSeconds, patchSettings, resolveSettings, settingsView } from '../src/settings.js';

function errorOf(value: unknown): MqError {
  expect(value).toBeInstanceOf(MqError);
  return value as MqError;
}

describe('settings', () => {
  it('defaults: lease 300 s, 10 retries, no dedup, plan default retention, no rate limit', () => {
    expect(defaultSettings(DEFAULT_PLAN)).toEqual({
      leaseTimeoutSeconds: 300,
      maxRetries: 10,
      dedupWindowSeconds: 0,
      retentionSeconds: 345_600,
      rateIntervalMicros: 0,
      rateBurst: 0,
    });
    // Clamped to a plan limit below the default.
    expect(defaultSettings(resolvePlan({ retentionLimitSeconds: 3600 })).retentionSeconds).toBe(3600);
  });

  it('resolves create input over the defaults', () => {
    const settings = resolveSettings(
      { leaseTimeoutSeconds: 0, maxRetries: 65_535, dedupWindowSeconds: 300, retentionSeconds: 60, recvRateLimit: { intervalMicros: 10_000, burst: 5 } },
      DEFAULT_PLAN,
    );
    expect(settings).toEqual({
      leaseTimeoutSeconds: 0,
      maxRetries: 65_535,
      dedupWindowSeconds: 300,
      retentionSeconds: 60,
      rateIntervalMicros: 10_000,
      rateBurst: 5,
    });
  });

  it('refuses out-of-range values naming the field', () => {
    const cases: [object, string][] = [
      [{ leaseTimeoutSeconds: 31_536_001 }, 'leaseTimeoutSeconds'],
      [{ leaseTimeoutSeconds: -1 }, 'leaseTimeoutSeconds'],
      [{ maxRetries: 65_536 }, 'maxRetries'],
      [{ dedupWindowSeconds: 301 }, 'dedupWindowSeconds'],
      [{ retentionSeconds: 59 }, 'retentionSeconds'],
      [{ retentionSeconds: 1.5 }, 'retentionSeconds'],
      [{ recvRateLimit: { intervalMicros: 9_999, burst: 1 } }, 'recvRateLimit.intervalMicros'],
      [{ recvRateLimit: { intervalMicros: 10_000, burst: 0 } }, 'recvRateLimit.burst'],
      [{ recvRateLimit: { intervalMicros: 10_000, burst: 2_147_483_648 } }, 'recvRateLimit.burst'],
    ];
    for (const [input, field] of cases) {
      const error = errorOf(resolveSettings(input, DEFAULT_PLAN));
      expect(error.kind).toBe('invalid_argument');
      expect(error.details.field).toBe(field);
    }
  });

  it('retention above the plan limit is 403 retention_limit; 0 is allowed', () => {
    const error = errorOf(resolveSettings({ retentionSeconds: 1_209_601 }, DEFAULT_PLAN));
    expect(error.kind).toBe('retention_limit');
    expect(error.status).toBe(403);
    expect(resolveSettings({ retentionSeconds: 1_209_600 }, DEFAULT_PLAN)).toMatchObject({ retentionSeconds: 1_209_600 });
    expect(resolveSettings({ retentionSeconds: 0 }, DEFAULT_PLAN)).toMatchObject({ retentionSeconds: 0 });
  });

  it('effective retention: bounded by the limit, 0 counts as unbounded', () => {
    expect(effectiveRetentionSeconds(0, DEFAULT_PLAN)).toBe(1_209_600);
    expect(effectiveRetentionSeconds(60, DEFAULT_PLAN)).toBe(60);
    const unlimited = resolvePlan({ retentionLimitSeconds: 0 });
    expect(effectiveRetentionSeconds(0, unlimited)).toBe(0);
    expect(effectiveRetentionSeconds(99_999_999, unlimited)).toBe(99_999_999);
  });

  it('patches: absent fields unchanged, null removes the rate limit', () => {
    const base = resolveSettings({ recvRateLimit: { intervalMicros: 20_000, burst: 2 }, maxRetries: 3 }, DEFAULT_PLAN);
    if (base instanceof MqError) throw base;
    expect(patchSettings(base, {}, DEFAULT_PLAN)).toEqual(base);
    expect(patchSettings(base, { recvRateLimit: null }, DEFAULT_PLAN)).toEqual({ ...base, rateIntervalMicros: 0, rateBurst: 0 });
    expect(patchSettings(base, { leaseTimeoutSeconds: 5 }, DEFAULT_PLAN)).toEqual({ ...base, leaseTimeoutSeconds: 5 });
  });

  it('view shows recvRateLimit always and effectiveRetentionSeconds', () => {
    expect(settingsView(defaultSettings(DEFAULT_PLAN), DEFAULT_PLAN)).toEqual({
      leaseTimeoutSeconds: 300,
      maxRetries: 10,
      dedupWindowSeconds: 0,
      retentionSeconds: 345_600,
      effectiveRetentionSeconds: 345_600,
      recvRateLimit: { intervalMicros: 0, burst: 0 },
    });
  });
});
