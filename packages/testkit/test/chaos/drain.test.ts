// The drain waits out delays and abandoned leases, acks what it receives (recorded), and stops
// at failed messages; the collection lists them with payloads and the stats total.

import { startHttpServer, type RunningServer } from '@spoolmq/gateway';
import { createLocalService, type LocalService } from '@spoolmq/member';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { check } from '../../src/chaos/checker.js';
import { collectFinalState, drainQueues } from '../../src/chaos/drain.js';
import { History } from '../../src/chaos/history.js';
import { Recorder } from '../../src/chaos/recorder.js';
import { setupQueues, workloadClient } from '../../src/chaos/workload-executor.js';
import { defaultWorkloadModel } from '../../src/chaos/workload.js';

let service: LocalService;
let server: RunningServer;

beforeAll(async () => {
  service = createLocalService();
  server = await startHttpServer(service, { host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await server.close();
  await service.close();
});

describe('drainQueues and collectFinalState', () => {
  it('drains delayed and abandoned messages, keeps failed ones, and collects them', async () => {
    const target = { baseUrl: `http://127.0.0.1:${server.port}/v1`, apiKey: 'k' };
    const queue = {
      name: 'drain-test',
      leaseTimeoutSeconds: 1,
      maxRetries: 3,
      dedupWindowSeconds: 0,
      retentionSeconds: 3_600,
      delayedFraction: 0,
      delaySecondsMax: 1,
      abandonAllowed: true,
    };
    const model = defaultWorkloadModel(1, { queues: [queue] });
    await setupQueues(model, target);
    const history = new History();
    const recorder = new Recorder(history, 'setup', 5_000);
    const client = workloadClient(target, model.spool);
    const send = (payload: string, delaySeconds = 0) =>
      recorder.call(
        'send',
        { queue: queue.name, payload, ...(delaySeconds > 0 ? { delayMs: 1_000 } : {}) },
        (signal) => client.send(queue.name, payload, { retries: 0, delaySeconds, signal }),
        (r) => ({ status: 201, messageId: r.messageId }),
      );
    await send('p:setup:1');
    await send('p:setup:2');
    await send('p:setup:3', 1);
    // Receive two: fail one, abandon the other (its lease runs out in a second).
    const received = [];
    for (let i = 0; i < 2; i += 1) {
      const result = await recorder.call(
        'recv',
        { queue: queue.name },
        (signal) => client.receive(queue.name, { waitSeconds: 0, signal }),
        (d) => ({
          status: 200,
          messageId: d!.messageId,
          payload: new TextDecoder().decode(d!.body),
          lease: d!.lease,
          ...(d!.leaseExpiresAt === undefined ? {} : { leaseExpiresAt: d!.leaseExpiresAt }),
        }),
      );
      if (result.outcome !== 'ok' || result.value === null) throw new Error('setup receive failed');
      received.push(result.value);
    }
    const failed = received[0]!;
    await recorder.call(
      'fail',
      { queue: queue.name, lease: failed.lease, messageId: failed.messageId },
      (signal) => client.fail(failed.lease, { signal }),
      () => ({ status: 204 }),
    );

    const summary = await drainQueues({ model, target, history, boundMs: 20_000 });
    expect(summary).toEqual({ acked: 2, drained: true, remaining: { 'drain-test': 0 } });
    const drainOps = history.operations().filter((op) => op.invoke.client === 'drain');
    const drainAcks = drainOps.filter((op) => op.invoke.kind === 'ack');
    expect(drainAcks.map((op) => op.completion?.type)).toEqual(['ok', 'ok']);

    const final = await collectFinalState({ model, target, history });
    expect(final.queues).toEqual([
      {
        name: 'drain-test',
        dedupWindowSeconds: 0,
        messages: [
          expect.objectContaining({ id: failed.messageId, state: 'failed', payload: 'p:setup:1' }),
        ],
        stats: { total: 1 },
      },
    ]);
    const report = check(history, final);
    expect(report.valid).toBe(true);
    expect(report.counts.deliveries).toBe(4);
  });

  it('keeps draining past its bound while passes make progress (a backlog takes what it takes)', async () => {
    const queue = {
      name: 'drain-backlog',
      leaseTimeoutSeconds: 30,
      maxRetries: 3,
      dedupWindowSeconds: 0,
      retentionSeconds: 3_600,
      delayedFraction: 0,
      delaySecondsMax: 1,
      abandonAllowed: false,
    };
    const model = defaultWorkloadModel(1, { queues: [queue] });
    const plain = { baseUrl: `http://127.0.0.1:${server.port}/v1`, apiKey: 'k' };
    await setupQueues(model, plain);
    const client = workloadClient(plain, model.spool);
    for (let i = 0; i < 30; i += 1) await client.send(queue.name, `p:backlog:${i}`, { retries: 0 });
    // Each receive is slow, and every 12th fails: a pass ends early, after the bound has passed.
    let receives = 0;
    const slowAndFlaky: typeof fetch = async (input, init) => {
      const url = String(input);
      if (url.includes('/recv')) {
        receives += 1;
        await new Promise((resolve) => setTimeout(resolve, 40));
        if (receives % 12 === 0) throw new TypeError('connection reset (injected)');
      }
      return fetch(input, init);
    };
    const history = new History();
    const target = { ...plain, fetch: slowAndFlaky };
    const drain = await drainQueues({ model, target, history, boundMs: 200 });
    expect(drain).toMatchObject({ acked: 30, drained: true });
  });
});
