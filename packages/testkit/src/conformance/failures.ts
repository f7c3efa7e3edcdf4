// The failure queue: reading its head (and the failure lease it hands out), recover and discard
// by failure lease or by listing handle.

import { describe, expect, it } from 'vitest';
import { deliveryOf, type Api } from './api.js';
import { header } from './http.js';
import {
  expectError,
  expectGone,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
} from './expectations.js';

/** Creates a queue holding two failed messages `first` (one nack, then fail) and `second`. */
async function queueWithTwoFailures(
  api: Api,
): Promise<{ queue: string; first: string; second: string }> {
  const queue = await api.createQueue({ maxRetries: 5 });
  const first = await api.sendOk(queue, 'first-failure');
  const second = await api.sendOk(queue, 'second-failure');
  const delivery = await api.recvOk(queue);
  expect(delivery.messageId).toBe(first);
  expectNoContent(await api.nack(delivery.lease));
  const redelivery = await api.recvOk(queue);
  expect(redelivery.messageId).toBe(first);
  expectNoContent(await api.fail(redelivery.lease));
  const other = await api.recvOk(queue);
  expect(other.messageId).toBe(second);
  expectNoContent(await api.fail(other.lease));
  return { queue, first, second };
}

export function defineFailureTests(getApi: () => Api): void {
  describe('failure queue: head, recover, discard', () => {
    it('the head of an empty failure queue is 204', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'not failed');
      expectNoContent(await api.failureHead(queue));
    });

    it('the head is the oldest failed message with Svc-Lease, Svc-Message-Id, Svc-Retry-Count ' +
      'and no-store', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      const response = await api.failureHead(queue);
      expectStatus(response, 200);
      expect(response.body.toString()).toBe('first-failure');
      expect(header(response, 'cache-control') ?? '').toMatch(/no-store/);
      expect(header(response, 'svc-message-id')).toBe(first);
      expect(header(response, 'svc-retry-count')).toBe('1');
      deliveryOf(response);
    });

    it('repeated head reads return the same message until it is recovered or discarded, ' +
      'consuming nothing', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      for (let read = 0; read < 3; read += 1) {
        const response = await api.failureHead(queue);
        expectStatus(response, 200);
        expect(header(response, 'svc-message-id')).toBe(first);
      }
      const stats = await api.queueStats(queue);
      expect(stats).toMatchObject({ failed: 2, total: 2, pending: 0 });
    });

    it('a failure lease is refused by ack, nack, release, fail, renew and peek with 400 ' +
      'token_kind', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      const failureLease = deliveryOf(await api.failureHead(queue)).lease;
      expectError(await api.ack(failureLease), 400, 'token_kind');
      expectError(await api.nack(failureLease), 400, 'token_kind');
      expectError(await api.release(failureLease), 400, 'token_kind');
      expectError(await api.fail(failureLease), 400, 'token_kind');
      expectError(await api.renew(failureLease), 400, 'token_kind');
      expectError(await api.peek(failureLease), 400, 'token_kind');
      expect((await api.messageById(queue, first))?.state).toBe('failed');
      expect((await api.queueStats(queue)).ackedTotal).toBe(0);
    });

    it('discard with the failure lease removes the head; the next read returns the next failure; ' +
      'reuse is 410', async () => {
      const api = getApi();
      const { queue, first, second } = await queueWithTwoFailures(api);
      const failureLease = deliveryOf(await api.failureHead(queue)).lease;
      expectNoContent(await api.discardLease(failureLease));
      expect(await api.messageById(queue, first)).toBeUndefined();
      const next = await api.failureHead(queue);
      expectStatus(next, 200);
      expect(header(next, 'svc-message-id')).toBe(second);
      expectGone(await api.discardLease(failureLease), 'settled');
      expectNoContent(await api.discardLease(deliveryOf(next).lease));
      expectNoContent(await api.failureHead(queue));
      const stats = await api.queueStats(queue);
      expect(stats).toMatchObject({ total: 0, failed: 0, discardedTotal: 2 });
    });

    it('recover with the failure lease returns the message visible with retries reset; the lease ' +
      'is used up', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      const failureLease = deliveryOf(await api.failureHead(queue)).lease;
      expectNoContent(await api.tokenOp('recover', { 'Svc-Lease': failureLease }));
      expect(await api.messageById(queue, first)).toMatchObject({ state: 'visible', retries: 0 });
      expectGone(await api.tokenOp('recover', { 'Svc-Lease': failureLease }), 'settled');
      const delivery = await api.recvOk(queue);
      expect(delivery.messageId).toBe(first);
      expect(delivery.retries).toBe(0);
      expect(delivery.payload.toString()).toBe('first-failure');
    });

    it('recover with a listing handle returns the message; the handle is then fenced ' +
      '(410)', async () => {
      const api = getApi();
      const { queue, second } = await queueWithTwoFailures(api);
      const failed = await api.listMessagesOk(queue, '?state=failed&handle=true');
      expect(failed.items.map((item) => item.state)).toEqual(['failed', 'failed']);
      const item = failed.items.find((entry) => entry.id === second);
      const handle = item?.handle ?? '';
      expectNoContent(await api.tokenOp('recover', { 'Svc-Handle': handle }));
      expect(await api.messageById(queue, second)).toMatchObject({ state: 'visible', retries: 0 });
      expectGone(await api.tokenOp('recover', { 'Svc-Handle': handle }), 'settled');
      expectGone(await api.peek(handle), 'settled');
      expectGone(await api.discardHandle(handle), 'settled');
      const stats = await api.queueStats(queue);
      expect(stats).toMatchObject({ failed: 1, visible: 1 });
    });

    it('recover with Svc-Delay-Seconds makes the message delayed with a visibleAt', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      const failureLease = deliveryOf(await api.failureHead(queue)).lease;
      const before = Date.now();
      const response = await api.tokenOp('recover', {
        'Svc-Lease': failureLease,
        'Svc-Delay-Seconds': '3600',
      });
      expectNoContent(response);
      const item = await api.messageById(queue, first);
      expect(item).toMatchObject({ state: 'delayed', retries: 0 });
      const visibleAtMs = expectTimestamp(item?.visibleAt);
      expect(visibleAtMs).toBeGreaterThanOrEqual(before + 3_600_000 - 5_000);
      expect(visibleAtMs).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
      expect((await api.recv(queue, 0)).status).toBe(204);
    });

    it('recover refuses both tokens or neither (400 invalid_argument) and a delivery lease (400 ' +
      'token_kind)', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      const failureLease = deliveryOf(await api.failureHead(queue)).lease;
      const failed = await api.listMessagesOk(queue, '?state=failed&handle=true');
      const handle = failed.items[0]?.handle ?? '';
      expectInvalidArgument(
        await api.tokenOp('recover', { 'Svc-Lease': failureLease, 'Svc-Handle': handle }),
      );
      expectInvalidArgument(await api.tokenOp('recover', {}));
      expectInvalidArgument(
        await api.tokenOp('recover', { 'Svc-Lease': failureLease, 'Svc-Delay-Seconds': '604801' }),
        'Svc-Delay-Seconds',
      );
      const other = await api.createQueue();
      await api.sendOk(other, 'x');
      const delivery = await api.recvOk(other);
      expectError(await api.tokenOp('recover', { 'Svc-Lease': delivery.lease }), 400, 'token_kind');
      expect((await api.messageById(queue, first))?.state).toBe('failed');
    });

    it('discard with a listing handle removes a failed message and counts ' +
      'discardedTotal', async () => {
      const api = getApi();
      const { queue, first } = await queueWithTwoFailures(api);
      const item = (await api.listMessagesOk(queue, '?state=failed&handle=true')).items.find(
        (entry) => entry.id === first,
      );
      expectNoContent(await api.discardHandle(item?.handle ?? ''));
      expect(await api.messageById(queue, first)).toBeUndefined();
      expect(await api.queueStats(queue)).toMatchObject({ failed: 1, discardedTotal: 1 });
    });

    it('the failure head of an unknown queue is 404 queue_not_found', async () => {
      const api = getApi();
      expectError(await api.failureHead(api.target.newQueueName()), 404, 'queue_not_found');
    });
  });
}
