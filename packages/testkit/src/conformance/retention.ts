// Retention settings and the retention clock as the listing's expiresAt shows it. Expiry itself
// needs at least 60 s and is left to slower suites; here the rules about the clock are checked.

import { describe, expect, it } from 'vitest';
import { jsonBody } from './http.js';
import type { Api } from './api.js';
import { expectError, expectNoContent, expectStatus, expectTimestamp } from './expectations.js';
import { expectQueueObject } from './queues.js';

const slackMs = 5_000;

async function expiresAtOf(api: Api, queue: string, messageId: string): Promise<number> {
  const item = await api.messageById(queue, messageId);
  return expectTimestamp(item?.expiresAt);
}

export function defineRetentionTests(getApi: () => Api): void {
  describe('retention', () => {
    it('defaults to the plan default, bounded by the plan limit', async () => {
      const api = getApi();
      const name = await api.createQueue();
      const { settings } = await api.describeQueueOk(name);
      const { defaultRetentionSeconds, retentionLimitSeconds } = api.capabilities;
      expect(settings.retentionSeconds).toBe(defaultRetentionSeconds);
      expect(settings.effectiveRetentionSeconds).toBe(
        Math.min(defaultRetentionSeconds, retentionLimitSeconds),
      );
    });

    it('0 means no expiry as set, and the plan limit makes it effective at the limit', async () => {
      const api = getApi();
      const name = api.target.newQueueName();
      const response = await api.putQueue(name, { retentionSeconds: 0 });
      expectStatus(response, 201);
      const { settings } = expectQueueObject(jsonBody(response), name);
      expect(settings.retentionSeconds).toBe(0);
      expect(settings.effectiveRetentionSeconds).toBe(api.capabilities.retentionLimitSeconds);
    });

    it('accepts 60 and the plan limit; above the limit is 403 retention_limit on create and ' +
      'update', async () => {
      const api = getApi();
      const limit = api.capabilities.retentionLimitSeconds;
      const low = await api.createQueue({ retentionSeconds: 60 });
      expect((await api.describeQueueOk(low)).settings).toMatchObject({
        retentionSeconds: 60,
        effectiveRetentionSeconds: 60,
      });
      const high = await api.createQueue({ retentionSeconds: limit });
      expect((await api.describeQueueOk(high)).settings.effectiveRetentionSeconds).toBe(limit);
      const refused = api.target.newQueueName();
      const tooLong = { retentionSeconds: limit + 1 };
      expectError(await api.putQueue(refused, tooLong), 403, 'retention_limit');
      expectError(await api.describeQueue(refused), 404, 'queue_not_found');
      expectError(await api.patchQueue(low, tooLong), 403, 'retention_limit');
      const patched = await api.patchQueue(low, { retentionSeconds: 120 });
      expectStatus(patched, 200);
      expect(expectQueueObject(jsonBody(patched), low).settings).toMatchObject({
        retentionSeconds: 120,
        effectiveRetentionSeconds: 120,
      });
    });

    it('a visible message expires effectiveRetentionSeconds after it became visible', async () => {
      const api = getApi();
      const queue = await api.createQueue({ retentionSeconds: 600 });
      const start = Date.now();
      const messageId = await api.sendOk(queue, 'ages');
      const item = await api.messageById(queue, messageId);
      const createdMs = expectTimestamp(item?.createdAt);
      const expiresMs = expectTimestamp(item?.expiresAt);
      expect(expiresMs).toBeGreaterThanOrEqual(createdMs + 600_000);
      expect(expiresMs).toBeGreaterThanOrEqual(start + 600_000 - slackMs);
      expect(expiresMs).toBeLessThanOrEqual(Date.now() + 600_000 + slackMs);
    });

    it('nack and release return a message with its retention clock as it was', async () => {
      const api = getApi();
      const queue = await api.createQueue({ retentionSeconds: 600 });
      const messageId = await api.sendOk(queue, 'clock');
      const original = await expiresAtOf(api, queue, messageId);
      expectNoContent(await api.nack((await api.recvOk(queue)).lease));
      expect(await expiresAtOf(api, queue, messageId)).toBe(original);
      expectNoContent(await api.release((await api.recvOk(queue)).lease));
      expect(await expiresAtOf(api, queue, messageId)).toBe(original);
    });

    it('failing and recovering restart the retention clock', async () => {
      const api = getApi();
      const queue = await api.createQueue({ retentionSeconds: 600 });
      const messageId = await api.sendOk(queue, 'restart');
      const original = await expiresAtOf(api, queue, messageId);
      const failStart = Date.now();
      expectNoContent(await api.fail((await api.recvOk(queue)).lease));
      const afterFail = await expiresAtOf(api, queue, messageId);
      expect(afterFail).toBeGreaterThanOrEqual(original);
      expect(afterFail).toBeGreaterThanOrEqual(failStart + 600_000 - slackMs);
      const failed = await api.listMessagesOk(queue, '?state=failed&handle=true');
      const handle = failed.items[0]?.handle ?? '';
      const recoverStart = Date.now();
      expectNoContent(await api.tokenOp('recover', { 'Svc-Handle': handle }));
      const afterRecover = await expiresAtOf(api, queue, messageId);
      expect(afterRecover).toBeGreaterThanOrEqual(afterFail);
      expect(afterRecover).toBeGreaterThanOrEqual(recoverStart + 600_000 - slackMs);
    });
  });
}
