// Receive: the 200 and 204 answers, lease headers, exclusivity, FIFO order, waitSeconds rules,
// long polls that wake, and recvRateLimit.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { header } from './http.js';
import {
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
  tokenPattern,
} from './expectations.js';

/** Slack between the test's clock and the server's when checking a computed expiry. */
const clockSlackMs = 5_000;

/**
 * Gives a request already written to the wire a chance to reach the server before the next step:
 * two full round trips on other connections. Ordering, not time, is what the test relies on.
 */
async function letServerSeeEarlierRequests(api: Api, queue: string): Promise<void> {
  expectStatus(await api.describeQueue(queue), 200);
  expectStatus(await api.describeQueue(queue), 200);
}

export function defineReceiveTests(getApi: () => Api): void {
  describe('receive', () => {
    it('answers 204 with no body on an empty queue with waitSeconds=0', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      expectNoContent(await api.recv(queue, 0));
    });

    it('answers 200 with the payload and Svc-Lease, Svc-Message-Id, Svc-Message-Retries, ' +
      'Svc-Lease-Expires-At', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 120 });
      const messageId = await api.sendOk(queue, 'payload-1');
      const before = Date.now();
      const response = await api.recv(queue, 0);
      const after = Date.now();
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('payload-1');
      expect(header(response, 'content-type') ?? '').toMatch(/^application\/octet-stream\b/);
      expect(header(response, 'svc-lease') ?? '').toMatch(tokenPattern);
      expect(header(response, 'svc-message-id')).toBe(messageId);
      expect(header(response, 'svc-message-retries')).toBe('0');
      const expiresMs = expectTimestamp(header(response, 'svc-lease-expires-at'));
      expect(expiresMs).toBeGreaterThanOrEqual(before + 120_000 - clockSlackMs);
      expect(expiresMs).toBeLessThanOrEqual(after + 120_000 + clockSlackMs);
    });

    it('omits Svc-Lease-Expires-At on a queue without a lease timeout', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 0 });
      await api.sendOk(queue, 'x');
      const response = await api.recv(queue, 0);
      expectStatus(response, 200);
      expect(header(response, 'svc-lease') ?? '').toMatch(tokenPattern);
      expect(header(response, 'svc-lease-expires-at')).toBeUndefined();
    });

    it('hands a leased message to no other receiver', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'only');
      await api.recvOk(queue);
      expectNoContent(await api.recv(queue, 0));
      const items = (await api.listMessagesOk(queue)).items;
      expect(items.map((item) => item.state)).toEqual(['pending']);
    });

    it('delivers visible messages in send order', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const ids: string[] = [];
      for (let index = 0; index < 6; index += 1) ids.push(await api.sendOk(queue, `fifo-${index}`));
      const delivered: string[] = [];
      const payloads: string[] = [];
      for (let index = 0; index < 6; index += 1) {
        const delivery = await api.recvOk(queue);
        delivered.push(delivery.messageId);
        payloads.push(delivery.payload.toString());
      }
      expect(delivered).toEqual(ids);
      expect(payloads).toEqual(ids.map((_, index) => `fifo-${index}`));
      expectNoContent(await api.recv(queue, 0));
    });

    it('puts a nacked or released message back at its place by send order, ahead of later ' +
      'sends', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const first = await api.sendOk(queue, 'a');
      const second = await api.sendOk(queue, 'b');
      const leased = await api.recvOk(queue);
      expect(leased.messageId).toBe(first);
      expectNoContent(await api.nack(leased.lease));
      const again = await api.recvOk(queue);
      expect(again.messageId).toBe(first);
      expect(again.retries).toBe(1);
      expectNoContent(await api.release(again.lease));
      const third = await api.recvOk(queue);
      expect(third.messageId).toBe(first);
      expect(third.retries).toBe(1);
      expect((await api.recvOk(queue)).messageId).toBe(second);
    });

    it('accepts waitSeconds 0..20 and refuses anything else with 400 ' +
      'invalid_argument', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      for (const bad of ['21', '-1', '1.5', 'abc', '+1', '', '1e1', '100000000000000000000']) {
        expectInvalidArgument(await api.recv(queue, bad), 'waitSeconds');
      }
      await api.sendOk(queue, 'ready');
      // A message is ready, so the maximum wait returns at once.
      const response = await api.recv(queue, 20);
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('ready');
    });

    it('without waitSeconds still delivers a ready message', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'ready');
      const response = await api.recv(queue, null);
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('ready');
    });

    it('is 404 queue_not_found on an unknown queue', async () => {
      const api = getApi();
      expectError(await api.recv(api.target.newQueueName(), 0), 404, 'queue_not_found');
    });

    it('a long poll wakes when a message is sent', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const waiting = api.recv(queue, 5);
      await letServerSeeEarlierRequests(api, queue);
      const messageId = await api.sendOk(queue, 'wake-up');
      const response = await waiting;
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('wake-up');
      expect(header(response, 'svc-message-id')).toBe(messageId);
    });

    it('a long poll wakes when a lease returns its message (nack)', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const messageId = await api.sendOk(queue, 'returned');
      const holder = await api.recvOk(queue);
      const waiting = api.recv(queue, 5);
      await letServerSeeEarlierRequests(api, queue);
      expectNoContent(await api.nack(holder.lease));
      const response = await waiting;
      expectStatus(response, 200);
      expect(header(response, 'svc-message-id')).toBe(messageId);
      expect(header(response, 'svc-message-retries')).toBe('1');
    });

    it('a long poll whose client went away does not take the next message', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const abandoned = api.startRecv(queue, 20);
      await letServerSeeEarlierRequests(api, queue);
      abandoned.abort();
      await expect(abandoned.response).rejects.toThrow();
      await letServerSeeEarlierRequests(api, queue);
      const messageId = await api.sendOk(queue, 'for the living');
      // Were the message handed to the vanished receiver and kept, this would answer 204.
      const response = await api.recv(queue, 10);
      expectStatus(response, 200);
      expect(header(response, 'svc-message-id')).toBe(messageId);
      expect(header(response, 'svc-message-retries')).toBe('0');
      expect(await api.queueStats(queue)).toMatchObject({
        pending: 1,
        nackedTotal: 0,
        failedTotal: 0,
      });
    });

    it('recvRateLimit: a receive the bucket refuses waits within waitSeconds for a ' +
      'refill', async () => {
      const api = getApi();
      const queue = await api.createQueue({ recvRateLimit: { intervalMicros: 200_000, burst: 1 } });
      await api.sendOk(queue, 'first');
      await api.sendOk(queue, 'second');
      expect((await api.recvOk(queue)).payload.toString()).toBe('first');
      // The bucket is empty now; a refill is due within the wait, so this must not answer 204.
      const response = await api.recv(queue, 10);
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('second');
    });

    it('recvRateLimit: a new queue releases its burst, then answers 204 within ' +
      'waitSeconds=0', async () => {
      const api = getApi();
      // One token per ten minutes: nothing refills while the test runs.
      const queue = await api.createQueue({
        recvRateLimit: { intervalMicros: 600_000_000, burst: 2 },
      });
      for (let index = 0; index < 4; index += 1) await api.sendOk(queue, `r${index}`);
      expect((await api.recvOk(queue)).payload.toString()).toBe('r0');
      expect((await api.recvOk(queue)).payload.toString()).toBe('r1');
      expectNoContent(await api.recv(queue, 0));
      const stats = await api.queueStats(queue);
      expect(stats.visible).toBe(2);
      expect(stats.pending).toBe(2);
      expectStatus(await api.patchQueue(queue, { recvRateLimit: null }), 200);
      expect((await api.recvOk(queue)).payload.toString()).toBe('r2');
    });
  });
}
