// Settling a delivery with its lease: ack, nack (and maxRetries), release, fail, discard by
// lease, renew. Each checks the answer, the message's resulting state and the counter it moves.

import { describe, expect, it } from 'vitest';
import type { Api, SpoolTokenOp } from './api.js';
import { header } from './http.js';
import {
  expectError,
  expectGone,
  expectInvalidArgument,
  expectNoContent,
  expectTimestamp,
} from './expectations.js';

export function defineSettleTests(getApi: () => Api): void {
  describe('settle: ack, nack, release, fail, discard, renew', () => {
    it('ack answers 204, removes the message and counts ackedTotal; a second ack is 410 ' +
      'settled', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'done');
      const delivery = await api.recvOk(queue);
      expectNoContent(await api.ack(delivery.lease));
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
      const stats = await api.queueStats(queue);
      expect(stats.total).toBe(0);
      expect(stats.ackedTotal).toBe(1);
      expectGone(await api.ack(delivery.lease), 'settled');
      expectGone(await api.nack(delivery.lease), 'settled');
      expectGone(await api.release(delivery.lease), 'settled');
      expectGone(await api.fail(delivery.lease), 'settled');
      expectGone(await api.renew(delivery.lease), 'settled');
      expectGone(await api.discardLease(delivery.lease), 'settled');
      expect((await api.queueStats(queue)).ackedTotal).toBe(1);
    });

    it('nack answers 204 and returns the message visible with a retry counted', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 3 });
      const messageId = await api.sendOk(queue, 'again');
      const delivery = await api.recvOk(queue);
      expect(delivery.retries).toBe(0);
      expectNoContent(await api.nack(delivery.lease));
      const item = await api.messageById(queue, messageId);
      expect(item?.state).toBe('visible');
      expect(item?.retries).toBe(1);
      const redelivery = await api.recvOk(queue);
      expect(redelivery.messageId).toBe(messageId);
      expect(redelivery.retries).toBe(1);
      expect(redelivery.lease).not.toBe(delivery.lease);
      expectGone(await api.ack(delivery.lease), 'settled');
      expectNoContent(await api.ack(redelivery.lease));
      const stats = await api.queueStats(queue);
      expect(stats.nackedTotal).toBe(1);
      expect(stats.ackedTotal).toBe(1);
    });

    it('nack fails the message once maxRetries redeliveries are done (maxRetries=2)', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 2 });
      const messageId = await api.sendOk(queue, 'doomed');
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const delivery = await api.recvOk(queue);
        expect(delivery.messageId).toBe(messageId);
        expect(delivery.retries).toBe(attempt);
        expectNoContent(await api.nack(delivery.lease));
      }
      expectNoContent(await api.recv(queue, 0));
      const item = await api.messageById(queue, messageId);
      expect(item?.state).toBe('failed');
      expect(item?.retries).toBe(2);
      const stats = await api.queueStats(queue);
      // The exhausting nack is still a nack (decisions: a timeout that exhausts retries counts in
      // both nackedTotal and failedTotal; an explicit nack is counted the same way).
      expect(stats).toMatchObject({ failed: 1, visible: 0, nackedTotal: 3, failedTotal: 1 });
    });

    it('nack with maxRetries=0 fails the message at once', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 0 });
      const messageId = await api.sendOk(queue, 'no-retries');
      expectNoContent(await api.nack((await api.recvOk(queue)).lease));
      expect((await api.messageById(queue, messageId))?.state).toBe('failed');
      expectNoContent(await api.recv(queue, 0));
      expect(await api.queueStats(queue)).toMatchObject({ nackedTotal: 1, failedTotal: 1 });
    });

    it('release answers 204 and returns the message without spending a retry, counting ' +
      'releasedTotal', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 0 });
      const messageId = await api.sendOk(queue, 'again-and-again');
      // With maxRetries=0 a single nack would fail it; releases never move it toward failure.
      for (let round = 0; round < 3; round += 1) {
        const delivery = await api.recvOk(queue);
        expect(delivery.messageId).toBe(messageId);
        expect(delivery.retries).toBe(0);
        expectNoContent(await api.release(delivery.lease));
        expectGone(await api.ack(delivery.lease), 'settled');
      }
      const item = await api.messageById(queue, messageId);
      expect(item).toMatchObject({ state: 'visible', retries: 0 });
      const stats = await api.queueStats(queue);
      expect(stats).toMatchObject({ releasedTotal: 3, nackedTotal: 0, failedTotal: 0, visible: 1 });
    });

    it('release with Svc-Delay: 0 is immediate', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const messageId = await api.sendOk(queue, 'zero');
      expectNoContent(await api.release((await api.recvOk(queue)).lease, '0'));
      expect((await api.recvOk(queue)).messageId).toBe(messageId);
    });

    it('fail answers 204 and moves the message to failed at once, retries unchanged', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 10 });
      const messageId = await api.sendOk(queue, 'broken');
      const first = await api.recvOk(queue);
      expectNoContent(await api.nack(first.lease));
      const second = await api.recvOk(queue);
      expectNoContent(await api.fail(second.lease));
      const item = await api.messageById(queue, messageId);
      expect(item).toMatchObject({ state: 'failed', retries: 1 });
      expectNoContent(await api.recv(queue, 0));
      expectGone(await api.fail(second.lease), 'settled');
      const stats = await api.queueStats(queue);
      expect(stats).toMatchObject({ failed: 1, total: 1, failedTotal: 1, nackedTotal: 1 });
    });

    it('discard with a lease answers 204, removes the message and counts discardedTotal, not ' +
      'ackedTotal', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'drop');
      const delivery = await api.recvOk(queue);
      expectNoContent(await api.discardLease(delivery.lease));
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
      const stats = await api.queueStats(queue);
      expect(stats).toMatchObject({ total: 0, discardedTotal: 1, ackedTotal: 0 });
      expectGone(await api.ack(delivery.lease), 'settled');
    });

    it('discard with both Svc-Lease and Svc-Handle, or neither, is 400 ' +
      'invalid_argument', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'both');
      await api.sendOk(queue, 'other');
      const delivery = await api.recvOk(queue);
      expectInvalidArgument(
        await api.tokenOp('discard', { 'Svc-Lease': delivery.lease, 'Svc-Handle': sent.handle }),
      );
      expectInvalidArgument(await api.tokenOp('discard', {}));
      expect((await api.listMessagesOk(queue)).items).toHaveLength(2);
    });

    it('a token operation without its required token is 400 invalid_argument', async () => {
      const api = getApi();
      const ops: readonly SpoolTokenOp[] = [
        'ack', 'nack', 'release', 'fail', 'renew', 'peek', 'inspect', 'recover',
      ];
      for (const op of ops) {
        expectInvalidArgument(await api.tokenOp(op, {}));
      }
    });

    it('renew answers 204 with a fresh Svc-Lease-Expires-At and the same lease still ' +
      'settles', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 60 });
      await api.sendOk(queue, 'slow work');
      const delivery = await api.recvOk(queue);
      const firstExpiryMs = expectTimestamp(delivery.leaseExpiresAt);
      const before = Date.now();
      const response = await api.renew(delivery.lease);
      const after = Date.now();
      expectNoContent(response);
      const renewedMs = expectTimestamp(header(response, 'svc-lease-expires-at'));
      expect(renewedMs).toBeGreaterThanOrEqual(firstExpiryMs);
      // Renew extends to now + leaseTimeoutSeconds (5 s allowance between the two clocks).
      expect(renewedMs).toBeGreaterThanOrEqual(before + 60_000 - 5_000);
      expect(renewedMs).toBeLessThanOrEqual(after + 60_000 + 5_000);
      expect(header(response, 'svc-lease')).toBeUndefined();
      const item = (await api.listMessagesOk(queue)).items[0];
      expect(item?.state).toBe('pending');
      expect(expectTimestamp(item?.leaseExpiresAt)).toBe(renewedMs);
      expectNoContent(await api.ack(delivery.lease));
      expectGone(await api.renew(delivery.lease), 'settled');
    });

    it('renew on a queue without a lease timeout is a no-op 204', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 0 });
      await api.sendOk(queue, 'forever');
      const delivery = await api.recvOk(queue);
      const response = await api.renew(delivery.lease);
      expectNoContent(response);
      expect(header(response, 'svc-lease-expires-at')).toBeUndefined();
      expectNoContent(await api.ack(delivery.lease));
    });

    it('token operations on an unknown spool are 404 spool_not_found', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'x');
      const delivery = await api.recvOk(queue);
      const response = await api.call('POST', `/spools/nospool-${queue}/ack`, {
        headers: { 'Svc-Lease': delivery.lease },
      });
      expectError(response, 404, 'spool_not_found');
      expectNoContent(await api.ack(delivery.lease));
    });
  });
}
