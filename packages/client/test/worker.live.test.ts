// The worker loop against the real in-memory server.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Delivery, MqClient, decodeText, runWorker } from '../src/index.js';
import { type LiveServer, startLiveServer, uniqueName } from './live-server.js';

let server: LiveServer;
let client: MqClient;

beforeAll(async () => {
  server = await startLiveServer();
  client = server.client();
});

afterAll(async () => {
  await server.close();
});

async function queueWith(bodies: readonly string[], settings = {}): Promise<string> {
  const name = uniqueName('work');
  await client.createQueue(name, settings);
  for (const body of bodies) await client.send(name, body);
  return name;
}

describe('runWorker', () => {
  it('handles every message once with several slots and acks them', async () => {
    const bodies = Array.from({ length: 20 }, (_, i) => `m${i}`);
    const queue = await queueWith(bodies);
    const stop = new AbortController();
    const seen: string[] = [];
    const counts = await runWorker({
      client,
      queue,
      concurrency: 4,
      signal: stop.signal,
      handler: (delivery) => {
        seen.push(decodeText(delivery.body));
        if (seen.length === bodies.length) stop.abort();
      },
    });
    expect(seen.sort()).toEqual([...bodies].sort());
    expect(counts).toMatchObject({ received: 20, acked: 20, nacked: 0 });
    const stats = await client.stats({ queues: [queue] });
    expect(stats.queues.items[0]?.stats).toMatchObject({ total: 0, ackedTotal: 20 });
  });

  it('nacks when the handler throws, and the message comes back', async () => {
    const queue = await queueWith(['flaky']);
    const stop = new AbortController();
    const attempts: Delivery[] = [];
    const errors: string[] = [];
    const counts = await runWorker({
      client,
      queue,
      signal: stop.signal,
      onError: (_error, stage) => errors.push(stage),
      handler: (delivery) => {
        attempts.push(delivery);
        if (attempts.length === 1) throw new Error('first try fails');
        stop.abort();
      },
    });
    expect(attempts.map((d) => d.retries)).toEqual([0, 1]);
    expect(counts).toMatchObject({ nacked: 1, acked: 1, handlerErrors: 1 });
    expect(errors).toEqual(['handler']);
  });

  it('renews the lease while a handler outlives the lease timeout', async () => {
    const queue = await queueWith(['slow'], { leaseTimeoutSeconds: 1 });
    const stop = new AbortController();
    const errors: unknown[] = [];
    const counts = await runWorker({
      client,
      queue,
      signal: stop.signal,
      onError: (error) => errors.push(error),
      handler: async (delivery) => {
        const firstExpiryMs = Date.parse(delivery.leaseExpiresAt ?? '');
        // Outlive the first lease by half a second (bounded: ~40 checks).
        for (let i = 0; i < 100 && Date.now() < firstExpiryMs + 500; i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        stop.abort();
      },
    });
    expect(errors).toEqual([]);
    expect(counts.renewed).toBeGreaterThanOrEqual(1);
    expect(counts).toMatchObject({ acked: 1, leasesLost: 0 });
    const stats = await client.stats({ queues: [queue] });
    expect(stats.queues.items[0]?.stats).toMatchObject({ ackedTotal: 1, nackedTotal: 0 });
  });

  it('stops while idle and lets an in-flight handler finish and ack', async () => {
    const queue = await queueWith(['in-flight']);
    const stop = new AbortController();
    let finished = false;
    const counts = await runWorker({
      client,
      queue,
      concurrency: 3,
      signal: stop.signal,
      handler: async () => {
        stop.abort();
        await new Promise((resolve) => setTimeout(resolve, 20));
        finished = true;
      },
    });
    expect(finished).toBe(true);
    expect(counts.acked).toBe(1);
    expect(await client.receive(queue, { waitSeconds: 0 })).toBeNull();
  });

  it('rejects when the queue does not exist', async () => {
    const stop = new AbortController();
    await expect(
      runWorker({ client, queue: 'missing-queue', signal: stop.signal, handler: () => undefined }),
    ).rejects.toMatchObject({ status: 404, kind: 'queue_not_found' });
  });

  it('returns at once when started already stopped', async () => {
    const stop = new AbortController();
    stop.abort();
    const counts = await runWorker({ client, queue: 'any', signal: stop.signal, handler: () => undefined });
    expect(counts.received).toBe(0);
  });
});
