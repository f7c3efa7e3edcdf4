// Authentication: `Authorization: Bearer <key>` on every API request. A key anywhere else (a
// query string) never counts. What a key may do is decided by the injected `authenticate`.

import { MqError } from '@spoolmq/engine';
import type { Principal } from './accounts/account-directory.js';

/** Checks a key; resolves with its principal (undefined: any key acts, unscoped). */
export type Authenticate = (key: string) => Principal | void | Promise<Principal | void>;

/** Longest key accepted for checking; real keys are far shorter. */
export const API_KEY_MAX_CHARS = 1_024;
const BEARER_PATTERN = /^Bearer +([\x21-\x7E]+) *$/i;

/**
 * The key of an `Authorization` header value. Throws 401 unauthenticated when the header is
 * missing, is not the Bearer scheme, or the key is empty or over API_KEY_MAX_CHARS.
 */
export function bearerKey(authorization: string | undefined): string {
  if (authorization === undefined) {
    throw new MqError('unauthenticated', 'an Authorization: Bearer <key> header is required');
  }
  const match = BEARER_PATTERN.exec(authorization);
  const key = match?.[1];
  if (key === undefined || key.length > API_KEY_MAX_CHARS) {
    throw new MqError('unauthenticated', 'the Authorization header must be Bearer <key>');
  }
  return key;
}

/**
 * Authenticates a request from its `Authorization` header value: the principal, or undefined when
 * there is no `authenticate` (any key acts) or it named none. Throws (or rejects) with 401 for a
 * missing or malformed header, or with whatever `authenticate` throws (401/402/403/429/503).
 */
export function authenticateRequest(
  authorization: string | undefined,
  authenticate: Authenticate | undefined,
): Principal | void | Promise<Principal | void> {
  const key = bearerKey(authorization);
  if (authenticate !== undefined) return authenticate(key);
}
