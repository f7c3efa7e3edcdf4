// The cluster as users run it: the image built from deploy/Dockerfile, the docker-compose.yml
// topology (mutual TLS from `mq certs`, three members, a gateway), and the faults of real
// deployments. Every scenario runs a bounded load through the gateway and checks what was
// acknowledged against what came out: received, lost (always 0), redelivered.

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { MEMBER_ELECTION_TIMEOUT_MS } from '@spoolmq/testkit';
import { ComposeCluster } from './compose-cluster.js';
import { QueueHttp, isDelivery } from './queue-http.js';
import {
  WORKLOAD_QUEUE_SETTINGS,
  Workload,
  formatTally,
  type Tally,
  type WorkloadOptions,
} from './workload.js';

const ACCOUNT = 'e2e';
const SPOOL = 'default';
/** Sends acknowledged between two steps of a scenario: the cluster serves again. */
const PROGRESS_SENDS = 20;
/** Leases taken before each member's restart and acked after it. */
const HELD_LEASES = 5;

let cluster: ComposeCluster;
let key: string;
let http: QueueHttp;
let scenarioStartMs = 0;

function seconds(sinceMs: number): string {
  return ((performance.now() - sinceMs) / 1_000).toFixed(1);
}

/** A steady, bounded load on its own queue. */
function loadOptions(queue: string, overrides: Partial<WorkloadOptions> = {}): WorkloadOptions {
  return {
    queue,
    prefix: queue,
    sendsPerSecond: 20,
    senders: 2,
    consumers: 4,
    // Bounds well past a scenario's length on a loaded machine: `finish` ends the load.
    maxSends: 8_000,
    maxDurationMs: 400_000,
    ...overrides,
  };
}

async function startLoad(
  queue: string,
  overrides: Partial<WorkloadOptions> = {},
): Promise<Workload> {
  expect((await http.createQueue(queue, WORKLOAD_QUEUE_SETTINGS)).status).toBe(201);
  const load = new Workload(http, loadOptions(queue, overrides));
  load.start();
  await progress(load);
  return load;
}

/** Waits until the load has had PROGRESS_SENDS more sends acknowledged. */
async function progress(load: Workload): Promise<void> {
  const target = load.acknowledgedCount + PROGRESS_SENDS;
  await expect.poll(() => load.acknowledgedCount).toBeGreaterThanOrEqual(target);
}

/** The primary of the test spool as `ask` sees it, once it sees one. */
async function primary(ask: string): Promise<string> {
  let found: string | undefined;
  await expect.poll(async () => (found = await cluster.primary(ACCOUNT, SPOOL, ask))).toBeDefined();
  return found!;
}

/** Prints the scenario's counts and checks nothing acknowledged was lost. */
function report(scenario: string, tally: Tally): Tally {
  process.stdout.write(`${formatTally(scenario, tally)}\n`);
  expect(tally.acknowledged).toBeGreaterThan(0);
  expect(tally.lost).toBe(0);
  expect(tally.received).toBe(tally.acknowledged);
  expect(tally.unexpected).toBe(0);
  return tally;
}

beforeAll(async () => {
  const startedMs = performance.now();
  cluster = await ComposeCluster.up(inject('e2eImage'));
  process.stdout.write(`e2e: the compose cluster was up in ${seconds(startedMs)} s\n`);
  // As the README's compose section: a key for the whole cluster from any member's admin API.
  key = await cluster.admin(cluster.members[0]!, ['accounts', 'create', ACCOUNT, '-q']);
  http = new QueueHttp(cluster.apiUrl, key, SPOOL);
});

beforeEach(() => {
  scenarioStartMs = performance.now();
});

afterEach(async (context) => {
  process.stdout.write(`e2e: '${context.task.name}' took ${seconds(scenarioStartMs)} s\n`);
  if (context.task.result?.state !== 'fail' || cluster === undefined) return;
  const scenario = context.task.name.slice(0, 40).replace(/\W+/g, '-');
  const dir = join(tmpdir(), `${cluster.project}-logs`, scenario);
  await cluster.saveLogs(dir);
  process.stdout.write(`e2e: the services' logs after the failure are in ${dir}\n`);
});

afterAll(async () => {
  await cluster?.destroy();
});

describe('the compose cluster', () => {
  it('runs the README walk-through through the gateway', async () => {
    expect((await http.createQueue('jobs', {})).status).toBe(201);
    const sent = await http.send('jobs', 'hello');
    expect(sent.status).toBe(201);
    const got = await http.recv('jobs', 1);
    expect(isDelivery(got) && got.payload).toBe('hello');
    expect(isDelivery(got) && got.messageId).toBe(sent.headers.get('svc-message-id'));
    expect((await http.ack((got as { lease: string }).lease)).status).toBe(204);
    // The image's own `mq` command against the gateway, as a user in the container would.
    const cli = await cluster.cli('gateway', ['send', 'jobs', 'hi from mq', '--key', key]);
    expect(cli).toMatch(/^sent [0-9a-f]+$/);
    const recvArgs = ['recv', 'jobs', '--wait', '5', '--ack', '--key', key];
    const recv = await cluster.cli('gateway', recvArgs);
    expect(recv).toBe('hi from mq');
    process.stdout.write('e2e walk-through: acknowledged 2, received 2, lost 0\n');
  });

  it('fails over when the primary container is killed, losing nothing acknowledged', async () => {
    const load = await startLoad('kill');
    const victim = await primary(cluster.members[0]!);
    await cluster.kill(victim);
    await progress(load);
    const successor = await primary(cluster.members.find((m) => m !== victim)!);
    expect(successor).not.toBe(victim);
    await cluster.revive(victim);
    await progress(load);
    report(`docker kill ${victim} (primary; ${successor} took over)`, await load.finish());
  });

  it('survives the primary paused for longer than an election timeout', async () => {
    const load = await startLoad('pause');
    const victim = await primary(cluster.members[0]!);
    await cluster.pause(victim);
    const pausedMs = 4 * MEMBER_ELECTION_TIMEOUT_MS;
    await sleep(pausedMs);
    await progress(load);
    await cluster.unpause(victim);
    await progress(load);
    report(`docker pause ${victim} (primary) for ${pausedMs} ms`, await load.finish());
  });

  it('survives the primary cut off the network and back', async () => {
    const load = await startLoad('cut');
    const victim = await primary(cluster.members[0]!);
    await cluster.disconnect(victim);
    await progress(load);
    const successor = await primary(cluster.members.find((m) => m !== victim)!);
    expect(successor).not.toBe(victim);
    await cluster.reconnect(victim);
    await progress(load);
    report(`docker network disconnect ${victim} (primary), then connect`, await load.finish());
  });

  it('restarts the whole cluster from its volumes', async () => {
    const load = await startLoad('volumes', { consumers: 0, maxSends: 300, sendsPerSecond: 50 });
    const sent = await load.sendsDone();
    await cluster.down();
    await cluster.start();
    http = new QueueHttp(cluster.apiUrl, key, SPOOL);
    load.retarget(http);
    const tally = report('docker compose down, then up (same volumes)', await load.drain(2));
    expect(tally.acknowledged).toBe(sent);
    expect(tally.redelivered).toBe(0);
  });

  it('restarts every member in turn under load: no lease voided, nothing redelivered', async () => {
    const load = await startLoad('rolling');
    const held: Record<string, number> = {};
    const rounds: string[] = [];
    for (const member of cluster.members) {
      const before = await primary(member);
      const leases = await load.hold(HELD_LEASES);
      await cluster.restart(member);
      await progress(load);
      const settled = await load.settle(leases);
      for (const [status, count] of Object.entries(settled)) {
        held[status] = (held[status] ?? 0) + count;
      }
      const role = member === before ? ' (primary)' : '';
      rounds.push(`${member}${role}: held leases ${JSON.stringify(settled)}`);
    }
    const scenario = 'rolling restart (docker restart, SIGTERM) of every member';
    const tally = report(scenario, await load.finish());
    process.stdout.write(`e2e rolling restart: ${rounds.join('; ')}\n`);
    expect(held).toEqual({ 204: cluster.members.length * HELD_LEASES });
    expect(tally.redelivered).toBe(0);
    expect(tally.acks['410'] ?? 0).toBe(0);
    // A planned restart leaves no write unconfirmed: the stopping member drains its calls.
    expect(tally.retried.sends['500'] ?? 0).toBe(0);
    expect(tally.retried.acks['500'] ?? 0).toBe(0);
  });
});
