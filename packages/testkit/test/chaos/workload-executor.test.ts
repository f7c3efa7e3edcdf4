// End to end without a cluster: the workload runs against the in-memory local variant served on
// a loopback port, is drained, the final state is collected, and the checker finds nothing.
// Then the same pipeline against the local variant with a bug planted in front of it (an ack
// that answers 204 without acking, a send that answers 201 without appending) must be caught.

import type { SpoolService } from '@spoolmq/engine';
import { startHttpServer, type RunningServer } from '@spoolmq/gateway';
import { createLocalService, type LocalService } from '@spoolmq/member';
import { afterEach, describe, expect, it } from 'vitest';
import { check } from '../../src/chaos/checker.js';
import { collectFinalState, drainQueues } from '../../src/chaos/drain.js';
import { History } from '../../src/chaos/history.js';
import { formatReport, type CheckReport } from '../../src/chaos/report.js';
import { runWorkload, setupQueues } from '../../src/chaos/workload-executor.js';
import { defaultWorkloadModel } from '../../src/chaos/workload.js';

let service: LocalService | undefined;
let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  await service?.close();
  server = undefined;
  service = undefined;
});

/** Serves `wrap(local service)` and runs the whole pipeline; returns the report. */
async function pipeline(
  seed: number,
  limits: { durationMs: number; opsMax: number },
  wrap: (inner: SpoolService) => SpoolService = (inner) => inner,
): Promise<{ report: CheckReport; history: History; drained: boolean }> {
  service = createLocalService();
  server = await startHttpServer(wrap(service), { host: '127.0.0.1', port: 0 });
  const target = { baseUrl: `http://127.0.0.1:${server.port}/v1`, apiKey: 'chaos' };
  const model = defaultWorkloadModel(seed);
  const history = new History();
  await setupQueues(model, target);
  await runWorkload({ model, target, history, ...limits });
  const drain = await drainQueues({ model, target, history, boundMs: 20_000 });
  const final = await collectFinalState({ model, target, history });
  return { report: check(history, final), history, drained: drain.drained };
}

/** Planted bugs fire this often at most, so the drain is not fighting them for long. */
const PLANTED_FIRES_MAX = 5;

/** A service whose method `name` misbehaves on every `every`th call (5 times), as `bug` says. */
function planted<K extends 'ack' | 'send'>(
  name: K,
  every: number,
  bug: (inner: SpoolService, args: Parameters<SpoolService[K]>) => ReturnType<SpoolService[K]>,
): (inner: SpoolService) => SpoolService {
  return (inner) => {
    let calls = 0;
    let fired = 0;
    return new Proxy(inner, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (property === name) {
          return (...args: Parameters<SpoolService[K]>) => {
            calls += 1;
            if (calls % every === 0 && fired < PLANTED_FIRES_MAX) {
              fired += 1;
              return bug(target, args);
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
}

describe('workload against the local variant', () => {
  it('records a run the checker finds clean', async () => {
    const { report, history, drained } = await pipeline(11, { durationMs: 2_000, opsMax: 2_000 });
    if (!report.valid) throw new Error(formatReport(report));
    expect(drained).toBe(true);
    // The run exercised the mix, not just sends.
    const ok = report.counts.okByKind;
    for (const kind of ['send', 'recv', 'ack', 'nack', 'release', 'renew', 'ackAndSend']) {
      expect(ok[kind] ?? 0, `ok ${kind}`).toBeGreaterThan(0);
    }
    expect(report.counts.deliveries).toBeGreaterThan(50);
    expect(report.counts.incomplete).toBe(0);
    expect(report.indeterminateSends.total).toBe(0);
    expect(history.size).toBeGreaterThan(200);
  });

  it('catches an ack that answers 204 without acking (resurrection)', async () => {
    const lyingAck = planted('ack', 7, async () => undefined);
    const { report } = await pipeline(12, { durationMs: 1_500, opsMax: 1_500 }, lyingAck);
    expect(report.valid).toBe(false);
    expect(report.violations.resurrected.count).toBeGreaterThan(0);
    expect(report.violations.resurrected.examples[0]?.excerpt.length).toBeGreaterThan(0);
  });

  it('catches a send that answers 201 without appending (loss)', async () => {
    let fake = 0;
    const lyingSend = planted('send', 9, async () => {
      fake += 1;
      const messageId = `fake${String(fake).padStart(12, '0')}`;
      return { messageId, duplicate: false };
    });
    const { report } = await pipeline(13, { durationMs: 1_500, opsMax: 1_500 }, lyingSend);
    expect(report.valid).toBe(false);
    expect(report.violations.lost.count).toBeGreaterThan(0);
    expect(report.violations.lost.examples[0]?.explanation).toContain('never received');
  });
});
