// Ack-and-send in both forms: path form (`/queues/{queue}/ack-and-send`) and spool form
// (`/ack-and-send` with `Svc-Queue`). Atomic: either the ack and the append both happen, or
// neither does.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { header, headersOnlyRequest } from './http.js';
import {
  expectError,
  expectGone,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
  tokenPattern,
} from './expectations.js';

/** A source queue with one leased message and an empty target queue. */
async function leasedPair(
  api: Api,
): Promise<{ source: string; target: string; lease: string; sourceId: string }> {
  const source = await api.createQueue();
  const target = await api.createQueue();
  const sourceId = await api.sendOk(source, 'step-1');
  const delivery = await api.recvOk(source);
  return { source, target, lease: delivery.lease, sourceId };
}

/** The source message is still pending under its lease: nothing was acked. */
async function expectNothingAcked(
  api: Api,
  source: string,
  sourceId: string,
  lease: string,
): Promise<void> {
  expect((await api.messageById(source, sourceId))?.state).toBe('pending');
  expect((await api.queueStats(source)).ackedTotal).toBe(0);
  expectNoContent(await api.ack(lease));
}

export function defineAckAndSendTests(getApi: () => Api): void {
  describe('ack-and-send', () => {
    it('path form: 201 with Svc-Message-Id, acks the source and appends to the path ' +
      'queue', async () => {
      const api = getApi();
      const { source, target, lease } = await leasedPair(api);
      const response = await api.ackAndSend(target, lease, 'step-2');
      expectStatus(response, 201);
      expect(response.body.byteLength).toBe(0);
      const newId = header(response, 'svc-message-id') ?? '';
      expect(newId).not.toBe('');
      expect(header(response, 'svc-handle')).toBeUndefined();
      expect((await api.listMessagesOk(source)).items).toEqual([]);
      expect(await api.queueStats(source)).toMatchObject({
        total: 0,
        ackedTotal: 1,
        addedTotal: 1,
      });
      expect(await api.queueStats(target)).toMatchObject({
        total: 1,
        visible: 1,
        addedTotal: 1,
        ackedTotal: 0,
      });
      const next = await api.recvOk(target);
      expect(next.messageId).toBe(newId);
      expect(next.payload.toString()).toBe('step-2');
      expect(next.retries).toBe(0);
    });

    it('path form into the same queue the lease came from', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const firstId = await api.sendOk(queue, 'loop-1');
      const delivery = await api.recvOk(queue);
      const response = await api.ackAndSend(queue, delivery.lease, 'loop-2');
      expectStatus(response, 201);
      const items = (await api.listMessagesOk(queue)).items;
      expect(items.map((item) => item.id)).toEqual([header(response, 'svc-message-id')]);
      expect(items[0]?.id).not.toBe(firstId);
      expect(await api.queueStats(queue)).toMatchObject({ total: 1, ackedTotal: 1, addedTotal: 2 });
    });

    it('spool form: Svc-Queue names the destination', async () => {
      const api = getApi();
      const { source, target, lease } = await leasedPair(api);
      const response = await api.call('POST', api.spoolPath('/ack-and-send'), {
        headers: {
          'Content-Type': 'application/octet-stream',
          'Svc-Lease': lease,
          'Svc-Queue': target,
        },
        body: 'via spool form',
      });
      expectStatus(response, 201);
      expect((await api.listMessagesOk(source)).items).toEqual([]);
      const next = await api.recvOk(target);
      expect(next.payload.toString()).toBe('via spool form');
      expect(next.messageId).toBe(header(response, 'svc-message-id'));
    });

    it('spool form without Svc-Queue is 400 invalid_argument; with an unknown queue 404; nothing ' +
      'acked', async () => {
      const api = getApi();
      const { source, lease, sourceId } = await leasedPair(api);
      const missing = await api.call('POST', api.spoolPath('/ack-and-send'), {
        headers: { 'Content-Type': 'application/octet-stream', 'Svc-Lease': lease },
        body: 'nowhere',
      });
      expectInvalidArgument(missing);
      const unknown = await api.call('POST', api.spoolPath('/ack-and-send'), {
        headers: {
          'Content-Type': 'application/octet-stream',
          'Svc-Lease': lease,
          'Svc-Queue': api.target.newQueueName(),
        },
        body: 'nowhere',
      });
      expectError(unknown, 404, 'queue_not_found');
      await expectNothingAcked(api, source, sourceId, lease);
    });

    it('handle=true answers a Svc-Handle that peeks the new message', async () => {
      const api = getApi();
      const { target, lease } = await leasedPair(api);
      const response = await api.ackAndSend(target, lease, 'with handle', {}, '?handle=true');
      expectStatus(response, 201);
      const handle = header(response, 'svc-handle') ?? '';
      expect(handle).toMatch(tokenPattern);
      const peek = await api.peek(handle);
      expectStatus(peek, 200);
      expect(peek.body.toString()).toBe('with handle');
      expect(header(peek, 'svc-message-id')).toBe(header(response, 'svc-message-id'));
    });

    it('a retry of a committed call is 410 and appends nothing', async () => {
      const api = getApi();
      const { target, lease } = await leasedPair(api);
      expectStatus(await api.ackAndSend(target, lease, 'once'), 201);
      expectGone(await api.ackAndSend(target, lease, 'once'), 'settled');
      expect((await api.listMessagesOk(target)).items).toHaveLength(1);
      expect((await api.queueStats(target)).addedTotal).toBe(1);
    });

    it('Svc-Delay delays the new message', async () => {
      const api = getApi();
      const { target, lease } = await leasedPair(api);
      const before = Date.now();
      const response = await api.ackAndSend(target, lease, 'later', { 'Svc-Delay': '1h' });
      expectStatus(response, 201);
      const item = await api.messageById(target, header(response, 'svc-message-id') ?? '');
      expect(item?.state).toBe('delayed');
      const visibleAtMs = expectTimestamp(item?.visibleAt);
      expect(visibleAtMs).toBeGreaterThanOrEqual(before + 3_600_000 - 5_000);
      expect(visibleAtMs).toBeLessThanOrEqual(Date.now() + 3_600_000 + 5_000);
      expectNoContent(await api.recv(target, 0));
    });

    it('a bad Svc-Delay is 400 invalid_argument and acks nothing', async () => {
      const api = getApi();
      const { source, target, lease, sourceId } = await leasedPair(api);
      for (const bad of ['1.5s', '169h', '5']) {
        const response = await api.ackAndSend(target, lease, 'x', { 'Svc-Delay': bad });
        expectInvalidArgument(response, 'Svc-Delay');
      }
      expect((await api.listMessagesOk(target)).items).toEqual([]);
      await expectNothingAcked(api, source, sourceId, lease);
    });

    it('no Content-Length or a chunked body is 411 and acks nothing', async () => {
      const api = getApi();
      const { source, target, lease, sourceId } = await leasedPair(api);
      for (const framing of ['none', 'chunked'] as const) {
        const response = await api.call('POST', api.queuePath(target, '/ack-and-send'), {
          headers: { 'Content-Type': 'application/octet-stream', 'Svc-Lease': lease },
          body: framing === 'chunked' ? 'chunk' : undefined,
          framing,
        });
        expectError(response, 411, 'length_required');
      }
      expect((await api.listMessagesOk(target)).items).toEqual([]);
      await expectNothingAcked(api, source, sourceId, lease);
    });

    it('a payload over the size limit is 413 from the headers alone and acks nothing', async () => {
      const api = getApi();
      const { source, target, lease, sourceId } = await leasedPair(api);
      const limitBytes = api.capabilities.messageSizeLimitBytes;
      const response = await headersOnlyRequest({
        method: 'POST',
        url: api.url(api.queuePath(target, '/ack-and-send')),
        headers: {
          Authorization: `Bearer ${api.target.apiKey}`,
          'Content-Type': 'application/octet-stream',
          'Svc-Lease': lease,
        },
        contentLength: limitBytes + 1,
      });
      expectError(response, 413, 'message_too_large', { limitBytes });
      await expectNothingAcked(api, source, sourceId, lease);
    });

    it('with a settled lease is 410 settled and appends nothing', async () => {
      const api = getApi();
      const { target, lease } = await leasedPair(api);
      expectNoContent(await api.ack(lease));
      expectGone(await api.ackAndSend(target, lease, 'late'), 'settled');
      expect((await api.listMessagesOk(target)).items).toEqual([]);
    });

    it('into an unknown path queue is 404 queue_not_found and acks nothing', async () => {
      const api = getApi();
      const { source, lease, sourceId } = await leasedPair(api);
      const response = await api.ackAndSend(api.target.newQueueName(), lease, 'x');
      expectError(response, 404, 'queue_not_found');
      await expectNothingAcked(api, source, sourceId, lease);
    });
  });
}
