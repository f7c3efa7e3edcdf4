// The one place an error becomes an HTTP response. Every error body is
// `{"kind","message","details"}` as application/json, except the blocked-key 403 whose body has
// no `kind`. 429 and 507 `storage_full` carry a whole-second `Retry-After` of at least 1; 503
// carries `Retry-After: 1`.

import { MqError, isMqError } from '@spoolmq/engine';

const JSON_TYPE = 'application/json';

/** Kinds whose wait travels in `Retry-After` (from the details), not in the body. */
const RETRY_AFTER_KINDS: ReadonlySet<string> = new Set(['rate_limited', 'storage_full']);

/**
 * Seconds a 429 or a 507 storage_full asks the client to wait: from `details.retryAfterMs` or
 * `details.retryAfterSeconds` when the service gave one, rounded up, at least 1.
 */
function retryAfterSeconds(details: MqError['details']): number {
  const ms = details['retryAfterMs'];
  const seconds = details['retryAfterSeconds'];
  let wait = 1;
  if (typeof ms === 'number' && Number.isFinite(ms)) wait = Math.ceil(ms / 1000);
  else if (typeof seconds === 'number' && Number.isFinite(seconds)) wait = Math.ceil(seconds);
  return Math.max(1, wait);
}

/** Details as shown to the client: the wait travels in Retry-After, not the body. */
function publicDetails(error: MqError): MqError['details'] {
  if (!RETRY_AFTER_KINDS.has(error.kind)) return error.details;
  const { retryAfterMs: _ms, retryAfterSeconds: _s, ...rest } = error.details;
  return rest;
}

/** Renders an `MqError` with its status, kind, message and details. */
export function mqErrorResponse(error: MqError): Response {
  const details = publicDetails(error);
  const body =
    error.kind === 'key_blocked'
      ? { message: error.message, details }
      : { kind: error.kind, message: error.message, details };
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  if (RETRY_AFTER_KINDS.has(error.kind)) {
    headers['retry-after'] = String(retryAfterSeconds(error.details));
  }
  if (error.status === 503) headers['retry-after'] = '1';
  if (error.status === 401) headers['www-authenticate'] = 'Bearer';
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

/**
 * Renders any thrown value: an `MqError` as itself, anything else as 500 `internal` after
 * handing it to `log` (the client never sees internal messages).
 */
export function errorResponse(error: unknown, log: (error: unknown) => void): Response {
  if (isMqError(error)) return mqErrorResponse(error);
  log(error);
  return mqErrorResponse(new MqError('internal', 'internal error'));
}
