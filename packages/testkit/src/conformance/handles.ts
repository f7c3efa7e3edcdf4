// Handles: peek and inspect, discard by handle (cancel before delivery), and the fencing rule
// that a handle answers 410 once anything moved the message it was minted for.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { header, type RawResponse } from './http.js';
import {
  describeResponse,
  expectError,
  expectNoContent,
  expectStatus,
  statsWith,
} from './expectations.js';

/** Asserts a 200 peek answer and returns its state and retry count. */
function expectPeek(
  response: RawResponse,
  messageId: string,
  payload: string,
): { state: string; retries: string } {
  expectStatus(response, 200);
  expect(response.body.toString()).toBe(payload);
  expect(header(response, 'cache-control') ?? '', describeResponse(response)).toMatch(/no-store/);
  expect(header(response, 'svc-message-id')).toBe(messageId);
  return {
    state: header(response, 'svc-message-state') ?? '',
    retries: header(response, 'svc-retry-count') ?? '',
  };
}

/** 410 gone with any of the interface's reasons (fencing after delivery names none). */
function expectFenced(response: RawResponse): void {
  const body = expectError(response, 410, 'gone');
  expect(['expired', 'settled', 'primary_changed', 'stale']).toContain(body.details.reason);
}

export function defineHandleTests(getApi: () => Api): void {
  describe('handles: peek, inspect, discard, fencing', () => {
    it('peek answers the payload, Svc-Message-Id, Svc-Message-State, Svc-Retry-Count, no-store, ' +
      'and moves nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'look, no hands');
      for (let read = 0; read < 2; read += 1) {
        const peeked = expectPeek(await api.peek(sent.handle), sent.messageId, 'look, no hands');
        expect(peeked).toEqual({ state: 'visible', retries: '0' });
      }
      expect((await api.messageById(queue, sent.messageId))?.state).toBe('visible');
      const delivery = await api.recvOk(queue);
      expect(delivery.messageId).toBe(sent.messageId);
    });

    it('inspect is the same operation as peek', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'inspected');
      const response = await api.tokenOp('inspect', { 'Svc-Handle': sent.handle });
      const peeked = expectPeek(response, sent.messageId, 'inspected');
      expect(peeked).toEqual({ state: 'visible', retries: '0' });
    });

    it('a send handle is fenced once the message is delivered: peek and discard answer ' +
      '410', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'delivered');
      const delivery = await api.recvOk(queue);
      expectFenced(await api.peek(sent.handle));
      expectFenced(await api.discardHandle(sent.handle));
      // Still fenced after the delivery returns the message: the handle named the old generation.
      expectNoContent(await api.nack(delivery.lease));
      expectFenced(await api.peek(sent.handle));
      expect((await api.messageById(queue, sent.messageId))?.state).toBe('visible');
    });

    it('a listing handle minted while pending peeks as pending while that delivery lasts, then ' +
      '410', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 3 });
      const messageId = await api.sendOk(queue, 'leased');
      const delivery = await api.recvOk(queue);
      const listed = await api.listMessagesOk(queue, '?handle=true');
      const handle = listed.items[0]?.handle ?? '';
      expect(expectPeek(await api.peek(handle), messageId, 'leased')).toEqual({
        state: 'pending',
        retries: '0',
      });
      expectNoContent(await api.ack(delivery.lease));
      expectFenced(await api.peek(handle));
    });

    it('a listing handle reports the retry count; it is fenced by the next delivery', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 3 });
      const messageId = await api.sendOk(queue, 'retry me');
      expectNoContent(await api.nack((await api.recvOk(queue)).lease));
      const handle = (await api.listMessagesOk(queue, '?handle=true')).items[0]?.handle ?? '';
      expect(expectPeek(await api.peek(handle), messageId, 'retry me')).toEqual({
        state: 'visible',
        retries: '1',
      });
      await api.recvOk(queue);
      expectFenced(await api.peek(handle));
    });

    it('discard with a handle on a pending message is 409 message_leased and leaves it ' +
      'leased', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const messageId = await api.sendOk(queue, 'busy');
      const delivery = await api.recvOk(queue);
      const handle = (await api.listMessagesOk(queue, '?handle=true')).items[0]?.handle ?? '';
      expectError(await api.discardHandle(handle), 409, 'message_leased');
      expect((await api.messageById(queue, messageId))?.state).toBe('pending');
      expectNoContent(await api.ack(delivery.lease));
    });

    it('discard with a send handle cancels the message before its first delivery; reuse is ' +
      '410', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent = await api.sendWithHandle(queue, 'never mind');
      expectNoContent(await api.discardHandle(sent.handle));
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
      expectNoContent(await api.recv(queue, 0));
      expectFenced(await api.discardHandle(sent.handle));
      expectFenced(await api.peek(sent.handle));
      expect(await api.queueStats(queue)).toEqual(
        statsWith({ addedTotal: 1, discardedTotal: 1 }),
      );
    });

    it('peek on a failed message reports state failed', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const messageId = await api.sendOk(queue, 'bad');
      expectNoContent(await api.fail((await api.recvOk(queue)).lease));
      const failed = await api.listMessagesOk(queue, '?state=failed&handle=true');
      const handle = failed.items[0]?.handle ?? '';
      const peeked = expectPeek(await api.peek(handle), messageId, 'bad');
      expect(peeked).toEqual({ state: 'failed', retries: '0' });
    });
  });
}
