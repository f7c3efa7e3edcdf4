// The process harness itself: start, readiness, primaries, pause/resume, restart, and a wiped
// member that rejoins the existing cluster (it must not found a second one), and stop() leaving
// no process behind.

import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, queueNamer } from '../../src/conformance/index.js';
import { describeResponse } from '../../src/conformance/expectations.js';
import { ProcessCluster, TEST_ACCOUNT, ensureCliBuilt, metricSamples } from '../../src/cluster/index.js';
import { drainQueue } from './send-stream.js';

let cluster: ProcessCluster;
let api: Api;

beforeAll(async () => {
  await ensureCliBuilt();
  cluster = await ProcessCluster.start({ members: 3 });
  await cluster.waitReady();
  api = new Api({ baseUrl: cluster.baseUrl, apiKey: await cluster.apiKey(), spool: 'default', newQueueName: queueNamer('harness') });
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

/** The leader a member's /metrics names for Raft group `group`, null when none. */
function leaderOf(metrics: string, group: string): string | null {
  const sample = metricSamples(metrics, 'mq_member_raft_leader').find((s) => s.labels['group'] === group);
  return sample?.labels['leader'] ?? null;
}

/** Polls `test` every 100 ms until it holds; throws after `timeoutMs`. */
async function until(test: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadlineMs = performance.now() + timeoutMs;
  while (performance.now() < deadlineMs) {
    if (await test()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}

/**
 * Each member's recent leadership changes, warnings and errors: a failure's explanation that
 * fits the summary at the end of a test run (the full log tails go to stderr).
 */
function events(c: ProcessCluster): string {
  const notable = /leader_changed|primary_|member \w+ ready|"level":[456]0/;
  return c.members
    .map((node) => {
      const lines = node.tail(400).split('\n').filter((line) => notable.test(line));
      return `-- ${node.label}\n${lines.slice(-12).map((l) => l.slice(0, 300)).join('\n')}`;
    })
    .join('\n');
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('ProcessCluster', () => {
  it('runs members that report one serving primary of default, and a gateway in front', async () => {
    onTestFailed(() => console.error(cluster.logTails(40)));
    expect(cluster.ids).toEqual(['n1', 'n2', 'n3']);
    const primary = await cluster.waitPrimary('default');
    expect(cluster.ids).toContain(primary);
    let serving = 0;
    for (const member of cluster.members) {
      const text = await member.metrics();
      const sample = metricSamples(text, 'mq_member_spool_serving').find((s) => s.labels['spool'] === `${TEST_ACCOUNT}/default`);
      expect(sample, member.id).toBeDefined();
      serving += sample!.value;
      expect(metricSamples(text, 'mq_member_ready')[0]?.value).toBe(1);
    }
    expect(serving).toBe(1);
    expect(cluster.baseUrl).toBe(cluster.gateway().baseUrl);
    // Each member's embedded gateway serves the API too, forwarding to the primary.
    const queue = await api.createQueue();
    const viaMember = new Api({ ...api.target, baseUrl: cluster.member(0).baseUrl });
    const viaOther = new Api({ ...api.target, baseUrl: cluster.member(2).baseUrl });
    await viaMember.sendOk(queue, 'through n1');
    expect((await viaOther.recvOk(queue)).payload.toString()).toBe('through n1');
  });

  it('keeps serving while a follower is paused, and the follower catches up when resumed', async () => {
    onTestFailed(() => console.error(cluster.logTails(40)));
    const primary = await cluster.waitPrimary('default');
    const follower = cluster.members.find((m) => m.id !== primary)!;
    const queue = await api.createQueue();
    follower.pause();
    try {
      expect(follower.paused).toBe(true);
      for (let i = 0; i < 20; i += 1) await api.sendOk(queue, `while-paused-${i}`);
    } finally {
      follower.resume();
    }
    await cluster.waitReady();
    expect(await drainQueue(api, queue, 100)).toEqual(Array.from({ length: 20 }, (_, i) => `while-paused-${i}`));
  });

  it('restarts a member on the same ports and data', async () => {
    onTestFailed(() => console.error(cluster.logTails(40)));
    const member = cluster.member(1);
    const pidBefore = member.pid!;
    await member.restart();
    expect(member.pid).not.toBe(pidBefore);
    expect(isRunning(pidBefore)).toBe(false);
    await cluster.waitReady();
    expect(await member.isReady()).toBe(true);
  });

  // Runs last on the shared cluster: the wiped member stays behind (see the comment below).
  it('restarts a wiped member as a follower of the existing cluster, not as a new one', async () => {
    onTestFailed(() => console.error(cluster.logTails(60)));
    const primary = await cluster.waitPrimary('default');
    const metaLeader = leaderOf(await cluster.memberById(primary).metrics(), 'meta');
    expect(metaLeader).not.toBeNull();
    const wiped = cluster.members.find((m) => m.id !== primary && m.id !== metaLeader)!;
    const queue = await api.createQueue();
    await wiped.kill('SIGKILL');
    await wiped.wipe();
    expect(existsSync(wiped.dataDir!)).toBe(false);
    await wiped.start();
    // With empty storage it bootstraps the same founding configuration as everyone did, so the
    // existing leader's heartbeats reach it and it follows; it never leads a group of its own.
    // The meta leader may change meanwhile (an election on a loaded machine), so the wiped
    // member must name the leader the others name at the same moment, and that is not itself.
    const others = cluster.members.filter((m) => m !== wiped);
    await until(async () => {
      const named = await Promise.all([wiped, ...others].map(async (m) => leaderOf(await m.metrics(), 'meta')));
      return named[0] !== null && named[0] !== wiped.id && named.every((leader) => leader === named[0]);
    });
    const text = await wiped.metrics();
    expect(metricSamples(text, 'mq_member_raft_role').filter((s) => s.labels['role'] === 'leader')).toEqual([]);
    expect(await cluster.primaryOf('default')).toBe(primary);
    for (let i = 0; i < 5; i += 1) {
      const response = await api.send(queue, `after-wipe-${i}`);
      expect(response.status, `send ${i}: ${describeResponse(response)}\n${events(cluster)}`).toBe(201);
    }
    expect(await drainQueue(api, queue, 10)).toEqual(Array.from({ length: 5 }, (_, i) => `after-wipe-${i}`));
    // Known gap (reported): the leaders still hold the wiped member's old match index and ignore
    // its rejections as stale, so it is rebuilt only after a leader change; and it forgot its
    // vote. Hence no readiness assertion here.
  }, 120_000);

  it('stops every process and removes its files', async () => {
    const extra = await ProcessCluster.start({ members: 1, gateway: false });
    const pids = extra.members.map((m) => m.pid!);
    expect(pids.every(isRunning)).toBe(true);
    await extra.waitReady();
    await extra.stop();
    expect(pids.some(isRunning)).toBe(false);
    expect(existsSync(extra.rootDir)).toBe(false);
    await expect((async () => ProcessCluster.create({ members: 0 }))()).rejects.toThrow(RangeError);
  }, 60_000);
});
