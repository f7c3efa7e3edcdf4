// The JSON body of create (PUT) and update (PATCH): a subset of the queue settings. Unknown fields
// at any depth are unknown_field, wrong types or ranges invalid_argument, both naming the field
// by its dotted path (`recvRateLimit.burst`).

import { MqError, invalidArgument, type RecvRateLimit, type SettingsInput } from '@spoolmq/engine';

export interface IntegerRule {
  readonly min: number;
  readonly max: number;
  /** Values in [0, gapBelow) other than 0 are refused (retention: 0 or at least 60). */
  readonly zeroOrAtLeast?: number;
}

export const TOP_LEVEL_RULES: Readonly<Record<string, IntegerRule>> = {
  leaseTimeoutSeconds: { min: 0, max: 31_536_000 },
  maxRetries: { min: 0, max: 65_535 },
  dedupWindowSeconds: { min: 0, max: 300 },
  // The plan's retention limit is the service's to enforce (403 retention_limit).
  retentionSeconds: { min: 0, max: Number.MAX_SAFE_INTEGER, zeroOrAtLeast: 60 },
};

export const RATE_LIMIT_RULES: Readonly<Record<'intervalMicros' | 'burst', IntegerRule>> = {
  intervalMicros: { min: 10_000, max: Number.MAX_SAFE_INTEGER },
  burst: { min: 1, max: 2_147_483_647 },
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unknownField(field: string): MqError {
  return new MqError('unknown_field', `unknown field ${field}`, { field });
}

function integerField(field: string, value: unknown, rule: IntegerRule): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw invalidArgument(field, `${field} must be an integer`);
  }
  if (value < rule.min || value > rule.max) {
    throw invalidArgument(field, `${field} must be between ${rule.min} and ${rule.max}`);
  }
  if (rule.zeroOrAtLeast !== undefined && value !== 0 && value < rule.zeroOrAtLeast) {
    throw invalidArgument(field, `${field} must be 0 or at least ${rule.zeroOrAtLeast}`);
  }
  return value;
}

function rateLimitField(value: unknown): RecvRateLimit | null {
  if (value === null) return null;
  if (!isPlainObject(value)) {
    throw invalidArgument('recvRateLimit', 'recvRateLimit must be an object or null');
  }
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(RATE_LIMIT_RULES, key)) throw unknownField(`recvRateLimit.${key}`);
  }
  const parsed: Record<string, number> = {};
  for (const [key, rule] of Object.entries(RATE_LIMIT_RULES)) {
    const field = `recvRateLimit.${key}`;
    if (!Object.hasOwn(value, key)) throw invalidArgument(field, `${field} is required`);
    parsed[key] = integerField(field, value[key], rule);
  }
  return { intervalMicros: parsed['intervalMicros'] as number, burst: parsed['burst'] as number };
}

/**
 * Validates a parsed create or update body. `body` must be a JSON object (else invalid_json);
 * returns the settings it sets, absent fields left out. `recvRateLimit: null` is kept as null
 * (no limit). Throws unknown_field or invalid_argument with `details.field`.
 */
export function parseSettingsBody(body: unknown): SettingsInput {
  if (!isPlainObject(body)) throw new MqError('invalid_json', 'the body must be a JSON object');
  const settings: Record<string, number | RecvRateLimit | null> = {};
  for (const key of Object.keys(body)) {
    if (key === 'recvRateLimit') {
      settings[key] = rateLimitField(body[key]);
      continue;
    }
    const rule = Object.hasOwn(TOP_LEVEL_RULES, key) ? TOP_LEVEL_RULES[key] : undefined;
    if (rule === undefined) throw unknownField(key);
    settings[key] = integerField(key, body[key], rule);
  }
  return settings as SettingsInput;
}

/**
 * Parses the raw bytes of a JSON body (UTF-8). Empty input means `{}`. Throws invalid_json when
 * the bytes are not UTF-8 or not JSON.
 */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  if (bytes.length === 0) return {};
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MqError('invalid_json', 'the body is not UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new MqError('invalid_json', 'the body is not valid JSON');
  }
}
