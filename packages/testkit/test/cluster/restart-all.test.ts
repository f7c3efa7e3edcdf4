// Every member SIGKILLed at once and started again: nothing acknowledged is lost. Sends answered
// 201, acks answered 204, and the stats after the restart agree with what the clients were told.

import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, queueNamer } from '../../src/conformance/index.js';
import { ProcessCluster, ensureCliBuilt } from '../../src/cluster/index.js';
import { drainQueue } from './send-stream.js';

const MESSAGES = 300;
const ACKED = 120;
const LEASED = 5;
const CONCURRENCY = 8;

let cluster: ProcessCluster;
let api: Api;

beforeAll(async () => {
  await ensureCliBuilt();
  cluster = await ProcessCluster.start({ members: 3 });
  await cluster.waitReady();
  api = new Api({ baseUrl: cluster.baseUrl, apiKey: await cluster.apiKey(), spool: 'default', newQueueName: queueNamer('restart') });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

interface QueueCounts {
  readonly total: number;
  readonly visible: number;
  readonly pending: number;
}

async function countsOf(queue: string): Promise<QueueCounts> {
  const stats = await api.queueStats(queue);
  return { total: stats.total, visible: stats.visible, pending: stats.pending };
}

describe('SIGKILL of every member, then a restart', () => {
  it('keeps every acknowledged send and ack; counts match', async () => {
    onTestFailed(() => console.error(cluster.logTails(60)));
    const queue = await api.createQueue();
    const payloads = Array.from({ length: MESSAGES }, (_, i) => `m-${i}`);
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < payloads.length) await api.sendOk(queue, payloads[next++]!);
      }),
    );
    const acked = new Set<string>();
    for (let i = 0; i < ACKED; i += 1) {
      const delivery = await api.recvOk(queue);
      expect((await api.ack(delivery.lease)).status).toBe(204);
      acked.add(delivery.payload.toString());
    }
    const leased = [];
    for (let i = 0; i < LEASED; i += 1) leased.push(await api.recvOk(queue));
    expect(await countsOf(queue)).toEqual({ total: MESSAGES - ACKED, visible: MESSAGES - ACKED - LEASED, pending: LEASED });

    await Promise.all(cluster.members.map((member) => member.kill('SIGKILL')));
    await Promise.all(cluster.members.map((member) => member.start()));
    await cluster.waitReady();

    // The leases died with their primary: their messages are visible again.
    expect(await countsOf(queue)).toEqual({ total: MESSAGES - ACKED, visible: MESSAGES - ACKED, pending: 0 });
    const gone = await api.ack(leased[0]!.lease);
    expect(gone.status).toBe(410);
    const received = await drainQueue(api, queue, MESSAGES);
    const expected = payloads.filter((p) => !acked.has(p));
    expect([...received].sort()).toEqual([...expected].sort());
    expect(await countsOf(queue)).toEqual({ total: 0, visible: 0, pending: 0 });
    // The cluster takes writes again after the restart.
    await api.sendOk(queue, 'after');
    expect((await api.recvOk(queue)).payload.toString()).toBe('after');
  }, 120_000);
});
