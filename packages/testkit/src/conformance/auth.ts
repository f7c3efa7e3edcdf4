// Authentication: `Authorization: Bearer <key>` on every /v1 operation, 401 unauthenticated
// without it, keys in query strings ignored, and (on the local variant) any key accepted.

import { describe, expect, it } from 'vitest';
import type { Api, CallOptions } from './api.js';
import { expectError, expectStatus } from './expectations.js';

export function defineAuthTests(getApi: () => Api): void {
  describe('authentication', () => {
    it('every operation without Authorization is 401 unauthenticated and does ' +
      'nothing', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'kept');
      const lease = (await api.recvOk(queue)).lease;
      const noAuth: CallOptions = { auth: false };
      const octets = { 'Content-Type': 'application/octet-stream' };
      const cases: ReadonlyArray<readonly [string, string, CallOptions]> = [
        ['GET', api.spoolPath(), noAuth],
        ['GET', api.spoolPath('/stats'), noAuth],
        ['GET', api.spoolPath('/queues'), noAuth],
        ['GET', api.queuePath(queue), noAuth],
        ['PUT', api.queuePath(api.target.newQueueName()), noAuth],
        [
          'PATCH',
          api.queuePath(queue),
          { auth: false, headers: { 'Content-Type': 'application/json' }, body: '{}' },
        ],
        ['DELETE', api.queuePath(queue, '?mode=force'), noAuth],
        ['POST', api.queuePath(queue, '/send'), { auth: false, headers: octets, body: 'sneaky' }],
        ['POST', api.queuePath(queue, '/recv?waitSeconds=0'), noAuth],
        ['GET', api.queuePath(queue, '/messages'), noAuth],
        ['GET', api.queuePath(queue, '/failures/head'), noAuth],
        ['POST', api.spoolPath('/ack'), { auth: false, headers: { 'Svc-Lease': lease } }],
        ['POST', api.spoolPath('/nack'), { auth: false, headers: { 'Svc-Lease': lease } }],
        ['POST', api.spoolPath('/discard'), { auth: false, headers: { 'Svc-Lease': lease } }],
        [
          'POST',
          api.queuePath(queue, '/ack-and-send'),
          { auth: false, headers: { ...octets, 'Svc-Lease': lease }, body: 'x' },
        ],
      ];
      for (const [method, path, options] of cases) {
        expectError(await api.call(method, path, options), 401, 'unauthenticated');
      }
      const items = (await api.listMessagesOk(queue)).items;
      expect(items.map((item) => item.state)).toEqual(['pending']);
      expectStatus(await api.ack(lease), 204);
    });

    it('a key in the query string is ignored: still 401', async () => {
      const api = getApi();
      const key = encodeURIComponent(api.target.apiKey);
      const parameters = ['api_key', 'apiKey', 'key', 'access_token', 'token', 'authorization'];
      for (const parameter of parameters) {
        const path = api.spoolPath(`?${parameter}=${key}`);
        const response = await api.call('GET', path, { auth: false });
        expectError(response, 401, 'unauthenticated');
      }
      const bearer = encodeURIComponent(`Bearer ${api.target.apiKey}`);
      const path = api.spoolPath(`/queues?authorization=${bearer}`);
      expectError(await api.call('GET', path, { auth: false }), 401, 'unauthenticated');
    });

    it('an Authorization header that is not a bearer key is 401', async () => {
      const api = getApi();
      const key = api.target.apiKey;
      const basic = `Basic ${Buffer.from(`user:${key}`).toString('base64')}`;
      for (const value of [basic, `Token ${key}`, key, 'Bearer', 'Bearer ']) {
        const response = await api.call('GET', api.spoolPath(), { auth: value });
        expectError(response, 401, 'unauthenticated');
      }
    });

    it('authentication comes before spool lookup: an unknown spool without a key is ' +
      '401', async () => {
      const api = getApi();
      const path = `/spools/nospool-${api.target.newQueueName()}`;
      const response = await api.call('GET', path, { auth: false });
      expectError(response, 401, 'unauthenticated');
    });

    it('a bearer key is checked as the variant says (local: any key; hosted: unknown key ' +
      '401)', async () => {
      const api = getApi();
      const auth = 'Bearer not-a-real-key-0123456789';
      const response = await api.call('GET', api.spoolPath(), { auth });
      if (api.capabilities.anyKeyAccepted) expectStatus(response, 200);
      else expectError(response, 401, 'unauthenticated');
    });
  });
}
