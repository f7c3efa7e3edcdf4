// Plan limits reachable through the API alone: the number of queues on a spool (403
// queue_limit). Runs last in the suite because it fills the spool to its limit, then empties
// what it made.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { jsonBody } from './http.js';
import { expectError, expectNoContent, expectStatus } from './expectations.js';

async function queueCountOf(api: Api): Promise<number> {
  const response = await api.call('GET', api.spoolPath());
  expectStatus(response, 200);
  return (jsonBody(response) as { queueCount: number }).queueCount;
}

/** Generous: creating and deleting up to a thousand queues on a loaded machine. */
const fillTimeoutMs = 180_000;

export function defineLimitTests(getApi: () => Api): void {
  describe('plan limits', () => {
    it(
      'creating a queue past the plan queue limit is 403 queue_limit; deleting one makes room',
      async () => {
        const api = getApi();
        const limit = api.capabilities.queueLimit;
        const created: string[] = [];
        let refused: Awaited<ReturnType<Api['putQueue']>> | undefined;
        // At most `limit` creations can succeed, so one more attempt must be refused.
        for (let attempt = 0; attempt <= limit; attempt += 1) {
          const name = api.target.newQueueName();
          const response = await api.putQueue(name);
          if (response.status !== 201) {
            refused = response;
            break;
          }
          created.push(name);
        }
        const countBefore = limit - created.length;
        try {
          expect(refused, `created ${created.length} queues without a refusal`).toBeDefined();
          if (refused !== undefined) expectError(refused, 403, 'queue_limit');
          expect(await queueCountOf(api)).toBe(limit);
          expectError(await api.putQueue(api.target.newQueueName()), 403, 'queue_limit');
          const freed = created.pop();
          expect(freed).toBeDefined();
          expectNoContent(await api.deleteQueue(freed ?? '', 'force'));
          const again = api.target.newQueueName();
          expectStatus(await api.putQueue(again), 201);
          created.push(again);
        } finally {
          for (const name of created) await api.deleteQueue(name, 'force');
        }
        expect(await queueCountOf(api)).toBe(countBefore);
      },
      fillTimeoutMs,
    );
  });
}
