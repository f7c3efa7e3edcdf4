// Queue settings as stored (seconds, as the interface shows them) and the pure functions that
// resolve create input and update patches against the plan. The replicated commands carry fully
// resolved settings for create, and the patch for update, so apply never consults defaults.

import { MqError, invalidArgument } from './errors.js';
import type { Plan } from './plan.js';
import type { SettingsInput, SettingsPatch, SettingsView } from './service.js';

export interface Settings {
  /** 0 .. 31,536,000; 0 disables the lease timeout. */
  readonly leaseTimeoutSeconds: number;
  /** 0 .. 65,535 redeliveries before a nack fails the message. */
  readonly maxRetries: number;
  /** 0 .. 300; 0 disables dedup. */
  readonly dedupWindowSeconds: number;
  /** 0 (no expiry of its own) or 60 .. plan limit. */
  readonly retentionSeconds: number;
  /** 0 (no limit) or >= 10,000. */
  readonly rateIntervalMicros: number;
  /** 0 (no limit) or 1 .. 2,147,483,647. */
  readonly rateBurst: number;
}

export const LEASE_TIMEOUT_SECONDS_MAX = 31_536_000;
export const LEASE_TIMEOUT_SECONDS_DEFAULT = 300;
export const MAX_RETRIES_MAX = 65_535;
export const MAX_RETRIES_DEFAULT = 10;
export const DEDUP_WINDOW_SECONDS_MAX = 300;
export const RETENTION_SECONDS_MIN = 60;
export const RATE_INTERVAL_MICROS_MIN = 10_000;
/** Bound of the codec (float64 integer); far above any useful refill interval. */
export const RATE_INTERVAL_MICROS_MAX = Number.MAX_SAFE_INTEGER;
export const RATE_BURST_MAX = 2_147_483_647;

/** Settings of a queue created with no input: the defaults, retention clamped to the plan. */
export function defaultSettings(plan: Plan): Settings {
  const limit = plan.retentionLimitSeconds;
  const fallback = plan.retentionDefaultSeconds;
  const retention = limit > 0 ? Math.min(fallback, limit) : fallback;
  return {
    leaseTimeoutSeconds: LEASE_TIMEOUT_SECONDS_DEFAULT,
    maxRetries: MAX_RETRIES_DEFAULT,
    dedupWindowSeconds: 0,
    retentionSeconds: retention,
    rateIntervalMicros: 0,
    rateBurst: 0,
  };
}

/**
 * Resolves create input to full settings: absent fields take the defaults.
 * Returns an `MqError` (400 invalid_argument with `details.field`, or 403 retention_limit)
 * instead of settings when a value is out of range. The gateway checks ranges first; this is the
 * engine's own guard so a replicated command never carries an invalid value.
 */
export function resolveSettings(input: SettingsInput, plan: Plan): Settings | MqError {
  return patchSettings(defaultSettings(plan), input, plan);
}

/**
 * Applies `patch` to `current`: absent fields unchanged, `recvRateLimit: null` removes the limit.
 * Errors as for `resolveSettings`.
 */
export function patchSettings(
  current: Settings,
  patch: SettingsPatch,
  plan: Plan,
): Settings | MqError {
  const lease = patch.leaseTimeoutSeconds ?? current.leaseTimeoutSeconds;
  if (!inRange(lease, 0, LEASE_TIMEOUT_SECONDS_MAX)) {
    return invalidArgument('leaseTimeoutSeconds', 'out of range');
  }
  const retries = patch.maxRetries ?? current.maxRetries;
  if (!inRange(retries, 0, MAX_RETRIES_MAX)) return invalidArgument('maxRetries', 'out of range');
  const dedup = patch.dedupWindowSeconds ?? current.dedupWindowSeconds;
  if (!inRange(dedup, 0, DEDUP_WINDOW_SECONDS_MAX)) {
    return invalidArgument('dedupWindowSeconds', 'out of range');
  }
  const retention = patch.retentionSeconds ?? current.retentionSeconds;
  const retentionError = checkRetention(retention, plan);
  if (retentionError) return retentionError;
  let interval = current.rateIntervalMicros;
  let burst = current.rateBurst;
  if (patch.recvRateLimit === null) {
    interval = 0;
    burst = 0;
  } else if (patch.recvRateLimit !== undefined) {
    interval = patch.recvRateLimit.intervalMicros;
    burst = patch.recvRateLimit.burst;
    const disabled = interval === 0 && burst === 0;
    if (!disabled && !inRange(interval, RATE_INTERVAL_MICROS_MIN, RATE_INTERVAL_MICROS_MAX)) {
      return invalidArgument('recvRateLimit.intervalMicros', 'out of range');
    }
    if (!disabled && !inRange(burst, 1, RATE_BURST_MAX)) {
      return invalidArgument('recvRateLimit.burst', 'out of range');
    }
  }
  return {
    leaseTimeoutSeconds: lease,
    maxRetries: retries,
    dedupWindowSeconds: dedup,
    retentionSeconds: retention,
    rateIntervalMicros: interval,
    rateBurst: burst,
  };
}

function checkRetention(retention: number, plan: Plan): MqError | null {
  if (!Number.isSafeInteger(retention) || retention < 0) {
    return invalidArgument('retentionSeconds', 'out of range');
  }
  if (retention > 0 && retention < RETENTION_SECONDS_MIN) {
    return invalidArgument('retentionSeconds', `must be 0 or at least ${RETENTION_SECONDS_MIN}`);
  }
  const limit = plan.retentionLimitSeconds;
  if (limit > 0 && retention > limit) {
    return new MqError('retention_limit', `retentionSeconds exceeds the plan limit of ${limit}`, {
      limitSeconds: limit,
    });
  }
  return null;
}

function inRange(value: number, min: number, max: number): boolean {
  return Number.isSafeInteger(value) && value >= min && value <= max;
}

/**
 * Retention enforced, in seconds: `retentionSeconds` bounded by the plan limit, where 0 counts as
 * unbounded (so a plan with a limit turns 0 into the limit). 0 means messages never expire.
 */
export function effectiveRetentionSeconds(retentionSeconds: number, plan: Plan): number {
  const limit = plan.retentionLimitSeconds;
  if (limit === 0) return retentionSeconds;
  return retentionSeconds === 0 ? limit : Math.min(retentionSeconds, limit);
}

export function settingsView(settings: Settings, plan: Plan): SettingsView {
  return {
    leaseTimeoutSeconds: settings.leaseTimeoutSeconds,
    maxRetries: settings.maxRetries,
    dedupWindowSeconds: settings.dedupWindowSeconds,
    retentionSeconds: settings.retentionSeconds,
    effectiveRetentionSeconds: effectiveRetentionSeconds(settings.retentionSeconds, plan),
    recvRateLimit: { intervalMicros: settings.rateIntervalMicros, burst: settings.rateBurst },
  };
}

export function settingsEqual(a: Settings, b: Settings): boolean {
  return (
    a.leaseTimeoutSeconds === b.leaseTimeoutSeconds &&
    a.maxRetries === b.maxRetries &&
    a.dedupWindowSeconds === b.dedupWindowSeconds &&
    a.retentionSeconds === b.retentionSeconds &&
    a.rateIntervalMicros === b.rateIntervalMicros &&
    a.rateBurst === b.rateBurst
  );
}
