import { afterEach, describe, expect, it } from 'vitest';
import { monotonicClock } from '@spoolmq/protocol';
import { LAG_PROBE_INTERVAL_MS, RuntimeMetrics } from '../src/runtime-metrics.js';

/** The value of the sample `name{labels}` in Prometheus text (labels as written, in order). */
function valueOf(text: string, sample: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  expect(line, sample).toBeDefined();
  return Number(line!.slice(sample.length + 1));
}

function busyMs(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // hold the event loop, as a long synchronous task does
  }
}

/** Gives timers and observers turns until `done()` holds (bounded in turns, not time). */
async function turnsUntil(done: () => boolean, turnsMax = 200): Promise<void> {
  for (let turn = 0; !done(); turn++) {
    expect(turn, 'condition not reached').toBeLessThan(turnsMax);
    await new Promise((resolve) => setTimeout(resolve, LAG_PROBE_INTERVAL_MS));
  }
}

const LAG = 'mq_process_event_loop_lag_seconds';
const GC = 'mq_process_gc_pause_seconds';

describe('RuntimeMetrics', () => {
  let metrics: RuntimeMetrics | undefined;
  afterEach(() => metrics?.stop());

  it('counts an event loop held past the probe interval as lag', async () => {
    metrics = new RuntimeMetrics(monotonicClock);
    const m = metrics;
    const probes = (): number => valueOf(m.render(), `${LAG}_count`);
    await turnsUntil(() => probes() >= 1);
    busyMs(150);
    const before = probes();
    await turnsUntil(() => probes() > before);
    const text = m.render();
    // The probe could not run for 150 ms, so one sample is at least 130 ms late.
    expect(valueOf(text, `${LAG}_bucket{le="+Inf"}`) - valueOf(text, `${LAG}_bucket{le="0.05"}`)).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, `${LAG}_sum`)).toBeGreaterThanOrEqual(0.13);
    expect(text).toContain(`# TYPE ${LAG} histogram`);
  });

  it('counts garbage collection pauses by kind, one histogram family', async () => {
    metrics = new RuntimeMetrics(monotonicClock);
    const m = metrics;
    const minor = (): number => valueOf(m.render(), `${GC}_count{kind="minor"}`);
    let kept: number[][] = [];
    await turnsUntil(() => {
      // Short-lived garbage fills the young generation: scavenges follow.
      for (let i = 0; i < 20_000; i++) kept = [[i, i + 1, i + 2]];
      return minor() >= 1;
    });
    expect(kept.length).toBe(1);
    const text = m.render();
    expect(text.match(new RegExp(`# TYPE ${GC} histogram`, 'g'))).toHaveLength(1);
    for (const kind of ['minor', 'major', 'incremental', 'weakcb']) {
      expect(text).toContain(`${GC}_bucket{kind="${kind}",le="+Inf"}`);
    }
    expect(valueOf(text, `${GC}_bucket{kind="minor",le="+Inf"}`)).toBe(minor());
  });

  it('stops probing when stopped', async () => {
    metrics = new RuntimeMetrics(monotonicClock);
    const m = metrics;
    const probes = (): number => valueOf(m.render(), `${LAG}_count`);
    await turnsUntil(() => probes() >= 1);
    m.stop();
    const stopped = probes();
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, LAG_PROBE_INTERVAL_MS));
    expect(probes()).toBe(stopped);
  });
});
