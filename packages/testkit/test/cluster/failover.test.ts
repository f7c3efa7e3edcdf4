// Failover with real processes: three members and a gateway on loopback, a steady stream of sends
// with distinct payloads, and the primary SIGKILLed in the middle of it. Every send answered 201
// is received afterwards, leases from before the failover answer 410 primary_changed (their
// messages are visible again), the spool's startedAt moves, and sends succeed again within a
// generous liveness bound.

import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, queueNamer } from '../../src/conformance/index.js';
import { ProcessCluster, ensureCliBuilt } from '../../src/cluster/index.js';
import { SendStream, drainQueue } from './send-stream.js';

/** Liveness bound, not a measurement: election timeout (~0.5-1 s) plus a wide margin. */
const RECOVERY_BOUND_MS = 15_000;
const PRODUCERS = 4;

let cluster: ProcessCluster;
let api: Api;

beforeAll(async () => {
  await ensureCliBuilt();
  cluster = await ProcessCluster.start({ members: 3 });
  await cluster.waitReady();
  api = new Api({
    baseUrl: cluster.baseUrl,
    apiKey: await cluster.apiKey(),
    spool: 'default',
    newQueueName: queueNamer('failover'),
  });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

async function spoolStartedAt(): Promise<string> {
  const response = await api.call('GET', '/spools/default');
  expect(response.status).toBe(200);
  return (JSON.parse(response.body.toString('utf8')) as { stats: { startedAt: string } }).stats.startedAt;
}

describe('SIGKILL of the primary under a steady send stream', () => {
  it('loses no acknowledged send, fences old leases, moves startedAt and recovers', async () => {
    onTestFailed(() => console.error(cluster.logTails(60)));
    const stream = await api.createQueue();
    const held = await api.createQueue();
    for (const payload of ['h0', 'h1', 'h2']) await api.sendOk(held, payload);
    const leases = [await api.recvOk(held), await api.recvOk(held)];
    expect(leases.map((d) => d.payload.toString())).toEqual(['h0', 'h1']);
    const startedBefore = await spoolStartedAt();
    const primary = await cluster.waitPrimary('default');

    const sends = new SendStream(api, stream, 'p', PRODUCERS);
    let killedAtMs = 0;
    try {
      await sends.until(() => sends.acknowledged().size >= 100, '100 sends answered 201');
      killedAtMs = performance.now();
      await cluster.memberById(primary).kill('SIGKILL');
      await sends.until(
        () => sends.okStartedAfter(killedAtMs).length >= 100,
        '100 sends answered 201 after the kill',
      );
    } finally {
      await sends.stop();
    }
    const recoveredMs = Math.min(...sends.okStartedAfter(killedAtMs).map((o) => o.endedMs)) - killedAtMs;
    expect(recoveredMs).toBeLessThan(RECOVERY_BOUND_MS);
    const newPrimary = await cluster.waitPrimary('default', [primary]);
    expect(newPrimary).not.toBe(primary);

    // Leases minted by the dead primary are fenced; their messages came back, no retry spent.
    const gone = await api.ack(leases[0]!.lease);
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body.toString('utf8'))).toMatchObject({ kind: 'gone', details: { reason: 'primary_changed' } });
    const again = [await api.recvOk(held), await api.recvOk(held), await api.recvOk(held)];
    expect(again.map((d) => d.payload.toString())).toEqual(['h0', 'h1', 'h2']);
    expect(again.map((d) => d.retries)).toEqual([0, 0, 0]);
    expect((await api.recv(held, 0)).status).toBe(204);

    expect(Date.parse(await spoolStartedAt())).toBeGreaterThan(Date.parse(startedBefore));

    // Every 201 is received; nothing is received twice or that no send produced; sends that
    // were answered 500 operation_unconfirmed may or may not be there.
    const acknowledged = sends.acknowledged();
    const received = await drainQueue(api, stream, sends.outcomes.length + 10);
    expect(new Set(received).size).toBe(received.length);
    const attempted = new Map(sends.outcomes.map((o) => [o.payload, o]));
    const unexpected = received.filter((p) => {
      const outcome = attempted.get(p);
      return outcome === undefined || (outcome.status !== 201 && outcome.kind !== 'operation_unconfirmed' && outcome.status !== 'error');
    });
    expect(unexpected).toEqual([]);
    const receivedSet = new Set(received);
    const lost = [...acknowledged.keys()].filter((p) => !receivedSet.has(p));
    expect(lost).toEqual([]);
    const statuses = new Map<string, number>();
    for (const o of sends.outcomes) statuses.set(`${o.status} ${o.kind ?? ''}`.trim(), (statuses.get(`${o.status} ${o.kind ?? ''}`.trim()) ?? 0) + 1);
    console.info(`failover: ${sends.outcomes.length} sends (${JSON.stringify(Object.fromEntries(statuses))}), first 201 after the kill in ${Math.round(recoveredMs)} ms; primary ${primary} -> ${newPrimary}`);

    // The killed member comes back and the cluster is whole again.
    await cluster.memberById(primary).start();
    await cluster.waitReady();
  }, 120_000);
});
