// The OpenAPI document against the running server: it is served without a key, and every
// exchange of the suite is checked against it (see ../openapi/openapi-checker.ts). A response
// the document does not list, or a request it does not describe that is not refused, fails the
// exchange at once; the list is checked again after the suite in case a test swallowed the
// failure, and every operation must have succeeded at least once.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@spoolmq/gateway';
import type { Api } from './api.js';
import { expectStatus } from './expectations.js';
import { jsonBody, observeExchanges } from './http.js';
import type { JsonRecord } from '../openapi/document-index.js';
import type { Exchange } from '../openapi/exchange.js';
import { OpenApiChecker, describeExchange } from '../openapi/openapi-checker.js';

/** The error an exchange that departs from the document fails with. */
export class OpenApiMismatch extends Error {
  constructor(exchange: Exchange, problems: readonly string[]) {
    super(`OpenAPI mismatch: ${describeExchange(exchange)}\n  - ${problems.join('\n  - ')}`);
    this.name = 'OpenApiMismatch';
  }
}

/**
 * Checks every exchange of the enclosing describe block against the document. Call it before
 * any other afterAll of the block, so its final checks run after the others (vitest runs
 * after-hooks in reverse order).
 */
export function checkExchangesAgainstOpenApi(): void {
  const document = buildOpenApiDocument() as unknown as JsonRecord;
  const checker = new OpenApiChecker(document);
  const mismatches: string[] = [];
  let stop: (() => void) | undefined;
  beforeAll(() => {
    stop = observeExchanges((exchange) => {
      const problems = checker.check(exchange);
      if (problems.length === 0) return;
      const mismatch = new OpenApiMismatch(exchange, problems);
      mismatches.push(mismatch.message);
      throw mismatch;
    });
  });
  afterAll(() => {
    stop?.();
    expect(mismatches, 'exchanges that depart from docs/openapi.json').toEqual([]);
    expect(checker.unexercised(), 'operations that never succeeded in the suite').toEqual([]);
  });
}

export function defineOpenApiTests(getApi: () => Api): void {
  describe('OpenAPI document', () => {
    it('GET /v1/openapi.json answers the OpenAPI 3.1 document without a key', async () => {
      const api = getApi();
      const response = await api.call('GET', '/openapi.json', { auth: false });
      expectStatus(response, 200);
      expect(jsonBody(response)).toEqual(buildOpenApiDocument());
    });
  });
}
