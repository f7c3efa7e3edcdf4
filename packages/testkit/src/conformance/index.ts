// The HTTP conformance suite: one suite, parameterised by target, exercising every operation,
// status and error kind of the /v1 interface as interface.md and decisions.md define them.
// It runs unchanged against the local in-memory variant, `mq serve` and a cluster's gateway.

import { afterAll, describe } from 'vitest';
import { Api } from './api.js';
import { defineAckAndSendTests } from './ackAndSend.js';
import { defineAuthTests } from './auth.js';
import { defineDedupTests } from './dedup.js';
import { defineDelayTests } from './delays.js';
import { defineDrainTests } from './drain.js';
import { defineErrorTests } from './errors.js';
import { defineFailureTests } from './failures.js';
import { defineHandleTests } from './handles.js';
import { defineHeaderTests } from './headers.js';
import { defineHealthTests } from './health.js';
import { defineLimitTests } from './limits.js';
import { defineListingTests } from './listings.js';
import { checkExchangesAgainstOpenApi, defineOpenApiTests } from './openapi.js';
import { defineQueueTests } from './queues.js';
import { defineReceiveTests } from './receive.js';
import { defineRetentionTests } from './retention.js';
import { defineSendTests } from './send.js';
import { defineSettleTests } from './settle.js';
import { defineStatsTests } from './stats.js';
import { defineTokenTests } from './tokens.js';
import type { ConformanceTarget } from './target.js';

export { Api } from './api.js';
export { headersOnlyRequest, observeExchanges, rawRequest, startRequest } from './http.js';
export type {
  BodyFraming,
  ExchangeObserver,
  PendingExchange,
  RawRequest,
  RawResponse,
} from './http.js';
export { OpenApiMismatch } from './openapi.js';
export { capabilitiesOf, localCapabilities } from './target.js';
export type { ConformanceCapabilities, ConformanceTarget } from './target.js';
export { queueNamer } from './names.js';

/** Deleting a few hundred queues one by one, on a cluster where each is a replicated write. */
const cleanupTimeoutMs = 120_000;

/**
 * Declares the whole conformance suite (vitest `describe`/`it`) under `conformance: <name>`.
 * `getTarget` is called lazily from inside tests, so it may read state set in `beforeAll`
 * (for example a server's ephemeral port). Queues are created with `newQueueName()` and
 * force-deleted after the suite; while it runs, the spool holds a few hundred of them (and, in
 * the last test, as many as the plan's queue limit).
 */
export function defineConformanceSuite(name: string, getTarget: () => ConformanceTarget): void {
  let cached: { target: ConformanceTarget; api: Api } | undefined;
  const getApi = (): Api => {
    const target = getTarget();
    if (cached === undefined || cached.target !== target) cached = { target, api: new Api(target) };
    return cached.api;
  };
  describe(`conformance: ${name}`, () => {
    // First, so that its after-hook runs last, once the cleanup's exchanges were checked too.
    checkExchangesAgainstOpenApi();
    afterAll(async () => {
      await cached?.api.deleteCreatedQueues();
    }, cleanupTimeoutMs);
    defineHealthTests(getApi);
    defineOpenApiTests(getApi);
    defineAuthTests(getApi);
    defineErrorTests(getApi);
    defineHeaderTests(getApi);
    defineQueueTests(getApi);
    defineRetentionTests(getApi);
    defineSendTests(getApi);
    defineReceiveTests(getApi);
    defineSettleTests(getApi);
    defineTokenTests(getApi);
    defineHandleTests(getApi);
    defineFailureTests(getApi);
    defineAckAndSendTests(getApi);
    defineDedupTests(getApi);
    defineDelayTests(getApi);
    defineListingTests(getApi);
    defineStatsTests(getApi);
    defineDrainTests(getApi);
    // Last: it fills the spool to its queue limit before emptying what it made.
    defineLimitTests(getApi);
  });
}
