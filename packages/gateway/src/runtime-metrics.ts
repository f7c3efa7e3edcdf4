// The runtime health of a process that serves /metrics: how late its event loop runs and how
// long the garbage collector stops it. Both add to the latency of every request the process
// handles at that moment, and both were behind this project's worst tail latencies (README,
// Performance): when a member's or gateway's p99 rises, these tell which of the two it is.

import { type PerformanceEntry, PerformanceObserver, constants } from 'node:perf_hooks';
import { type Clock, repeatEvery } from '@spoolmq/protocol';
import { Families } from './prometheus-text.js';

/** How often the lag probe asks to run, ms; its lateness beyond that is the lag. */
export const LAG_PROBE_INTERVAL_MS = 20;
export const LAG_BUCKETS_SECONDS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
];
export const GC_PAUSE_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
];

/** The collections Node reports, by the kind label they get. */
const GC_KINDS: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weakcb'],
]);

/** Observations counted into fixed buckets (not cumulative; the last slot is +Inf). */
class BucketCounts {
  readonly counts: number[];
  sum = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(seconds: number): void {
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += seconds;
  }
}

export class RuntimeMetrics {
  private readonly lag = new BucketCounts(LAG_BUCKETS_SECONDS);
  private readonly gcPauses = new Map<string, BucketCounts>();
  private readonly stopProbe: () => void;
  private readonly observer: PerformanceObserver;
  private lastProbeMs: number;

  /**
   * Starts the lag probe on `clock` (its timers never keep the process alive) and the GC
   * observer. The lag is real only on a real clock: on a manual one the probe is never late.
   */
  constructor(private readonly clock: Clock) {
    for (const kind of GC_KINDS.values()) {
      this.gcPauses.set(kind, new BucketCounts(GC_PAUSE_BUCKETS_SECONDS));
    }
    this.lastProbeMs = clock.nowMs();
    this.stopProbe = repeatEvery(clock, LAG_PROBE_INTERVAL_MS, () => this.onProbe());
    this.observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) this.onGc(entry);
    });
    this.observer.observe({ entryTypes: ['gc'] });
  }

  /** Stops observing; later renders show what was counted until then. */
  stop(): void {
    this.stopProbe();
    this.observer.disconnect();
  }

  /** `mq_process_event_loop_lag_seconds` and `mq_process_gc_pause_seconds{kind}` histograms. */
  render(): string {
    const out = new Families();
    out.histogram(
      'mq_process_event_loop_lag_seconds',
      `How late a probe asking to run every ${LAG_PROBE_INTERVAL_MS} ms ran.`,
      {},
      this.lag.bounds,
      this.lag.counts,
      this.lag.sum,
    );
    const series = [...this.gcPauses].map(([kind, pauses]) => ({
      labels: { kind },
      counts: pauses.counts,
      sum: pauses.sum,
    }));
    out.histograms(
      'mq_process_gc_pause_seconds',
      'Garbage collection pauses of the main thread, by kind.',
      GC_PAUSE_BUCKETS_SECONDS,
      series,
    );
    return out.text();
  }

  private onProbe(): void {
    const nowMs = this.clock.nowMs();
    const lateMs = nowMs - this.lastProbeMs - LAG_PROBE_INTERVAL_MS;
    this.lastProbeMs = nowMs;
    this.lag.observe(Math.max(0, lateMs) / 1000);
  }

  private onGc(entry: PerformanceEntry): void {
    // Node's gc entries carry their kind in `detail`, which the base type does not declare.
    const detail = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail;
    const kind = GC_KINDS.get(detail?.kind ?? -1);
    if (kind !== undefined) this.gcPauses.get(kind)!.observe(entry.duration / 1000);
  }
}
