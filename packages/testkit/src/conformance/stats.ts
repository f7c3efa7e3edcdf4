// Spool description and /stats: shapes, exact per-queue counts and counters after a scripted
// sequence, the rollup as one snapshot, filters and paging, and counters that outlive queues.

import { describe, expect, it } from 'vitest';
import type { Api, QueueObject } from './api.js';
import { header, jsonBody } from './http.js';
import {
  expectError,
  expectInvalidArgument,
  expectNoContent,
  expectStatsShape,
  expectStatus,
  expectTimestamp,
  statsFields,
  statsWith,
  type Stats,
} from './expectations.js';
import { expectQueueObject } from './queues.js';

interface StatsBody {
  queueCount: number;
  stats: unknown;
  queues: { items: Array<QueueObject & { stats: unknown }>; next?: string };
}

interface SpoolBody {
  name: string;
  queueCount: number;
  stats: Record<string, unknown>;
}

async function statsOk(api: Api, query: string): Promise<StatsBody> {
  const response = await api.stats(query);
  expectStatus(response, 200);
  expect(header(response, 'content-type') ?? '').toMatch(/^application\/json\b/);
  const body = jsonBody(response) as StatsBody;
  expect(Object.keys(body).sort()).toEqual(['queueCount', 'queues', 'stats']);
  expect(Number.isInteger(body.queueCount)).toBe(true);
  expectStatsShape(body.stats);
  for (const item of body.queues.items) {
    expect(Object.keys(item).sort()).toEqual(['createdAt', 'name', 'settings', 'state', 'stats']);
    const { stats, ...queue } = item;
    expectQueueObject(queue, item.name);
    expectStatsShape(stats);
  }
  return body;
}

async function describeSpoolOk(api: Api): Promise<SpoolBody> {
  const response = await api.call('GET', api.spoolPath());
  expectStatus(response, 200);
  const body = jsonBody(response) as SpoolBody;
  expect(Object.keys(body).sort()).toEqual(['name', 'queueCount', 'stats']);
  return body;
}

const countFields = [
  'total',
  'dataBytes',
  'delayed',
  'visible',
  'pending',
  'failed',
  'unavailable',
] as const;

export function defineStatsTests(getApi: () => Api): void {
  describe('spool description and stats', () => {
    it('GET /spools/{spool} answers name, queueCount and stats with sampledAt and ' +
      'startedAt', async () => {
      const api = getApi();
      await api.createQueue();
      const spool = await describeSpoolOk(api);
      expect(spool.name).toBe(api.spool);
      expect(Number.isInteger(spool.queueCount)).toBe(true);
      expect(spool.queueCount).toBeGreaterThanOrEqual(1);
      const { sampledAt, startedAt, ...counts } = spool.stats;
      expectStatsShape(counts);
      const sampledMs = expectTimestamp(sampledAt);
      const startedMs = expectTimestamp(startedAt);
      expect(startedMs).toBeLessThanOrEqual(sampledMs);
      const again = await describeSpoolOk(api);
      expect(again.stats.startedAt, 'no restart between two reads').toBe(startedAt);
      expect(expectTimestamp(again.stats.sampledAt)).toBeGreaterThanOrEqual(sampledMs);
    });

    it('describing an unknown spool is 404 spool_not_found', async () => {
      const api = getApi();
      const missing = `/spools/nospool-${api.target.newQueueName()}`;
      expectError(await api.call('GET', missing), 404, 'spool_not_found');
      expectError(await api.call('GET', `${missing}/stats`), 404, 'spool_not_found');
      expectError(await api.call('GET', `${missing}/queues`), 404, 'spool_not_found');
    });

    it('per-queue counts and counters are exact after a scripted sequence', async () => {
      const api = getApi();
      const queue = await api.createQueue({ maxRetries: 5, dedupWindowSeconds: 60 });
      expect(await api.queueStats(queue)).toEqual(statsWith({}));
      await api.sendOk(queue, 'a');
      await api.sendOk(queue, 'bb');
      await api.sendOk(queue, 'ccc');
      await api.sendOk(queue, 'dddd');
      const fifth = await api.sendWithHandle(queue, 'eeeee');
      const sixth = await api.sendOk(queue, 'ffffff', { 'Svc-Dedup-String': 'six' });
      expectStatus(await api.send(queue, 'ffffff', { 'Svc-Dedup-String': 'six' }), 200);
      const delayed = await api.sendOk(queue, '0123456789', { 'Svc-Delay-Seconds': '3600' });
      expectNoContent(await api.ack((await api.recvOk(queue)).lease));
      expectNoContent(await api.nack((await api.recvOk(queue)).lease));
      expectNoContent(await api.release((await api.recvOk(queue)).lease));
      expectNoContent(await api.fail((await api.recvOk(queue)).lease));
      expectNoContent(await api.discardLease((await api.recvOk(queue)).lease));
      const held = await api.recvOk(queue);
      expect(held.payload.toString()).toBe('dddd');
      expectNoContent(await api.discardHandle(fifth.handle));
      const expected = statsWith({
        total: 4,
        dataBytes: 2 + 4 + 6 + 10,
        delayed: 1,
        visible: 1,
        pending: 1,
        failed: 1,
        addedTotal: 7,
        ackedTotal: 1,
        nackedTotal: 1,
        releasedTotal: 1,
        failedTotal: 1,
        discardedTotal: 2,
      });
      expect(await api.queueStats(queue)).toEqual(expected);
      const items = await api.allMessages(queue);
      expect(items.map((item) => item.state)).toEqual(['failed', 'pending', 'visible', 'delayed']);
      expect(items[2]?.id).toBe(sixth);
      expect(items[3]?.id).toBe(delayed);

      expectStatus(await api.ackAndSend(queue, held.lease, 'xyz'), 201);
      const afterAckAndSend: Stats = {
        ...expected,
        dataBytes: 2 + 6 + 10 + 3,
        visible: 2,
        pending: 0,
        addedTotal: 8,
        ackedTotal: 2,
      };
      expect(await api.queueStats(queue)).toEqual(afterAckAndSend);

      const head = await api.failureHead(queue);
      expectStatus(head, 200);
      const failureLease = header(head, 'svc-lease') ?? '';
      expectNoContent(await api.tokenOp('recover', { 'Svc-Lease': failureLease }));
      expect(await api.queueStats(queue)).toEqual({ ...afterAckAndSend, failed: 0, visible: 3 });
    });

    it('/stats answers the rollup and queue entries from one snapshot: rollup counts are the ' +
      'sum', async () => {
      const api = getApi();
      const queue = await api.createQueue();
      await api.sendOk(queue, 'counted');
      const body = await statsOk(api, '?limit=1000');
      const rollup = body.stats as Stats;
      const sums: Record<string, number> = {};
      for (const field of countFields) sums[field] = 0;
      for (const item of body.queues.items) {
        const stats = item.stats as Stats;
        for (const field of countFields) sums[field] = (sums[field] ?? 0) + stats[field];
      }
      expect(body.queues.items.some((item) => item.name === queue)).toBe(true);
      if (body.queues.next === undefined) {
        expect(body.queueCount).toBe(body.queues.items.length);
        for (const field of countFields) expect(rollup[field], field).toBe(sums[field]);
      } else {
        expect(body.queueCount).toBeGreaterThan(body.queues.items.length);
        for (const field of countFields) {
          expect(rollup[field], field).toBeGreaterThanOrEqual(sums[field] ?? 0);
        }
      }
      for (const field of statsFields) expect(Number.isInteger(rollup[field])).toBe(true);
    });

    it('/stats filters by repeatable queue names (unknown names absent), by match, and pages by ' +
      'name', async () => {
      const api = getApi();
      const base = api.target.newQueueName();
      const names = ['a', 'b', 'c'].map((suffix) => `${base}-${suffix}`);
      for (const name of names) await api.createQueue(undefined, name);
      await api.sendOk(names[1] ?? '', 'in b');
      const query = `?queue=${names[2]}&queue=${names[1]}&queue=${base}-missing`;
      const picked = await statsOk(api, query);
      expect(picked.queues.items.map((item) => item.name)).toEqual([names[1], names[2]]);
      expect((picked.queues.items[0]?.stats as Stats).visible).toBe(1);
      expect(picked.queueCount).toBeGreaterThanOrEqual(3);
      const match = encodeURIComponent(`^${base}-`);
      const first = await statsOk(api, `?match=${match}&limit=2`);
      expect(first.queues.items.map((item) => item.name)).toEqual(names.slice(0, 2));
      const next = first.queues.next ?? '';
      expect(next.length).toBeGreaterThanOrEqual(1);
      const after = encodeURIComponent(next);
      const second = await statsOk(api, `?match=${match}&limit=2&after=${after}`);
      expect(second.queues.items.map((item) => item.name)).toEqual(names.slice(2));
      expect(second.queues.next).toBeUndefined();
      const none = await statsOk(api, `?queue=${base}-missing`);
      expect(none.queues.items).toEqual([]);
      expect(none.queues.next).toBeUndefined();
    });

    it('/stats validates limit, after and match like the listings', async () => {
      const api = getApi();
      expectInvalidArgument(await api.stats('?limit=0'), 'limit');
      expectInvalidArgument(await api.stats('?limit=1001'), 'limit');
      expectInvalidArgument(await api.stats(`?after=${'z'.repeat(257)}`), 'after');
      expectInvalidArgument(await api.stats(`?match=${encodeURIComponent('(?=x)')}`), 'match');
      expectInvalidArgument(await api.stats(`?queue=${'q'.repeat(64)}`), 'queue');
    });

    it("the spool's cumulative counters keep counting deleted queues", async () => {
      const api = getApi();
      const queue = await api.createQueue();
      const before = (await statsOk(api, `?queue=${queue}`)).stats as Stats;
      await api.sendOk(queue, 'one');
      await api.sendOk(queue, 'two');
      expectNoContent(await api.ack((await api.recvOk(queue)).lease));
      const during = (await statsOk(api, `?queue=${queue}`)).stats as Stats;
      expect(during.addedTotal).toBeGreaterThanOrEqual(before.addedTotal + 2);
      expect(during.ackedTotal).toBeGreaterThanOrEqual(before.ackedTotal + 1);
      expectNoContent(await api.deleteQueue(queue, 'force'));
      const after = (await statsOk(api, `?queue=${queue}`)).stats as Stats;
      expect(after.addedTotal).toBeGreaterThanOrEqual(during.addedTotal);
      expect(after.ackedTotal).toBeGreaterThanOrEqual(during.ackedTotal);
      const spool = await describeSpoolOk(api);
      expect(spool.stats.addedTotal as number).toBeGreaterThanOrEqual(during.addedTotal);
    });
  });
}
