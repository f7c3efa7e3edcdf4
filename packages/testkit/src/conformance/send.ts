// Send: 201 and its headers, binary payloads, the Content-Length rules (411), the size limit
// (413 from the headers alone) and message id ordering.

import { describe, expect, it } from 'vitest';
import { allByteValues, type Api } from './api.js';
import { header, headersOnlyRequest } from './http.js';
import {
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  tokenPattern,
} from './expectations.js';

/** A payload of `length` bytes whose content is position-dependent, so truncation shows. */
function patterned(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let index = 0; index < length; index += 1) bytes[index] = (index * 31 + 7) & 0xff;
  return bytes;
}

export function defineSendTests(getApi: () => Api): void {
  describe('send', () => {
    it('answers 201 with Svc-Message-Id, no body, and no Svc-Handle unless asked', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const response = await api.send(queue, 'hello');
      expectStatus(response, 201);
      expect(response.body.byteLength).toBe(0);
      expect(header(response, 'svc-message-id') ?? '').not.toBe('');
      expect(header(response, 'svc-handle')).toBeUndefined();
      const explicit = await api.send(queue, 'hello', {}, '?handle=false');
      expectStatus(explicit, 201);
      expect(header(explicit, 'svc-handle')).toBeUndefined();
    });

    it('handle=true adds a Svc-Handle token; a non-boolean handle is 400 and appends ' +
      'nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const response = await api.send(queue, 'x', {}, '?handle=true');
      expectStatus(response, 201);
      expect(header(response, 'svc-handle') ?? '').toMatch(tokenPattern);
      for (const bad of ['yes', 'TRUE', '1', '']) {
        expectInvalidArgument(await api.send(queue, 'y', {}, `?handle=${bad}`), 'handle');
      }
      const items = (await api.listMessagesOk(queue)).items;
      expect(items).toHaveLength(1);
    });

    it('round-trips all 256 byte values exactly', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const payload = allByteValues();
      const messageId = await api.sendOk(queue, payload);
      const response = await api.recv(queue, 0);
      expectStatus(response, 200);
      expect(header(response, 'content-type') ?? '').toMatch(/^application\/octet-stream\b/);
      expect(header(response, 'svc-message-id')).toBe(messageId);
      expect(Buffer.compare(response.body, Buffer.from(payload))).toBe(0);
    });

    it('accepts an empty payload with Content-Length: 0 and delivers an empty body', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const response = await api.send(queue, new Uint8Array(0));
      expectStatus(response, 201);
      const delivery = await api.recvOk(queue);
      expect(delivery.payload.byteLength).toBe(0);
      expect(delivery.messageId).toBe(header(response, 'svc-message-id'));
      const stats = await api.queueStats(queue);
      expect(stats.dataBytes).toBe(0);
      expect(stats.total).toBe(1);
    });

    it('accepts a payload of exactly the size limit and delivers it intact', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const payload = patterned(api.capabilities.messageSizeLimitBytes);
      await api.sendOk(queue, payload);
      const delivery = await api.recvOk(queue);
      expect(delivery.payload.byteLength).toBe(payload.byteLength);
      expect(Buffer.compare(delivery.payload, Buffer.from(payload))).toBe(0);
    });

    it('answers 413 message_too_large from Content-Length alone, before any body byte is ' +
      'sent', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const limitBytes = api.capabilities.messageSizeLimitBytes;
      const response = await headersOnlyRequest({
        method: 'POST',
        url: api.url(api.queuePath(queue, '/send')),
        headers: {
          Authorization: `Bearer ${api.target.apiKey}`,
          'Content-Type': 'application/octet-stream',
        },
        contentLength: limitBytes + 1,
      });
      expectError(response, 413, 'message_too_large', { limitBytes });
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('refuses a chunked body with 411 length_required and appends nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const response = await api.call('POST', api.queuePath(queue, '/send'), {
        headers: { 'Content-Type': 'application/octet-stream' },
        body: 'chunked payload',
        framing: 'chunked',
      });
      expectError(response, 411, 'length_required');
      const empty = await api.call('POST', api.queuePath(queue, '/send'), {
        headers: { 'Content-Type': 'application/octet-stream' },
        framing: 'chunked',
      });
      expectError(empty, 411, 'length_required');
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('refuses a send without Content-Length with 411 length_required', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const response = await api.call('POST', api.queuePath(queue, '/send'), {
        headers: { 'Content-Type': 'application/octet-stream' },
        framing: 'none',
      });
      expectError(response, 411, 'length_required');
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('gives distinct message ids that sort byte-wise in send order', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const ids: string[] = [];
      for (let index = 0; index < 12; index += 1) ids.push(await api.sendOk(queue, `m${index}`));
      expect(new Set(ids).size).toBe(ids.length);
      const sorted = [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect(sorted).toEqual(ids);
      const listed = (await api.listMessagesOk(queue)).items.map((item) => item.id);
      expect(listed).toEqual(ids);
    });

    it('gives ids unique within the spool: across queues and across a queue recreated under its ' +
      'name', async () => {
      const api = getApi();
      const one = await api.createQueue();
      const two = await api.createQueue();
      const ids = [await api.sendOk(one, 'a'), await api.sendOk(two, 'b')];
      expectNoContent(await api.deleteQueue(one, 'force'));
      expectStatus(await api.putQueue(one), 201);
      ids.push(await api.sendOk(one, 'c'), await api.sendOk(two, 'd'));
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('to an unknown queue is 404 queue_not_found; to an unknown spool 404 ' +
      'spool_not_found', async () => {
      const api = getApi();
      const missing = api.target.newQueueName();
      const response = await api.send(missing, 'x');
      expectError(response, 404, 'queue_not_found');
      const spoolPath = `/spools/nospool-${missing}/queues/${missing}/send`;
      const spoolMissing = await api.call('POST', spoolPath, {
        headers: { 'Content-Type': 'application/octet-stream' },
        body: 'x',
      });
      expectError(spoolMissing, 404, 'spool_not_found');
    });
  });
}
