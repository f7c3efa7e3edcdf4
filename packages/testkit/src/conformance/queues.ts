// Queue lifecycle: create (PUT), describe (GET), update (PATCH), force delete (DELETE), and the
// JSON body rules the decisions give every JSON operation.

import { describe, expect, it } from 'vitest';
import { header, jsonBody } from './http.js';
import type { Api, QueueObject } from './api.js';
import {
  describeResponse,
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
} from './expectations.js';

const settingsKeys = [
  'dedupWindowSeconds',
  'effectiveRetentionSeconds',
  'leaseTimeoutSeconds',
  'maxRetries',
  'recvRateLimit',
  'retentionSeconds',
];

/** Asserts the Queue object shape (exact keys) and returns it. */
export function expectQueueObject(value: unknown, name: string): QueueObject {
  const queue = value as QueueObject;
  expect(Object.keys(queue).sort()).toEqual(['createdAt', 'name', 'settings', 'state']);
  expect(queue.name).toBe(name);
  expectTimestamp(queue.createdAt);
  expect(['active', 'draining', 'deleting']).toContain(queue.state);
  expect(Object.keys(queue.settings).sort()).toEqual(settingsKeys);
  const rate = queue.settings.recvRateLimit as Record<string, unknown>;
  expect(Object.keys(rate).sort()).toEqual(['burst', 'intervalMicros']);
  return queue;
}

export function defaultSettings(api: Api): Record<string, unknown> {
  const { defaultRetentionSeconds, retentionLimitSeconds } = api.capabilities;
  return {
    leaseTimeoutSeconds: 300,
    maxRetries: 10,
    dedupWindowSeconds: 0,
    retentionSeconds: defaultRetentionSeconds,
    effectiveRetentionSeconds: Math.min(defaultRetentionSeconds, retentionLimitSeconds),
    recvRateLimit: { intervalMicros: 0, burst: 0 },
  };
}

/** Field values create and update must refuse with 400 invalid_argument naming the field. */
const badFieldValues: ReadonlyArray<readonly [string, unknown, string]> = [
  ['leaseTimeoutSeconds', -1, 'leaseTimeoutSeconds'],
  ['leaseTimeoutSeconds', 31_536_001, 'leaseTimeoutSeconds'],
  ['leaseTimeoutSeconds', 1.5, 'leaseTimeoutSeconds'],
  ['leaseTimeoutSeconds', '5', 'leaseTimeoutSeconds'],
  ['leaseTimeoutSeconds', true, 'leaseTimeoutSeconds'],
  ['maxRetries', -1, 'maxRetries'],
  ['maxRetries', 65_536, 'maxRetries'],
  ['dedupWindowSeconds', 301, 'dedupWindowSeconds'],
  ['dedupWindowSeconds', -1, 'dedupWindowSeconds'],
  ['retentionSeconds', 1, 'retentionSeconds'],
  ['retentionSeconds', 59, 'retentionSeconds'],
  ['retentionSeconds', -60, 'retentionSeconds'],
  ['retentionSeconds', 60.5, 'retentionSeconds'],
  ['recvRateLimit', { intervalMicros: 9_999, burst: 1 }, 'intervalMicros'],
  ['recvRateLimit', { intervalMicros: 10_000, burst: 0 }, 'burst'],
  ['recvRateLimit', { intervalMicros: 10_000, burst: 2_147_483_648 }, 'burst'],
  ['recvRateLimit', { intervalMicros: '10000', burst: 1 }, 'intervalMicros'],
  ['recvRateLimit', 'fast', 'recvRateLimit'],
];

export function defineQueueTests(getApi: () => Api): void {
  describe('queues: create, describe, update, delete', () => {
    it('PUT with no body creates the queue with the default settings (201 Queue ' +
      'object)', async () => {
      const api = getApi();
      const name = api.target.newQueueName();
      const response = await api.putQueue(name);
      expectStatus(response, 201);
      expect(header(response, 'content-type') ?? '').toMatch(/^application\/json\b/);
      const queue = expectQueueObject(jsonBody(response), name);
      expect(queue.state).toBe('active');
      expect(queue.settings).toEqual(defaultSettings(api));
      const described = await api.describeQueueOk(name);
      expect(described).toEqual(queue);
    });

    it('PUT with an empty body or {} means all defaults', async () => {
      const api = getApi();
      const empty = api.target.newQueueName();
      const emptyResponse = await api.call('PUT', api.queuePath(empty), {
        headers: { 'Content-Type': 'application/json' },
        body: '',
      });
      expectStatus(emptyResponse, 201);
      const emptyQueue = expectQueueObject(jsonBody(emptyResponse), empty);
      expect(emptyQueue.settings).toEqual(defaultSettings(api));
      const braces = api.target.newQueueName();
      const bracesResponse = await api.putQueue(braces, {});
      expectStatus(bracesResponse, 201);
      const bracesQueue = expectQueueObject(jsonBody(bracesResponse), braces);
      expect(bracesQueue.settings).toEqual(defaultSettings(api));
    });

    it('PUT applies every given setting at the top of each range', async () => {
      const api = getApi();
      const name = api.target.newQueueName();
      const limit = api.capabilities.retentionLimitSeconds;
      const settings = {
        leaseTimeoutSeconds: 31_536_000,
        maxRetries: 65_535,
        dedupWindowSeconds: 300,
        retentionSeconds: limit,
        recvRateLimit: { intervalMicros: 10_000, burst: 2_147_483_647 },
      };
      const response = await api.putQueue(name, settings);
      expectStatus(response, 201);
      const queue = expectQueueObject(jsonBody(response), name);
      expect(queue.settings).toEqual({ ...settings, effectiveRetentionSeconds: limit });
    });

    it('PUT applies every given setting at the bottom of each range', async () => {
      const api = getApi();
      const name = api.target.newQueueName();
      const settings = {
        leaseTimeoutSeconds: 0,
        maxRetries: 0,
        dedupWindowSeconds: 0,
        retentionSeconds: 60,
        recvRateLimit: { intervalMicros: 10_000, burst: 1 },
      };
      const response = await api.putQueue(name, settings);
      expectStatus(response, 201);
      const queue = expectQueueObject(jsonBody(response), name);
      expect(queue.settings).toEqual({ ...settings, effectiveRetentionSeconds: 60 });
    });

    it('PUT on an existing name answers 409 queue_exists, whatever the settings', async () => {
      const api = getApi();
      const name = await api.createQueue();
      expectError(await api.putQueue(name), 409, 'queue_exists');
      expectError(await api.putQueue(name, { maxRetries: 3 }), 409, 'queue_exists');
      const described = await api.describeQueueOk(name);
      expect(described.settings.maxRetries).toBe(10);
    });

    it('names: 63 characters and the whole charset are accepted, 64 characters are ' +
      '400', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      const name63 = `${base}-${'x'.repeat(62 - base.length)}`;
      expect(name63).toHaveLength(63);
      const created = await api.putQueue(name63);
      expectStatus(created, 201);
      expect(expectQueueObject(jsonBody(created), name63).name).toBe(name63);
      expectStatus(await api.describeQueue(name63), 200);
      const name64 = `${name63}y`;
      expectInvalidArgument(await api.putQueue(name64));
      const charset = `${base}_AZaz09:-`;
      expectStatus(await api.putQueue(charset), 201);
      expectStatus(await api.describeQueue(charset), 200);
    });

    it('names outside ^[A-Za-z0-9_:-]+$ are 400 invalid_argument', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      for (const bad of [`${base}.x`, `${base}!`, `${base}~`]) {
        expectInvalidArgument(await api.putQueue(bad));
      }
    });

    it('GET describe of an unknown queue is 404 queue_not_found; of an unknown spool 404 ' +
      'spool_not_found', async () => {
      const api = getApi();
      expectError(await api.describeQueue(api.target.newQueueName()), 404, 'queue_not_found');
      const name = api.target.newQueueName();
      expectError(
        await api.call('GET', `/spools/nospool-${name}/queues/${name}`),
        404,
        'spool_not_found',
      );
      const missingSpool = await api.call('PUT', `/spools/nospool-${name}/queues/${name}`);
      expectError(missingSpool, 404, 'spool_not_found');
    });

    it('create refuses out-of-range and wrong-type fields with 400 invalid_argument naming the ' +
      'field, creating nothing', async () => {
      const api = getApi();
      for (const [field, value, named] of badFieldValues) {
        const name = api.target.newQueueName();
        const response = await api.putQueue(name, { [field]: value });
        expectInvalidArgument(response, named);
        expectError(await api.describeQueue(name), 404, 'queue_not_found');
      }
    });

    it('create refuses unknown fields at any depth with 400 unknown_field', async () => {
      const api = getApi();
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ colour: 'blue' }, 'colour'],
        [{ maxRetries: 3, effectiveRetentionSeconds: 60 }, 'effectiveRetentionSeconds'],
        [{ name: 'x' }, 'name'],
        [{ recvRateLimit: { intervalMicros: 10_000, burst: 1, jitter: 5 } }, 'jitter'],
      ];
      for (const [body, field] of cases) {
        const name = api.target.newQueueName();
        const error = expectError(await api.putQueue(name, body), 400, 'unknown_field');
        expect(String(error.details.field)).toContain(field);
        expectError(await api.describeQueue(name), 404, 'queue_not_found');
      }
    });

    it('create refuses a body that is not JSON or not an object with 400 ' +
      'invalid_json', async () => {
      const api = getApi();
      for (const text of ['{', '[]', '5', '"text"', 'null', '{"maxRetries": 1,}']) {
        const name = api.target.newQueueName();
        const response = await api.call('PUT', api.queuePath(name), {
          headers: { 'Content-Type': 'application/json' },
          body: text,
        });
        expectError(response, 400, 'invalid_json');
      }
    });

    it('create with a body that is not application/json is 415 ' +
      'unsupported_media_type', async () => {
      const api = getApi();
      const types = ['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream'];
      for (const type of types) {
        const name = api.target.newQueueName();
        const response = await api.call('PUT', api.queuePath(name), {
          headers: { 'Content-Type': type },
          body: '{}',
        });
        expectError(response, 415, 'unsupported_media_type');
        expectError(await api.describeQueue(name), 404, 'queue_not_found');
      }
      const name = api.target.newQueueName();
      const charset = await api.call('PUT', api.queuePath(name), {
        headers: { 'Content-Type': 'application/json; charset=utf-8' },
        body: '{"maxRetries": 2}',
      });
      expectStatus(charset, 201);
    });

    it('PATCH {} answers 200 with the Queue object and changes nothing', async () => {
      const api = getApi();
      const name = await api.createQueue({ maxRetries: 4 });
      const before = await api.describeQueueOk(name);
      const response = await api.patchQueue(name, {});
      expectStatus(response, 200);
      expect(expectQueueObject(jsonBody(response), name)).toEqual(before);
      expect(await api.describeQueueOk(name)).toEqual(before);
    });

    it('PATCH changes exactly the given settings and answers the new Queue object', async () => {
      const api = getApi();
      const name = await api.createQueue();
      const before = await api.describeQueueOk(name);
      const patch = {
        leaseTimeoutSeconds: 30,
        maxRetries: 2,
        dedupWindowSeconds: 120,
        retentionSeconds: 3_600,
        recvRateLimit: { intervalMicros: 20_000, burst: 5 },
      };
      const response = await api.patchQueue(name, patch);
      expectStatus(response, 200);
      const after = expectQueueObject(jsonBody(response), name);
      expect(after.createdAt).toBe(before.createdAt);
      expect(after.state).toBe('active');
      expect(after.settings).toEqual({ ...patch, effectiveRetentionSeconds: 3_600 });
      expect(await api.describeQueueOk(name)).toEqual(after);
      const partial = await api.patchQueue(name, { maxRetries: 7 });
      expectStatus(partial, 200);
      expect(expectQueueObject(jsonBody(partial), name).settings).toEqual({
        ...after.settings,
        maxRetries: 7,
      });
    });

    it('PATCH recvRateLimit null removes the limit (zeros in the output)', async () => {
      const api = getApi();
      const name = await api.createQueue({ recvRateLimit: { intervalMicros: 50_000, burst: 3 } });
      const created = await api.describeQueueOk(name);
      expect(created.settings.recvRateLimit).toEqual({ intervalMicros: 50_000, burst: 3 });
      const response = await api.patchQueue(name, { recvRateLimit: null });
      expectStatus(response, 200);
      expect(expectQueueObject(jsonBody(response), name).settings.recvRateLimit).toEqual({
        intervalMicros: 0,
        burst: 0,
      });
    });

    it('PATCH validates like create: 400 invalid_argument, unknown_field, invalid_json, 415, and ' +
      'changes nothing', async () => {
      const api = getApi();
      const name = await api.createQueue();
      const before = await api.describeQueueOk(name);
      for (const [field, value, named] of badFieldValues) {
        expectInvalidArgument(await api.patchQueue(name, { [field]: value }), named);
      }
      expectInvalidArgument(await api.patchQueue(name, { maxRetries: null }), 'maxRetries');
      expectError(await api.patchQueue(name, { state: 'draining' }), 400, 'unknown_field');
      expectError(
        await api.patchQueue(name, { recvRateLimit: { intervalMicros: 10_000, burst: 1, x: 1 } }),
        400,
        'unknown_field',
      );
      const notJson = await api.call('PATCH', api.queuePath(name), {
        headers: { 'Content-Type': 'application/json' },
        body: 'maxRetries=3',
      });
      expectError(notJson, 400, 'invalid_json');
      const arrayBody = await api.call('PATCH', api.queuePath(name), {
        headers: { 'Content-Type': 'application/json' },
        body: '[{"maxRetries":3}]',
      });
      expectError(arrayBody, 400, 'invalid_json');
      const wrongType = await api.call('PATCH', api.queuePath(name), {
        headers: { 'Content-Type': 'text/plain' },
        body: '{"maxRetries":3}',
      });
      expectError(wrongType, 415, 'unsupported_media_type');
      expect(await api.describeQueueOk(name)).toEqual(before);
    });

    it('PATCH on an unknown queue is 404 queue_not_found', async () => {
      const api = getApi();
      expectError(await api.patchQueue(api.target.newQueueName(), {}), 404, 'queue_not_found');
    });

    it('DELETE mode=force on a queue answers 204, frees the name, and a recreation gets a new ' +
      'createdAt', async () => {
      const api = getApi();
      const name = await api.createQueue({ maxRetries: 1 });
      const first = await api.describeQueueOk(name);
      await api.sendOk(name, 'one');
      await api.sendOk(name, 'two');
      expectNoContent(await api.deleteQueue(name, 'force'));
      expectError(await api.describeQueue(name), 404, 'queue_not_found');
      expectError(await api.send(name, 'x'), 404, 'queue_not_found');
      const recreated = await api.putQueue(name);
      expectStatus(recreated, 201);
      const second = expectQueueObject(jsonBody(recreated), name);
      expect(second.createdAt, 'a recreation gets a new createdAt').not.toBe(first.createdAt);
      expect(second.settings.maxRetries).toBe(10);
      const messages = await api.listMessagesOk(name);
      expect(messages.items).toEqual([]);
      expectStatus(await api.recv(name, 0), 204);
    });

    it('DELETE without mode or with a bad mode is 400 invalid_argument and deletes ' +
      'nothing', async () => {
      const api = getApi();
      const name = await api.createQueue();
      expectInvalidArgument(await api.deleteQueue(name), 'mode');
      for (const mode of ['FORCE', 'Drain', 'now', '']) {
        expectInvalidArgument(await api.deleteQueue(name, mode), 'mode');
      }
      const described = await api.describeQueueOk(name);
      expect(described.state, describeResponse(await api.describeQueue(name))).toBe('active');
    });

    it('DELETE of an unknown queue is 404 queue_not_found, even with a bad mode', async () => {
      const api = getApi();
      const name = api.target.newQueueName();
      expectError(await api.deleteQueue(name, 'force'), 404, 'queue_not_found');
      expectError(await api.deleteQueue(name, 'bogus'), 404, 'queue_not_found');
      expectError(await api.deleteQueue(name), 404, 'queue_not_found');
    });
  });
}
