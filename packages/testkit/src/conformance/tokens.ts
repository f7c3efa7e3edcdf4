// Token rules: syntax (400 invalid_argument), verification (410 stale), kind (400 token_kind),
// generation (deleted and recreated queue: 410 stale), settlement (410 settled) and lease
// expiry (410 expired) using a 1 s lease timeout and bounded polling.

import { describe, expect, it } from 'vitest';
import { tamper, type Api } from './api.js';
import {
  expectError,
  expectGone,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
} from './expectations.js';
import { pollUntil } from './poll.js';

const malformedTokens = [
  'short',
  'a'.repeat(15),
  'a'.repeat(129),
  'abcdefghijklmnop!',
  'abcdefgh.ijklmnopq',
  'abcdefghijklmnopq=',
];

export function defineTokenTests(getApi: () => Api): void {
  describe('tokens', () => {
    it('a token outside ^[A-Za-z0-9_-]{16,128}$ is 400 invalid_argument', async () => {
      const api = getApi();
      for (const token of malformedTokens) {
        expectInvalidArgument(await api.ack(token));
        expectInvalidArgument(await api.peek(token));
        expectInvalidArgument(await api.discardHandle(token));
      }
      expectInvalidArgument(await api.tokenOp('ack', { 'Svc-Lease': '' }));
    });

    it('a well-formed token that does not verify is 410 stale and reveals nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'x');
      const delivery = await api.recvOk(queue);
      for (const forged of ['A'.repeat(16), 'A'.repeat(128), tamper(delivery.lease)]) {
        expectGone(await api.ack(forged), 'stale');
        expectGone(await api.nack(forged), 'stale');
        expectGone(await api.renew(forged), 'stale');
      }
      const sent = await api.sendWithHandle(queue, 'y');
      expectGone(await api.peek(tamper(sent.handle)), 'stale');
      expectGone(await api.discardHandle(tamper(sent.handle)), 'stale');
      // The real tokens were not disturbed by the forgeries.
      expectStatus(await api.peek(sent.handle), 200);
      expectNoContent(await api.ack(delivery.lease));
    });

    it('a handle where a lease is expected, or a lease where a handle is expected, is 400 ' +
      'token_kind', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'kinds');
      const other = await api.sendOk(queue, 'leased');
      const delivery = await api.recvOk(queue);
      expect(delivery.messageId).toBe(sent.messageId);
      const listHandle = (await api.listMessagesOk(queue, `?handle=true`)).items.find(
        (item) => item.id === other,
      )?.handle ?? '';
      for (const op of ['ack', 'nack', 'release', 'fail', 'renew', 'discard'] as const) {
        expectError(await api.tokenOp(op, { 'Svc-Lease': listHandle }), 400, 'token_kind');
      }
      expectError(await api.ackAndSend(queue, listHandle, 'z'), 400, 'token_kind');
      for (const op of ['peek', 'inspect', 'discard', 'recover'] as const) {
        expectError(await api.tokenOp(op, { 'Svc-Handle': delivery.lease }), 400, 'token_kind');
      }
      // Nothing moved: the lease still settles.
      expect((await api.listMessagesOk(queue)).items.map((item) => item.state)).toEqual([
        'pending',
        'visible',
      ]);
      expectNoContent(await api.ack(delivery.lease));
      expectGone(await api.ack(delivery.lease), 'settled');
    });

    it('a repeated token header is 400 invalid_argument', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'x');
      const delivery = await api.recvOk(queue);
      const twoLeases = [delivery.lease, delivery.lease];
      expectInvalidArgument(await api.tokenOp('ack', { 'Svc-Lease': twoLeases }));
      const sent = await api.sendWithHandle(queue, 'y');
      const twoHandles = [sent.handle, sent.handle];
      expectInvalidArgument(await api.tokenOp('peek', { 'Svc-Handle': twoHandles }));
      expectNoContent(await api.ack(delivery.lease));
    });

    it('tokens from a deleted and recreated queue are 410 stale', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'old generation');
      const delivery = await api.recvOk(queue);
      const sent = await api.sendWithHandle(queue, 'old handle');
      expectNoContent(await api.deleteQueue(queue, 'force'));
      expectStatus(await api.putQueue(queue), 201);
      await api.sendOk(queue, 'new generation');
      expectGone(await api.ack(delivery.lease), 'stale');
      expectGone(await api.peek(sent.handle), 'stale');
      expectGone(await api.discardHandle(sent.handle), 'stale');
      const fresh = await api.recvOk(queue);
      expect(fresh.payload.toString()).toBe('new generation');
      expect(fresh.retries).toBe(0);
    });

    it('a timed-out lease is 410 expired; the timeout acts as a nack (retry counted, failed when ' +
      'exhausted)', async () => {
      const api = getApi();
      const retrying = await api.createQueue({ leaseTimeoutSeconds: 1, maxRetries: 5 });
      const exhausted = await api.createQueue({ leaseTimeoutSeconds: 1, maxRetries: 0 });
      const retryingId = await api.sendOk(retrying, 'comes back');
      const exhaustedId = await api.sendOk(exhausted, 'fails');
      const retryingLease = (await api.recvOk(retrying)).lease;
      const exhaustedLease = (await api.recvOk(exhausted)).lease;
      await pollUntil('the timed-out message to be visible again', async () => {
        const item = await api.messageById(retrying, retryingId);
        return item?.state === 'visible' ? item : undefined;
      });
      await pollUntil('the timed-out message with no retries left to be failed', async () => {
        const item = await api.messageById(exhausted, exhaustedId);
        return item?.state === 'failed' ? item : undefined;
      });
      expect(await api.messageById(retrying, retryingId)).toMatchObject({ retries: 1 });
      expectGone(await api.ack(retryingLease), 'expired');
      expectGone(await api.renew(retryingLease), 'expired');
      expectGone(await api.nack(exhaustedLease), 'expired');
      expect(await api.queueStats(retrying)).toMatchObject({
        visible: 1,
        pending: 0,
        nackedTotal: 1,
        failedTotal: 0,
        ackedTotal: 0,
      });
      expect(await api.queueStats(exhausted)).toMatchObject({
        failed: 1,
        pending: 0,
        nackedTotal: 1,
        failedTotal: 1,
      });
      const redelivery = await api.recvOk(retrying);
      expect(redelivery.messageId).toBe(retryingId);
      expect(redelivery.retries).toBe(1);
      expectNoContent(await api.ack(redelivery.lease));
    });

    it('a changed leaseTimeoutSeconds applies to leases issued afterwards, not to earlier ' +
      'ones', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 300 });
      const earlyId = await api.sendOk(queue, 'early');
      const lateId = await api.sendOk(queue, 'late');
      const early = await api.recvOk(queue);
      expect(early.messageId).toBe(earlyId);
      expectStatus(await api.patchQueue(queue, { leaseTimeoutSeconds: 1 }), 200);
      const late = await api.recvOk(queue);
      expect(late.messageId).toBe(lateId);
      const lateExpiryMs = expectTimestamp(late.leaseExpiresAt);
      expect(lateExpiryMs).toBeLessThan(expectTimestamp(early.leaseExpiresAt));
      await pollUntil('the lease issued after the change to time out', async () => {
        const item = await api.messageById(queue, lateId);
        return item?.state === 'visible' ? item : undefined;
      });
      expect((await api.messageById(queue, earlyId))?.state).toBe('pending');
      expectGone(await api.ack(late.lease), 'expired');
      expectNoContent(await api.ack(early.lease));
    });
  });
}
