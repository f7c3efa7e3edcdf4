// Svc-* header rules: each operation accepts only the headers it defines (others 400
// unknown_header naming the header), empty or repeated Svc-* headers are 400 invalid_argument,
// header names are case-insensitive, and headers outside Svc-* are ignored.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { jsonBody, type RawResponse } from './http.js';
import {
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectUnknownHeader,
} from './expectations.js';

export function defineHeaderTests(getApi: () => Api): void {
  describe('headers', () => {
    it('a Svc-* header no operation defines is 400 unknown_header on every kind of ' +
      'operation', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'x');
      const delivery = await api.recvOk(queue);
      const bogus = { 'Svc-Bogus': '1' };
      const calls: Array<() => Promise<RawResponse>> = [
        () => api.send(queue, 'x', bogus),
        () => api.recv(queue, 0, bogus),
        () => api.tokenOp('ack', { 'Svc-Lease': delivery.lease, ...bogus }),
        () => api.call('GET', api.spoolPath(), { headers: bogus }),
        () => api.call('GET', api.spoolPath('/stats'), { headers: bogus }),
        () => api.call('GET', api.spoolPath('/queues'), { headers: bogus }),
        () => api.call('GET', api.queuePath(queue), { headers: bogus }),
        () => api.call('GET', api.queuePath(queue, '/messages'), { headers: bogus }),
        () => api.call('GET', api.queuePath(queue, '/failures/head'), { headers: bogus }),
        () => api.jsonCall('PUT', api.queuePath(api.target.newQueueName()), {}, bogus),
        () => api.jsonCall('PATCH', api.queuePath(queue), {}, bogus),
        () => api.call('DELETE', api.queuePath(queue, '?mode=force'), { headers: bogus }),
      ];
      // One at a time: a wrongly accepted call must not disturb the others' answers.
      for (const call of calls) expectUnknownHeader(await call(), 'Svc-Bogus');
      expect((await api.describeQueueOk(queue)).state).toBe('active');
      expectNoContent(await api.ack(delivery.lease));
    });

    it('a Svc-* header another operation defines is 400 unknown_header here', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'x');
      const lease = (await api.recvOk(queue)).lease;
      const handle = (await api.sendWithHandle(queue, 'y')).handle;
      const cases: ReadonlyArray<readonly [string, () => Promise<RawResponse>]> = [
        ['Svc-Lease', () => api.send(queue, 'x', { 'Svc-Lease': lease })],
        ['Svc-Delay', () => api.send(queue, 'x', { 'Svc-Delay': '1s' })],
        ['Svc-Queue', () => api.send(queue, 'x', { 'Svc-Queue': queue })],
        ['Svc-Delay-Seconds', () => api.recv(queue, 0, { 'Svc-Delay-Seconds': '1' })],
        ['Svc-Lease', () => api.recv(queue, 0, { 'Svc-Lease': lease })],
        ['Svc-Delay', () => api.tokenOp('ack', { 'Svc-Lease': lease, 'Svc-Delay': '1s' })],
        ['Svc-Handle', () => api.tokenOp('ack', { 'Svc-Lease': lease, 'Svc-Handle': handle })],
        [
          'Svc-Delay-Seconds',
          () => api.tokenOp('release', { 'Svc-Lease': lease, 'Svc-Delay-Seconds': '1' }),
        ],
        ['Svc-Delay', () => api.tokenOp('nack', { 'Svc-Lease': lease, 'Svc-Delay': '1s' })],
        [
          'Svc-Dedup-String',
          () => api.tokenOp('fail', { 'Svc-Lease': lease, 'Svc-Dedup-String': 'k' }),
        ],
        ['Svc-Delay', () => api.tokenOp('recover', { 'Svc-Handle': handle, 'Svc-Delay': '1s' })],
        ['Svc-Lease', () => api.tokenOp('peek', { 'Svc-Handle': handle, 'Svc-Lease': lease })],
        ['Svc-Queue', () => api.ackAndSend(queue, lease, 'z', { 'Svc-Queue': queue })],
        [
          'Svc-Delay-Seconds',
          () => api.ackAndSend(queue, lease, 'z', { 'Svc-Delay-Seconds': '1' }),
        ],
        ['Svc-Handle', () => api.ackAndSend(queue, lease, 'z', { 'Svc-Handle': handle })],
        [
          'Svc-Lease',
          () => api.call('GET', api.queuePath(queue, '/failures/head'), {
            headers: { 'Svc-Lease': lease },
          }),
        ],
      ];
      for (const [name, call] of cases) expectUnknownHeader(await call(), name);
      // The lease survived every refused call.
      expectNoContent(await api.ack(lease));
    });

    it('an empty Svc-* header is 400 invalid_argument', async () => {
      const api = getApi();
      const queue = await api.createQueue({ dedupWindowSeconds: 60 });
      const emptyDelay = await api.send(queue, 'x', { 'Svc-Delay-Seconds': '' });
      expectInvalidArgument(emptyDelay, 'Svc-Delay-Seconds');
      const emptyKey = await api.send(queue, 'x', { 'Svc-Dedup-String': '' });
      expectInvalidArgument(emptyKey, 'Svc-Dedup-String');
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('a repeated Svc-* header is 400, whether or not the operation defines it', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const twice = await api.send(queue, 'x', { 'Svc-Delay-Seconds': ['0', '0'] });
      expectInvalidArgument(twice, 'Svc-Delay-Seconds');
      // Unknown and repeated at once: either rule may name the problem, both are 400.
      const unknownTwice = await api.send(queue, 'x', { 'Svc-Bogus': ['1', '2'] });
      const { kind } = jsonBody(unknownTwice) as { kind: string };
      expect(['unknown_header', 'invalid_argument']).toContain(kind);
      expectError(unknownTwice, 400, kind);
      expect((await api.listMessagesOk(queue)).items).toEqual([]);
    });

    it('Svc-* header names are case-insensitive', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const messageId = await api.sendOk(queue, 'x', { 'svc-delay-seconds': '3600' });
      expect((await api.messageById(queue, messageId))?.state).toBe('delayed');
      expectUnknownHeader(await api.send(queue, 'x', { 'SVC-BOGUS': '1' }), 'Svc-Bogus');
      await api.sendOk(queue, 'y');
      const lease = (await api.recvOk(queue)).lease;
      expectNoContent(await api.tokenOp('ack', { 'SVC-LEASE': lease }));
    });

    it('headers outside Svc-* are ignored', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const response = await api.send(queue, 'x', {
        'X-Request-Id': 'abc',
        'Svc': 'not a Svc- header',
        'SvcDelay': '5',
        'X-Svc-Delay-Seconds': 'nonsense',
      });
      expectStatus(response, 201);
      const states = (await api.listMessagesOk(queue)).items.map((item) => item.state);
      expect(states).toEqual(['visible']);
    });
  });
}
