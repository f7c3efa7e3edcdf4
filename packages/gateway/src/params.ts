// Parameters several operations share, read from the validated header view and query. Each
// throws 400 invalid_argument naming the header or parameter when its rule fails.

import { invalidArgument } from '@spoolmq/engine';
import { DELAY_MAX_MS, parseDurationMs } from './duration.js';
import type { Query } from './query.js';
import { SVC, canonicalHeaderName, type RequestHeaders } from './request-headers.js';
import { checkCursor, checkToken, parseBoolean, parseInteger } from './scalars.js';

export const DELAY_MAX_SECONDS = DELAY_MAX_MS / 1000;
export const WAIT_SECONDS_MAX = 20;
export const PAGE_LIMIT_MAX = 1_000;
export const PAGE_LIMIT_DEFAULT = 100;

/** A token header (`svc-lease` / `svc-handle`) when present, syntax-checked (16-128 chars). */
export function optionalToken(headers: RequestHeaders, name: string): string | undefined {
  const value = headers.svc.get(name);
  return value === undefined ? undefined : checkToken(canonicalHeaderName(name), value);
}

/** A token header that must be present; its absence is invalid_argument. */
export function requiredToken(headers: RequestHeaders, name: string): string {
  const token = optionalToken(headers, name);
  if (token === undefined) {
    const header = canonicalHeaderName(name);
    throw invalidArgument(header, `header ${header} is required`);
  }
  return token;
}

/** `Svc-Delay-Seconds` (integer 0-604,800) in milliseconds; 0 when absent. */
export function delaySecondsMs(headers: RequestHeaders): number {
  const value = headers.svc.get(SVC.delaySeconds);
  if (value === undefined) return 0;
  return parseInteger('Svc-Delay-Seconds', value, 0, DELAY_MAX_SECONDS) * 1000;
}

/** `Svc-Delay` (a duration, at most 168h) in milliseconds; 0 when absent. */
export function delayDurationMs(headers: RequestHeaders): number {
  const value = headers.svc.get(SVC.delay);
  return value === undefined ? 0 : parseDurationMs('Svc-Delay', value);
}

/** A boolean query parameter, `fallback` when absent. */
export function booleanParam(query: Query, name: string, fallback: boolean): boolean {
  const value = query.one(name);
  return value === undefined ? fallback : parseBoolean(name, value);
}

/** `limit`: 1-1000, default 100. */
export function limitParam(query: Query): number {
  const value = query.one('limit');
  return value === undefined ? PAGE_LIMIT_DEFAULT : parseInteger('limit', value, 1, PAGE_LIMIT_MAX);
}

/** `after`: a cursor of 1-256 characters, or undefined. */
export function afterParam(query: Query): string | undefined {
  const value = query.one('after');
  return value === undefined ? undefined : checkCursor('after', value);
}

/** `waitSeconds`: 0-20, default 20. */
export function waitSecondsParam(query: Query): number {
  const value = query.one('waitSeconds');
  if (value === undefined) return WAIT_SECONDS_MAX;
  return parseInteger('waitSeconds', value, 0, WAIT_SECONDS_MAX);
}
