// The backlog fill against the in-process local service (a new one per test): it stores what it planned, records
// every send, and the drain and collection read the backlog back so that the checker passes; a
// message removed behind the harness's back is then lost. Also the scenario's pure helpers for
// the backlog: the recovery deadline and the replay command.

import { startHttpServer, type RunningServer } from '@spoolmq/gateway';
import { createLocalService, type LocalService } from '@spoolmq/member';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKLOG_QUEUE, fillBacklog } from '../../src/chaos/backlog.js';
import { check } from '../../src/chaos/checker.js';
import { collectFinalState, drainQueues } from '../../src/chaos/drain.js';
import { History } from '../../src/chaos/history.js';
import { formatReport } from '../../src/chaos/report.js';
import { replayCommand } from '../../src/chaos/scenario-report.js';
import { recoveryDeadlineMs } from '../../src/chaos/scenario.js';
import {
  setupQueues,
  workloadClient,
  type WorkloadTarget,
} from '../../src/chaos/workload-executor.js';
import { defaultWorkloadModel } from '../../src/chaos/workload.js';

let service: LocalService;
let server: RunningServer;

beforeEach(async () => {
  service = createLocalService();
  server = await startHttpServer(service, { host: '127.0.0.1', port: 0 });
});

afterEach(async () => {
  await server.close();
  await service.close();
});

async function filled(
  seed: number,
  fetch?: WorkloadTarget['fetch'],
): Promise<{
  history: History;
  model: ReturnType<typeof defaultWorkloadModel>;
  target: WorkloadTarget;
  lines: string[];
  summary: Awaited<ReturnType<typeof fillBacklog>>;
}> {
  const baseUrl = `http://127.0.0.1:${server.port}/v1`;
  const target: WorkloadTarget = { baseUrl, apiKey: 'k', ...(fetch === undefined ? {} : { fetch }) };
  const model = defaultWorkloadModel(seed, { queues: [BACKLOG_QUEUE] });
  await setupQueues(model, target);
  const history = new History();
  const lines: string[] = [];
  const summary = await fillBacklog({
    seed,
    target,
    spool: model.spool,
    history,
    totalBytes: 100 * 1024,
    payloadBytes: 8 * 1024,
    concurrency: 3,
    boundMs: 30_000,
    requestTimeoutMs: 5_000,
    log: (line) => lines.push(line),
  });
  return { history, model, target, lines, summary };
}

describe('fillBacklog', () => {
  it('stores whole messages up to the size, recorded, and the check passes after a drain', async () => {
    const { history, model, target, lines, summary } = await filled(1);
    expect(summary).toMatchObject({
      messagesPlanned: 13,
      messagesStored: 13,
      indeterminate: 0,
      refused: 0,
      bytesStored: 13 * 8 * 1024,
      complete: true,
    });
    expect(lines.at(-1)).toMatch(/\(13\/13 messages\).*, done$/);
    const sends = history.operations().filter((op) => op.invoke.kind === 'send');
    expect(sends).toHaveLength(13);
    expect(new Set(sends.map((op) => op.invoke.payload)).size).toBe(13);
    expect(sends.every((op) => /^b:\d+:8192:[0-9a-f]{32}$/.test(op.invoke.payload!))).toBe(true);
    const drain = await drainQueues({ model, target, history, boundMs: 5_000, receivers: 3 });
    expect(drain).toMatchObject({ acked: 13, drained: true });
    const acks = history.operations().filter((op) => op.invoke.kind === 'ack');
    expect(new Set(acks.map((op) => op.invoke.client))).toEqual(
      new Set(['drain', 'drain.1', 'drain.2']),
    );
    const final = await collectFinalState({ model, target, history });
    const report = check(history, final);
    if (!report.valid) throw new Error(formatReport(report));
  });

  // 13 planned messages allow 2 replacements: two sends lost are made up for, a third is not.
  it.each([
    { lost: [2, 5], stored: 13, complete: true },
    { lost: [2, 5, 6], stored: 12, complete: false },
  ])('replaces sends with no answer, within a bound ($lost)', async ({ lost, stored, complete }) => {
    let sends = 0;
    // These sends never reach the server: no answer (info), so indeterminate.
    const flaky: WorkloadTarget['fetch'] = (input, init) => {
      if (init.method === 'POST' && String(input).includes('/send')) {
        sends += 1;
        if (lost.includes(sends)) return Promise.reject(new TypeError('fetch failed'));
      }
      return globalThis.fetch(input, init);
    };
    const { history, model, target, summary } = await filled(3, flaky);
    const indeterminate = lost.length;
    const sent = 15;
    expect(summary).toMatchObject({ messagesStored: stored, messagesSent: sent, complete });
    expect(summary).toMatchObject({ messagesPlanned: 13, indeterminate });
    await drainQueues({ model, target, history, boundMs: 5_000 });
    const report = check(history, await collectFinalState({ model, target, history }));
    if (!report.valid) throw new Error(formatReport(report));
    const notAppeared = indeterminate;
    expect(report.indeterminateSends).toEqual({ total: indeterminate, appeared: 0, notAppeared });
  });

  it('leaves a message discarded behind the harness to be reported lost', async () => {
    const { history, model, target } = await filled(2);
    const client = workloadClient(target, model.spool);
    const stolen = await client.receive(BACKLOG_QUEUE.name, { waitSeconds: 0 });
    expect(stolen).not.toBeNull();
    await client.ack(stolen!.lease);
    await drainQueues({ model, target, history, boundMs: 5_000 });
    const report = check(history, await collectFinalState({ model, target, history }));
    expect(report.violations.lost.count).toBe(1);
    expect(report.violations.lost.examples[0]?.messageId).toBe(stolen!.messageId);
  });
});

describe('the scenario with a backlog', () => {
  it('grows recovery deadlines with the backlog, bounded', () => {
    expect(recoveryDeadlineMs(60_000, 0)).toBe(60_000);
    expect(recoveryDeadlineMs(60_000, 2048)).toBe(60_000 + 2048 * 1_000);
    expect(recoveryDeadlineMs(60_000, 64 * 1024)).toBe(45 * 60_000);
    expect(recoveryDeadlineMs(50 * 60_000, 64 * 1024)).toBe(50 * 60_000);
  });

  it('replays with the backlog flags', () => {
    const base = { seed: 7, durationMs: 120_000 };
    expect(replayCommand(base)).toBe('npm run chaos -- --minutes 2 --seed 7');
    expect(replayCommand({ ...base, backlogMiB: 64, backlogPayloadKiB: 64 })).toBe(
      'npm run chaos -- --minutes 2 --seed 7 --backlog-mib 64',
    );
    expect(replayCommand({ ...base, backlogMiB: 64, backlogPayloadKiB: 256 })).toBe(
      'npm run chaos -- --minutes 2 --seed 7 --backlog-mib 64 --backlog-payload-kib 256',
    );
  });
});
