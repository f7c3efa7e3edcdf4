// Listings: queues (GET /queues) and messages (GET /queues/{queue}/messages). Byte-order and
// send-order paging, `next` absent at the end, keyset walks under concurrent change, cursor
// integrity, `match` as RE2, state filters and the per-state optional fields.

import { describe, expect, it } from 'vitest';
import { tamper, type Api, type MessageItem, type Page, type QueueObject } from './api.js';
import { header, jsonBody } from './http.js';
import {
  describeResponse,
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatus,
  expectTimestamp,
  tokenPattern,
} from './expectations.js';
import { expectQueueObject } from './queues.js';

const badLimits = ['0', '1001', '-1', 'abc', '1.5', '', '+5'];

async function listQueuesOk(api: Api, query: string): Promise<Page<QueueObject>> {
  const response = await api.call('GET', api.spoolPath(`/queues${query}`));
  expectStatus(response, 200);
  return jsonBody(response) as Page<QueueObject>;
}

/** Walks every page of the queue listing for names matching `^prefix-`, `limit` per page. */
async function walkQueues(
  api: Api,
  prefix: string,
  limit: number,
  between?: (page: number) => Promise<void>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  const match = encodeURIComponent(`^${prefix}-`);
  for (let page = 0; page < 50; page += 1) {
    const cursor = after === undefined ? '' : `&after=${encodeURIComponent(after)}`;
    const result = await listQueuesOk(api, `?limit=${limit}&match=${match}${cursor}`);
    pages.push(result.items.map((item) => item.name));
    if (result.next === undefined) return pages;
    expect(result.next.length).toBeGreaterThanOrEqual(1);
    expect(result.next.length).toBeLessThanOrEqual(256);
    after = result.next;
    if (between !== undefined) await between(page);
  }
  throw new Error('queue walk exceeded 50 pages');
}

function byteOrder(names: readonly string[]): string[] {
  return [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

function expectMessageItem(item: MessageItem): void {
  const allowed = [
    'createdAt', 'expiresAt', 'handle', 'id', 'leaseExpiresAt', 'retries', 'state', 'visibleAt',
  ];
  for (const key of Object.keys(item)) expect(allowed).toContain(key);
  expect(typeof item.id).toBe('string');
  expect(Number.isInteger(item.retries)).toBe(true);
  expectTimestamp(item.createdAt);
}

export function defineListingTests(getApi: () => Api): void {
  describe('listings: queues', () => {
    it('lists queues by name in byte order, paged by limit, with next absent on the last ' +
      'page', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      const suffixes = ['b', 'A', 'a', '_', '0', ':'];
      for (const suffix of suffixes) await api.createQueue(undefined, `${base}-${suffix}`);
      const expected = byteOrder(suffixes.map((suffix) => `${base}-${suffix}`));
      const pages = await walkQueues(api, base, 2);
      expect(pages).toEqual([expected.slice(0, 2), expected.slice(2, 4), expected.slice(4, 6)]);
      const whole = await listQueuesOk(api, `?match=${encodeURIComponent(`^${base}-`)}`);
      expect(whole.next).toBeUndefined();
      expect(whole.items.map((item) => item.name)).toEqual(expected);
      for (const item of whole.items) expectQueueObject(item, item.name);
      const single = await listQueuesOk(api, `?limit=1&match=${encodeURIComponent(`^${base}-`)}`);
      expect(single.items).toHaveLength(1);
      expect(typeof single.next).toBe('string');
    });

    it('limit must be an integer 1-1000 (400 invalid_argument otherwise)', async () => {
      const api = getApi();
      for (const limit of badLimits) {
        const response = await api.call('GET', api.spoolPath(`/queues?limit=${limit}`));
        expectInvalidArgument(response, 'limit');
      }
      await listQueuesOk(api, '?limit=1000');
    });

    it('match is an unanchored RE2 pattern; ^ and $ anchor it', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      for (const suffix of ['alpha', 'alphabet', 'beta']) {
        await api.createQueue(undefined, `${base}-${suffix}`);
      }
      const names = async (pattern: string): Promise<string[]> =>
        (await listQueuesOk(api, `?limit=1000&match=${encodeURIComponent(pattern)}`)).items.map(
          (item) => item.name,
        );
      expect(await names(`^${base}-alpha$`)).toEqual([`${base}-alpha`]);
      expect(await names(`^${base}-alpha`)).toEqual([`${base}-alpha`, `${base}-alphabet`]);
      expect(await names(`${base}-(alp|be)`)).toEqual([
        `${base}-alpha`,
        `${base}-alphabet`,
        `${base}-beta`,
      ]);
      // Unanchored: a fragment from the middle of the names matches.
      expect(await names(`${base.slice(1)}-[ab]e`)).toEqual([`${base}-beta`]);
    });

    it('an invalid match or syntax RE2 lacks (lookaround, backreference) is 400 ' +
      'invalid_argument', async () => {
      const api = getApi();
      const patterns = [
        '(', '[a-', 'x{2,1}', 'a**', '\\', '(?=a)', '(?!a)b', '(?<=a)b', '(a)\\1', '*',
      ];
      for (const pattern of patterns) {
        const path = api.spoolPath(`/queues?match=${encodeURIComponent(pattern)}`);
        const response = await api.call('GET', path);
        expect(response.status, `match=${pattern}: ${describeResponse(response)}`).toBe(400);
        expectInvalidArgument(response, 'match');
      }
    });

    it('a paged walk never repeats or skips a queue that exists throughout, while others come ' +
      'and go', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      const stable = ['b', 'd', 'f', 'h', 'j', 'l'].map((suffix) => `${base}-${suffix}`);
      const doomed = ['e', 'k'].map((suffix) => `${base}-${suffix}`);
      for (const name of [...stable, ...doomed]) await api.createQueue(undefined, name);
      const pages = await walkQueues(api, base, 2, async (page) => {
        if (page > 1) return;
        // Add names before, between and after the cursor; remove names not yet reached.
        await api.createQueue(undefined, `${base}-a${page}`);
        await api.createQueue(undefined, `${base}-g${page}`);
        await api.createQueue(undefined, `${base}-m${page}`);
        const victim = doomed[page];
        if (victim !== undefined) expectNoContent(await api.deleteQueue(victim, 'force'));
      });
      const seen = pages.flat();
      expect(new Set(seen).size, JSON.stringify(pages)).toBe(seen.length);
      for (const name of stable) {
        expect(seen.filter((entry) => entry === name), name).toHaveLength(1);
      }
      expect(seen).not.toContain(`${base}-k`);
      expect(byteOrder(seen)).toEqual(seen);
    });

    it('a tampered, oversized or foreign cursor is 400 invalid_argument', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      for (const suffix of ['a', 'b', 'c']) await api.createQueue(undefined, `${base}-${suffix}`);
      const first = await listQueuesOk(api, `?limit=1&match=${encodeURIComponent(`^${base}-`)}`);
      const cursor = first.next ?? '';
      expect(cursor).not.toBe('');
      const query = (after: string): string =>
        api.spoolPath(
          `/queues?limit=1&match=${encodeURIComponent(`^${base}-`)}` +
            `&after=${encodeURIComponent(after)}`,
        );
      expectStatus(await api.call('GET', query(cursor)), 200);
      expectInvalidArgument(await api.call('GET', query(tamper(cursor))), 'after');
      expectInvalidArgument(await api.call('GET', query('x'.repeat(257))), 'after');
      expectInvalidArgument(await api.call('GET', api.spoolPath('/queues?after=')), 'after');
      const messages = await api.createQueue();
      for (let index = 0; index < 2; index += 1) await api.sendOk(messages, `m${index}`);
      const messageCursor = (await api.listMessagesOk(messages, '?limit=1')).next ?? '';
      expect(messageCursor).not.toBe('');
      expectInvalidArgument(await api.call('GET', query(messageCursor)), 'after');
      const foreign = `?after=${encodeURIComponent(cursor)}`;
      expectInvalidArgument(await api.listMessages(messages, foreign), 'after');
    });

    it('deleted queues leave the listing', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      await api.createQueue(undefined, `${base}-keep`);
      await api.createQueue(undefined, `${base}-drop`);
      expectNoContent(await api.deleteQueue(`${base}-drop`, 'force'));
      const page = await listQueuesOk(api, `?match=${encodeURIComponent(`^${base}-`)}`);
      const names = page.items.map((item) => item.name);
      expect(names).toEqual([`${base}-keep`]);
    });
  });

  describe('listings: messages', () => {
    it('lists messages in send order with no payloads, paged, next absent at the end, ' +
      'Cache-Control no-store', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const ids: string[] = [];
      for (let index = 0; index < 5; index += 1) ids.push(await api.sendOk(queue, `m${index}`));
      const response = await api.listMessages(queue, '?limit=2');
      expectStatus(response, 200);
      const cacheControl = header(response, 'cache-control') ?? '';
      expect(cacheControl, describeResponse(response)).toMatch(/no-store/);
      expect(header(response, 'content-type') ?? '').toMatch(/^application\/json\b/);
      const first = jsonBody(response) as Page<MessageItem>;
      expect(first.items.map((item) => item.id)).toEqual(ids.slice(0, 2));
      const afterFirst = encodeURIComponent(first.next ?? '');
      const second = await api.listMessagesOk(queue, `?limit=2&after=${afterFirst}`);
      expect(second.items.map((item) => item.id)).toEqual(ids.slice(2, 4));
      const afterSecond = encodeURIComponent(second.next ?? '');
      const third = await api.listMessagesOk(queue, `?limit=2&after=${afterSecond}`);
      expect(third.items.map((item) => item.id)).toEqual(ids.slice(4));
      expect(third.next).toBeUndefined();
      const all = await api.listMessagesOk(queue);
      expect(all.next).toBeUndefined();
      for (const item of all.items) {
        expectMessageItem(item);
        expect(item).toMatchObject({ state: 'visible', retries: 0 });
        expect(item.visibleAt).toBeUndefined();
        expect(item.leaseExpiresAt).toBeUndefined();
        expect(item.handle).toBeUndefined();
      }
    });

    it('filters by state and shows visibleAt, leaseExpiresAt and expiresAt only where they ' +
      'apply', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 300 });
      const failedId = await api.sendOk(queue, 'to fail');
      const pendingId = await api.sendOk(queue, 'to lease');
      expectNoContent(await api.fail((await api.recvOk(queue)).lease));
      const pending = await api.recvOk(queue);
      const visibleId = await api.sendOk(queue, 'visible');
      const delayedId = await api.sendOk(queue, 'delayed', { 'Svc-Delay-Seconds': '3600' });
      const byState = async (state: string): Promise<MessageItem[]> =>
        (await api.listMessagesOk(queue, `?state=${state}`)).items;
      expect((await byState('failed')).map((item) => item.id)).toEqual([failedId]);
      const pendingItems = await byState('pending');
      expect(pendingItems.map((item) => item.id)).toEqual([pendingId]);
      expect(pendingItems[0]?.leaseExpiresAt).toBe(pending.leaseExpiresAt);
      expect((await byState('visible')).map((item) => item.id)).toEqual([visibleId]);
      expect((await byState('delayed')).map((item) => item.id)).toEqual([delayedId]);
      expect(await byState('unavailable')).toEqual([]);
      const all = (await api.listMessagesOk(queue)).items;
      expect(all.map((item) => item.id)).toEqual([failedId, pendingId, visibleId, delayedId]);
      for (const item of all) {
        expectMessageItem(item);
        const what = `${item.state} message`;
        expect(item.visibleAt !== undefined, `visibleAt on ${what}`).toBe(item.state === 'delayed');
        const leased = item.state === 'pending';
        expect(item.leaseExpiresAt !== undefined, `leaseExpiresAt on ${what}`).toBe(leased);
        if (item.visibleAt !== undefined) expectTimestamp(item.visibleAt);
        if (item.leaseExpiresAt !== undefined) expectTimestamp(item.leaseExpiresAt);
        if (item.state !== 'delayed') expectTimestamp(item.expiresAt);
      }
      for (const bad of ['Visible', 'done', '', 'visible,pending']) {
        expectInvalidArgument(await api.listMessages(queue, `?state=${bad}`), 'state');
      }
    });

    it('pages 100 messages by default', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const ids: string[] = [];
      for (let index = 0; index < 101; index += 1) ids.push(await api.sendOk(queue, `d${index}`));
      const first = await api.listMessagesOk(queue);
      expect(first.items.map((item) => item.id)).toEqual(ids.slice(0, 100));
      const after = encodeURIComponent(first.next ?? '');
      const rest = await api.listMessagesOk(queue, `?after=${after}`);
      expect(rest.items.map((item) => item.id)).toEqual(ids.slice(100));
      expect(rest.next).toBeUndefined();
    });

    it('omits leaseExpiresAt for pending messages on a queue without a lease timeout', async () => {
      const api = getApi();
      const queue = await api.createQueue({ leaseTimeoutSeconds: 0 });
      await api.sendOk(queue, 'x');
      await api.recvOk(queue);
      const item = (await api.listMessagesOk(queue)).items[0];
      expect(item?.state).toBe('pending');
      expect(item?.leaseExpiresAt).toBeUndefined();
    });

    it('handle=true adds a handle to every item; a non-boolean handle is 400', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      for (let index = 0; index < 3; index += 1) await api.sendOk(queue, `h${index}`);
      const items = (await api.listMessagesOk(queue, '?handle=true')).items;
      expect(items).toHaveLength(3);
      for (const item of items) expect(item.handle ?? '').toMatch(tokenPattern);
      const without = (await api.listMessagesOk(queue, '?handle=false')).items;
      for (const item of without) expect(item.handle).toBeUndefined();
      expectInvalidArgument(await api.listMessages(queue, '?handle=1'), 'handle');
    });

    it('limit must be an integer 1-1000; an unknown queue is 404', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      for (const limit of badLimits) {
        expectInvalidArgument(await api.listMessages(queue, `?limit=${limit}`), 'limit');
      }
      await api.listMessagesOk(queue, '?limit=1000');
      expectError(await api.listMessages(api.target.newQueueName()), 404, 'queue_not_found');
    });

    it('a paged walk never repeats or skips a message that exists throughout, while others come ' +
      'and go', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const sent: Array<{ messageId: string; handle: string }> = [];
      for (let index = 0; index < 8; index += 1) {
        sent.push(await api.sendWithHandle(queue, `w${index}`));
      }
      const doomed = [sent[3], sent[6]];
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; page < 20; page += 1) {
        const cursor = after === undefined ? '' : `&after=${encodeURIComponent(after)}`;
        const result = await api.listMessagesOk(queue, `?limit=2${cursor}`);
        seen.push(...result.items.map((item) => item.id));
        if (result.next === undefined) break;
        after = result.next;
        const victim = doomed[page];
        if (victim !== undefined) expectNoContent(await api.discardHandle(victim.handle));
        if (page < 2) await api.sendOk(queue, `late${page}`);
        if (page === 0) expectNoContent(await api.discardHandle(sent[0]?.handle ?? ''));
      }
      expect(new Set(seen).size).toBe(seen.length);
      const stable = sent.filter((entry) => !doomed.includes(entry) && entry !== sent[0]);
      for (const entry of stable) {
        expect(seen.filter((id) => id === entry.messageId)).toHaveLength(1);
      }
      for (const entry of doomed) expect(seen).not.toContain(entry?.messageId);
    });

    it('a tampered, oversized or foreign cursor is 400 invalid_argument', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      for (let index = 0; index < 3; index += 1) await api.sendOk(queue, `c${index}`);
      const next = (await api.listMessagesOk(queue, '?limit=1')).next ?? '';
      expect(next).not.toBe('');
      const valid = `?limit=1&after=${encodeURIComponent(next)}`;
      expectStatus(await api.listMessages(queue, valid), 200);
      const tampered = `?limit=1&after=${encodeURIComponent(tamper(next))}`;
      expectInvalidArgument(await api.listMessages(queue, tampered), 'after');
      expectInvalidArgument(await api.listMessages(queue, `?after=${'y'.repeat(257)}`), 'after');
      const other = await api.createQueue();
      for (let index = 0; index < 2; index += 1) await api.sendOk(other, `o${index}`);
      // Another queue's message listing is another listing: its cursor is refused too.
      const foreign = `?after=${encodeURIComponent(next)}`;
      expectInvalidArgument(await api.listMessages(other, foreign), 'after');
    });
  });
}
