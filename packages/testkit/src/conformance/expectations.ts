// Assertions shared by every area of the suite. Each failure message carries the response, so a
// red test in CI says what the server answered without a rerun.

import { expect } from 'vitest';
import { header, jsonBody, type RawResponse } from './http.js';

/** Lease and handle tokens (decisions: `^[A-Za-z0-9_-]{16,128}$`). */
export const tokenPattern = /^[A-Za-z0-9_-]{16,128}$/;

/** RFC 3339 UTC with milliseconds, as the decisions fix it. */
export const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The 7 counts and 7 cumulative counters of a Stats object. */
export const statsFields = [
  'total',
  'dataBytes',
  'delayed',
  'visible',
  'pending',
  'failed',
  'unavailable',
  'addedTotal',
  'ackedTotal',
  'nackedTotal',
  'releasedTotal',
  'failedTotal',
  'discardedTotal',
  'expiredTotal',
] as const;

export type StatsField = (typeof statsFields)[number];
export type Stats = Record<StatsField, number>;

/** One-line description of a response for assertion messages. */
export function describeResponse(response: RawResponse): string {
  const text = response.body.toString('utf8');
  const shown = text.length > 300 ? `${text.slice(0, 300)}...` : text;
  return `HTTP ${response.status} ${JSON.stringify(response.headers)} ${shown}`;
}

/** Asserts the status code, printing the whole response when it differs. */
export function expectStatus(response: RawResponse, status: number): void {
  expect(response.status, describeResponse(response)).toBe(status);
}

/**
 * Asserts an error answer: the status, `Content-Type: application/json` and a body that is
 * exactly `{kind, message, details}` with `details` an object. `details` given here must be a
 * subset of the body's details. Returns the parsed body for further checks.
 */
export function expectError(
  response: RawResponse,
  status: number,
  kind: string,
  details?: Record<string, unknown>,
): { kind: string; message: string; details: Record<string, unknown> } {
  expectStatus(response, status);
  expect(header(response, 'content-type') ?? '', describeResponse(response)).toMatch(
    /^application\/json\b/,
  );
  const body = jsonBody(response) as Record<string, unknown>;
  expect(Object.keys(body).sort(), describeResponse(response)).toEqual([
    'details',
    'kind',
    'message',
  ]);
  expect(body.kind, describeResponse(response)).toBe(kind);
  expect(typeof body.message).toBe('string');
  expect(typeof body.details === 'object' && body.details !== null).toBe(true);
  expect(Array.isArray(body.details)).toBe(false);
  if (details !== undefined) expect(body.details).toMatchObject(details);
  return body as { kind: string; message: string; details: Record<string, unknown> };
}

/** 410 `gone` with the given `details.reason`. */
export function expectGone(response: RawResponse, reason: string): void {
  expectError(response, 410, 'gone', { reason });
}

/** 400 `invalid_argument`; when `field` is given, `details.field` must mention it. */
export function expectInvalidArgument(response: RawResponse, field?: string): void {
  const body = expectError(response, 400, 'invalid_argument');
  if (field === undefined) return;
  expect(typeof body.details.field, describeResponse(response)).toBe('string');
  expect(String(body.details.field).toLowerCase(), describeResponse(response)).toContain(
    field.toLowerCase(),
  );
}

/** 400 `unknown_header` whose `details.header` names `name` (compared case-insensitively). */
export function expectUnknownHeader(response: RawResponse, name: string): void {
  const body = expectError(response, 400, 'unknown_header');
  expect(String(body.details.header).toLowerCase(), describeResponse(response)).toBe(
    name.toLowerCase(),
  );
}

/** A 204 carries no body. */
export function expectNoContent(response: RawResponse): void {
  expectStatus(response, 204);
  expect(response.body.byteLength).toBe(0);
}

/** Asserts an RFC 3339 UTC millisecond timestamp and returns it as epoch milliseconds. */
export function expectTimestamp(value: unknown): number {
  expect(typeof value, `timestamp ${String(value)}`).toBe('string');
  expect(value).toMatch(timestampPattern);
  const ms = Date.parse(value as string);
  expect(Number.isFinite(ms)).toBe(true);
  return ms;
}

/** Asserts a Stats object: exactly the 14 integer fields, none negative. */
export function expectStatsShape(stats: unknown): Stats {
  expect(typeof stats).toBe('object');
  const record = stats as Record<string, unknown>;
  expect(Object.keys(record).sort()).toEqual([...statsFields].sort());
  for (const field of statsFields) {
    expect(Number.isInteger(record[field]), `${field}=${String(record[field])}`).toBe(true);
    expect(record[field] as number).toBeGreaterThanOrEqual(0);
  }
  return record as Stats;
}

/** A Stats object of zeros with the given fields set, for exact comparisons. */
export function statsWith(values: Partial<Stats>): Stats {
  const stats = Object.fromEntries(statsFields.map((field) => [field, 0])) as Stats;
  return { ...stats, ...values };
}
