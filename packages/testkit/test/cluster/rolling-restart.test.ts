// A rolling restart with real processes: three members and a gateway, every member in turn
// stopped with SIGTERM (it hands its primaries and their leases to its peers first) and started
// again, under a steady stream of sends and a worker receiving and acking. Leases taken before
// the restarts still ack with 204 after them (a failure lease still recovers), no message is
// delivered twice, nothing acknowledged is lost. A SIGKILL, by contrast, still voids the leases
// (410 primary_changed).

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, queueNamer } from '../../src/conformance/index.js';
import { deliveryOf } from '../../src/conformance/api.js';
import { ProcessCluster, ensureCliBuilt } from '../../src/cluster/index.js';
import { SendStream, drainQueue } from './send-stream.js';

const PRODUCERS = 2;
/** Sends acknowledged between two restarts: the stream is really running through each one. */
const SENDS_BETWEEN_RESTARTS = 30;

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
    newQueueName: queueNamer('rolling'),
  });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

/** The JSON error body of an answer; {} for one without a body (a 204). */
function bodyOf(response: { body: Buffer }): { kind?: string; details?: { reason?: string } } {
  if (response.body.byteLength === 0) return {};
  return JSON.parse(response.body.toString('utf8')) as { kind?: string; details?: { reason?: string } };
}

/** Receives and acks `queue` until stopped, recording every delivery and every ack answer. */
class Worker {
  readonly deliveries: string[] = [];
  readonly ackStatuses = new Map<string, number>();
  private running = true;
  private readonly done: Promise<void>;

  constructor(private readonly queue: string) {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running && i < 100_000; i++) {
      let response;
      try {
        response = await api.recv(this.queue, 1);
      } catch {
        continue; // no answer: nothing was leased to us that we know of
      }
      if (response.status !== 200) {
        if (response.status !== 204) await new Promise((resolve) => setTimeout(resolve, 20));
        continue;
      }
      this.deliveries.push(String(response.headers['svc-message-id']));
      const ack = await api.ack(String(response.headers['svc-lease'])).catch(() => null);
      const key = ack === null ? 'error' : `${ack.status} ${bodyOf(ack).details?.reason ?? ''}`.trim();
      this.ackStatuses.set(key, (this.ackStatuses.get(key) ?? 0) + 1);
    }
  }
}

/**
 * Every member's log lines about who led what (leader changes, openings, hand-offs): on a
 * failure they tell a planned change of primary from an election (a stalled process on a busy
 * machine), which voids leases by design.
 */
function leadershipHistory(): string {
  const pattern = /leader_changed|primary_opened|primary_closed|handed|hand-off/;
  return cluster.members
    .map((member) => {
      let text = '';
      try {
        text = readFileSync(member.logPath, 'utf8');
      } catch {
        return `----- ${member.id}: no log`;
      }
      const lines = text.split('\n').filter((line) => pattern.test(line));
      return `----- ${member.id}\n${lines.join('\n')}`;
    })
    .join('\n');
}

/** The longest time between two consecutive 201 answers (ms). */
function longestPauseMs(stream: SendStream): number {
  const ends = stream.outcomes.filter((o) => o.status === 201).map((o) => o.endedMs).sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < ends.length; i++) longest = Math.max(longest, ends[i]! - ends[i - 1]!);
  return longest;
}

describe('rolling restart with SIGTERM', () => {
  it('voids no lease taken before it, redelivers nothing and loses nothing acknowledged', async () => {
    onTestFailed(() => console.error(`${leadershipHistory()}\n${cluster.logTails(60)}`));
    const held = await api.createQueue();
    const stream = await api.createQueue();
    for (const payload of ['h0', 'h1', 'h2', 'h3', 'h4']) await api.sendOk(held, payload);
    const leases = [await api.recvOk(held), await api.recvOk(held), await api.recvOk(held)];
    // A failure lease from the failures head, taken before the restarts too.
    const failing = await api.createQueue({ maxRetries: 0 });
    await api.sendOk(failing, 'f0');
    expect((await api.fail((await api.recvOk(failing)).lease)).status).toBe(204);
    const failureLease = deliveryOf(await api.failureHead(failing)).lease;

    const sends = new SendStream(api, stream, 'r', PRODUCERS);
    const worker = new Worker(stream);
    const restarts: string[] = [];
    try {
      for (const member of cluster.members) {
        const before = sends.acknowledged().size;
        await sends.until(() => sends.acknowledged().size >= before + SENDS_BETWEEN_RESTARTS, 'sends before a restart');
        const primary = await cluster.primaryOf('default');
        const stopStartMs = performance.now();
        const exit = await member.stop();
        expect(exit).toEqual({ code: 0, signal: null });
        const stoppedMs = performance.now() - stopStartMs;
        await member.start();
        await cluster.waitReady();
        restarts.push(`${member.id}${member.id === primary ? ' (primary)' : ''} stopped in ${Math.round(stoppedMs)} ms`);
      }
      const after = sends.acknowledged().size;
      await sends.until(() => sends.acknowledged().size >= after + SENDS_BETWEEN_RESTARTS, 'sends after the restarts');
    } finally {
      await sends.stop();
      await worker.stop();
    }

    // The leases taken before the restarts settle now; their messages never came out again.
    for (const delivery of leases) {
      const ack = await api.ack(delivery.lease);
      expect(ack.status, ack.body.toString('utf8')).toBe(204);
    }
    const rest = [await api.recvOk(held), await api.recvOk(held)];
    expect(rest.map((d) => d.payload.toString())).toEqual(['h3', 'h4']);
    expect(rest.map((d) => d.retries)).toEqual([0, 0]);
    expect((await api.recv(held, 0)).status).toBe(204);
    const recovered = await api.tokenOp('recover', { 'Svc-Lease': failureLease });
    expect(recovered.status, recovered.body.toString('utf8')).toBe(204);
    const again = await api.recvOk(failing);
    expect([again.payload.toString(), again.retries]).toEqual(['f0', 0]);

    // The worker's leases all acked (none 410), and no message reached it twice.
    expect(new Set(worker.deliveries).size).toBe(worker.deliveries.length);
    expect([...worker.ackStatuses.keys()].filter((key) => key.startsWith('410'))).toEqual([]);
    // Every send answered 201 came out, to the worker or to the drain.
    const drained = await drainQueue(api, stream, sends.outcomes.length + 10);
    const acknowledged = sends.acknowledged();
    const receivedIds = new Set(worker.deliveries);
    const lost = [...acknowledged.values()].filter((o) => !receivedIds.has(o.messageId!) && !drained.includes(o.payload));
    expect(lost).toEqual([]);
    const statuses = new Map<string, number>();
    for (const o of sends.outcomes) {
      const key = `${o.status} ${o.kind ?? ''}`.trim();
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
    }
    console.info(
      `rolling restart: ${restarts.join('; ')}; sends ${JSON.stringify(Object.fromEntries(statuses))}, ` +
        `${acknowledged.size} acknowledged, ${worker.deliveries.length + drained.length} received ` +
        `(worker acks ${JSON.stringify(Object.fromEntries(worker.ackStatuses))}), lost ${lost.length}, ` +
        `redelivered 0, longest pause between 201s ${Math.round(longestPauseMs(sends))} ms`,
    );
  }, 240_000);

  it('a SIGKILL of the primary still voids its leases (410 primary_changed)', async () => {
    onTestFailed(() => console.error(cluster.logTails(60)));
    const queue = await api.createQueue();
    await api.sendOk(queue, 'k0');
    const lease = await api.recvOk(queue);
    const primary = await cluster.waitPrimary('default');
    await cluster.memberById(primary).kill('SIGKILL');
    await cluster.waitPrimary('default', [primary]);
    const gone = await api.ack(lease.lease);
    expect(gone.status).toBe(410);
    expect(bodyOf(gone)).toMatchObject({ kind: 'gone', details: { reason: 'primary_changed' } });
    const again = await api.recvOk(queue, 5);
    expect([again.payload.toString(), again.retries]).toEqual(['k0', 0]);
    await cluster.memberById(primary).start();
    await cluster.waitReady();
  }, 120_000);
});
