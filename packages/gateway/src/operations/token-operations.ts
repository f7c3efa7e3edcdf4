// Operations that act through a lease or handle and take no body: ack, nack, release, fail,
// renew, recover and discard. The gateway checks that the right token headers are present and
// well formed; whether a token verifies (410, 400 token_kind) is the service's answer.

import { invalidArgument, type SpoolService, type TokenRef } from '@spoolmq/engine';
import type { Operation } from '../operation.js';
import { delayDurationMs, delaySecondsMs, optionalToken, requiredToken } from '../params.js';
import { SVC, type RequestHeaders } from '../request-headers.js';
import { emptyResponse } from '../responses.js';
import { timestamp } from '../views.js';

const LEASE_ONLY: ReadonlySet<string> = new Set([SVC.lease]);

type LeaseAction = (service: SpoolService, spool: string, lease: string) => Promise<void>;

/** An operation whose only input is `Svc-Lease`, answering 204. */
function leaseOperation(name: string, act: LeaseAction): Operation<string> {
  return {
    name,
    svcHeaders: LEASE_ONLY,
    query: {},
    scope: 'spool',
    parse: (request) => requiredToken(request.headers, SVC.lease),
    async run(request, lease) {
      await act(request.deps.service, request.spool, lease);
      return emptyResponse(204);
    },
  };
}

export const ack = leaseOperation('ack', (service, spool, lease) => service.ack(spool, lease));
export const nack = leaseOperation('nack', (service, spool, lease) => service.nack(spool, lease));
export const fail = leaseOperation('fail', (service, spool, lease) => service.fail(spool, lease));

export const release: Operation<{ readonly lease: string; readonly delayMs: number }> = {
  name: 'release',
  svcHeaders: new Set([SVC.lease, SVC.delay]),
  query: {},
  scope: 'spool',
  parse: (request) => ({
    lease: requiredToken(request.headers, SVC.lease),
    delayMs: delayDurationMs(request.headers),
  }),
  async run(request, { lease, delayMs }) {
    await request.deps.service.release(request.spool, lease, delayMs);
    return emptyResponse(204);
  },
};

export const renew: Operation<string> = {
  name: 'renew',
  svcHeaders: LEASE_ONLY,
  query: {},
  scope: 'spool',
  parse: (request) => requiredToken(request.headers, SVC.lease),
  async run(request, lease) {
    const renewed = await request.deps.service.renew(request.spool, lease);
    const headers: Record<string, string> = {};
    if (renewed.leaseExpiresAtMs !== undefined) {
      headers['svc-lease-expires-at'] = timestamp(renewed.leaseExpiresAtMs);
    }
    return emptyResponse(204, headers);
  },
};

/** Exactly one of `Svc-Lease` and `Svc-Handle`; both or neither is invalid_argument. */
export function oneToken(headers: RequestHeaders): TokenRef {
  const lease = optionalToken(headers, SVC.lease);
  const handle = optionalToken(headers, SVC.handle);
  if (lease !== undefined && handle !== undefined) {
    throw invalidArgument('Svc-Lease', 'give Svc-Lease or Svc-Handle, not both');
  }
  if (lease !== undefined) return { lease };
  if (handle !== undefined) return { handle };
  throw invalidArgument('Svc-Lease', 'one of Svc-Lease or Svc-Handle is required');
}

export const recover: Operation<{ readonly token: TokenRef; readonly delayMs: number }> = {
  name: 'recover',
  svcHeaders: new Set([SVC.handle, SVC.lease, SVC.delaySeconds]),
  query: {},
  scope: 'spool',
  parse: (request) => ({
    token: oneToken(request.headers),
    delayMs: delaySecondsMs(request.headers),
  }),
  async run(request, { token, delayMs }) {
    await request.deps.service.recover(request.spool, token, delayMs);
    return emptyResponse(204);
  },
};

export const discard: Operation<TokenRef> = {
  name: 'discard',
  svcHeaders: new Set([SVC.lease, SVC.handle]),
  query: {},
  scope: 'spool',
  parse: (request) => oneToken(request.headers),
  async run(request, token) {
    await request.deps.service.discard(request.spool, token);
    return emptyResponse(204);
  },
};
