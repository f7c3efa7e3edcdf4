// Routing errors (404 not_found, 405 method_not_allowed) and the validation order the decisions
// fix: route, authentication, spool, queue, headers and query (400), length (411, 413), then
// the operation (token verification included).

import { describe, it } from 'vitest';
import type { Api } from './api.js';
import { headersOnlyRequest } from './http.js';
import {
  expectError,
  expectGone,
  expectInvalidArgument,
  expectNoContent,
  expectUnknownHeader,
} from './expectations.js';

/** A well-formed lease that verifies for nothing. */
const staleLease = 'A'.repeat(40);

export function defineErrorTests(getApi: () => Api): void {
  describe('errors: routing and validation order', () => {
    it('an unknown path answers 404 not_found with the JSON error body, inside or outside ' +
      '/v1', async () => {
      const api = getApi();
      expectError(await api.call('GET', '/nothing-here'), 404, 'not_found');
      expectError(await api.call('GET', api.spoolPath('/queues/x/y/z')), 404, 'not_found');
      expectError(await api.call('POST', api.spoolPath('/teleport')), 404, 'not_found');
      expectError(await api.callUrl('GET', api.rootUrl('/v2/spools/default')), 404, 'not_found');
      expectError(await api.callUrl('GET', api.rootUrl('/favicon.ico')), 404, 'not_found');
    });

    it('an unknown path is 404 even without credentials (route before ' +
      'authentication)', async () => {
      const api = getApi();
      expectError(await api.call('GET', '/nothing-here', { auth: false }), 404, 'not_found');
    });

    it('a known path with the wrong method answers 405 method_not_allowed', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const cases: ReadonlyArray<readonly [string, string]> = [
        ['GET', api.queuePath(queue, '/send')],
        ['GET', api.queuePath(queue, '/recv')],
        ['POST', api.queuePath(queue)],
        ['DELETE', api.spoolPath()],
        ['POST', api.spoolPath('/queues')],
        ['GET', api.spoolPath('/ack')],
        ['PUT', api.spoolPath('/peek')],
        ['POST', api.queuePath(queue, '/messages')],
        ['POST', api.queuePath(queue, '/failures/head')],
      ];
      for (const [method, path] of cases) {
        expectError(await api.call(method, path), 405, 'method_not_allowed');
        expectError(await api.call(method, path, { auth: false }), 405, 'method_not_allowed');
      }
    });

    it('an unknown spool is 404 spool_not_found before the queue is looked at', async () => {
      const api = getApi();
      const name = api.target.newQueueName();
      const other = `/spools/nospool-${name}/queues/${name}`;
      expectError(await api.call('POST', `${other}/recv`), 404, 'spool_not_found');
      expectError(await api.call('GET', `${other}/messages`), 404, 'spool_not_found');
    });

    it('an unknown queue beats every header, query, length and mode error (404)', async () => {
      const api = getApi();
      const missing = api.target.newQueueName();
      expectError(await api.send(missing, 'x', { 'Svc-Bogus': '1' }), 404, 'queue_not_found');
      const badDelay = { 'Svc-Delay-Seconds': 'soon' };
      expectError(await api.send(missing, 'x', badDelay), 404, 'queue_not_found');
      expectError(await api.send(missing, 'x', {}, '?handle=maybe'), 404, 'queue_not_found');
      expectError(await api.recv(missing, 'forever'), 404, 'queue_not_found');
      expectError(await api.listMessages(missing, '?limit=0&state=gone'), 404, 'queue_not_found');
      expectError(await api.deleteQueue(missing, 'later'), 404, 'queue_not_found');
      const chunked = await api.call('POST', api.queuePath(missing, '/send'), {
        headers: { 'Content-Type': 'application/octet-stream' },
        body: 'x',
        framing: 'chunked',
      });
      expectError(chunked, 404, 'queue_not_found');
      const unframed = await api.call('POST', api.queuePath(missing, '/send'), { framing: 'none' });
      expectError(unframed, 404, 'queue_not_found');
      const oversized = await headersOnlyRequest({
        method: 'POST',
        url: api.url(api.queuePath(missing, '/send')),
        headers: {
          Authorization: `Bearer ${api.target.apiKey}`,
          'Content-Type': 'application/octet-stream',
        },
        contentLength: api.capabilities.messageSizeLimitBytes + 1,
      });
      expectError(oversized, 404, 'queue_not_found');
      const ackAndSend = await api.call('POST', api.queuePath(missing, '/ack-and-send'), {
        headers: { 'Svc-Lease': 'bad token', 'Svc-Bogus': '1' },
        framing: 'none',
      });
      expectError(ackAndSend, 404, 'queue_not_found');
      expectError(await api.patchQueue(missing, { maxRetries: -1 }), 404, 'queue_not_found');
    });

    it('header and query errors (400) come before length errors (411, 413)', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const chunked = await api.call('POST', api.queuePath(queue, '/send'), {
        headers: { 'Content-Type': 'application/octet-stream', 'Svc-Delay-Seconds': 'soon' },
        body: 'x',
        framing: 'chunked',
      });
      expectInvalidArgument(chunked, 'Svc-Delay-Seconds');
      const unframed = await api.call('POST', api.queuePath(queue, '/send?handle=maybe'), {
        framing: 'none',
      });
      expectInvalidArgument(unframed, 'handle');
      const oversized = await headersOnlyRequest({
        method: 'POST',
        url: api.url(api.queuePath(queue, '/send')),
        headers: {
          Authorization: `Bearer ${api.target.apiKey}`,
          'Content-Type': 'application/octet-stream',
          'Svc-Bogus': 'yes',
        },
        contentLength: api.capabilities.messageSizeLimitBytes + 1,
      });
      expectUnknownHeader(oversized, 'Svc-Bogus');
    });

    it('header errors come before token verification: a bad Svc-Delay with a stale lease is ' +
      '400', async () => {
      const api = getApi();
      expectInvalidArgument(await api.release(staleLease, '1.5s'), 'Svc-Delay');
      const bogus = { 'Svc-Lease': staleLease, 'Svc-Bogus': '1' };
      expectUnknownHeader(await api.tokenOp('ack', bogus), 'Svc-Bogus');
      expectInvalidArgument(
        await api.tokenOp('recover', { 'Svc-Lease': staleLease, 'Svc-Delay-Seconds': '-1' }),
        'Svc-Delay-Seconds',
      );
      expectGone(await api.release(staleLease, '1s'), 'stale');
    });

    it('length errors come before token verification: ack-and-send with a stale lease is 411 or ' +
      '413', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const unframed = await api.call('POST', api.queuePath(queue, '/ack-and-send'), {
        headers: { 'Svc-Lease': staleLease },
        framing: 'none',
      });
      expectError(unframed, 411, 'length_required');
      const oversized = await headersOnlyRequest({
        method: 'POST',
        url: api.url(api.queuePath(queue, '/ack-and-send')),
        headers: {
          Authorization: `Bearer ${api.target.apiKey}`,
          'Content-Type': 'application/octet-stream',
          'Svc-Lease': staleLease,
        },
        contentLength: api.capabilities.messageSizeLimitBytes + 1,
      });
      expectError(oversized, 413, 'message_too_large');
      expectGone(await api.ackAndSend(queue, staleLease, 'x'), 'stale');
      const badDelay = await api.ackAndSend(queue, staleLease, 'x', { 'Svc-Delay': '5' });
      expectInvalidArgument(badDelay, 'Svc-Delay');
    });

    it('a rejected request changes nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'x');
      const delivery = await api.recvOk(queue);
      const bogus = { 'Svc-Lease': delivery.lease, 'Svc-Bogus': '1' };
      expectUnknownHeader(await api.tokenOp('ack', bogus), 'Svc-Bogus');
      expectInvalidArgument(await api.release(delivery.lease, '10us'), 'Svc-Delay');
      expectNoContent(await api.ack(delivery.lease));
    });
  });
}
