// The I/O shell of the memory watermark: samples the V8 heap through a sampler
// (v8.getHeapStatistics by default; tests pass their own) and feeds the pure MemoryWatermark,
// telling a listener when the alarm is raised or cleared. It samples on demand, at most once per
// `pollMs` of the injected Clock: when a growing call asks whether it may proceed and when the
// status is read (metrics, /readyz, the operator log's poll). So the send path pays one clock
// read per call and one small allocation per interval, and no timer runs: a member whose clock
// is a test's manual clock does not fill it with sampling timers. The interval is short because
// a heap fills faster than a disk (at 50,000 sends/s of metadata, the last 20% of a 384 MB heap
// lasts a few seconds); an idle member is sampled whenever anyone looks at it.
//
// The heap in use counts garbage until a mark-compact frees it, and V8 lets garbage pile up to
// an allocation limit that, near the heap's limit, sits above the clear mark: a sample at a
// random moment after consumers drained still reads high, and the alarm would clear only by luck.
// So the process's own heap is also sampled right after every major collection (a `gc`
// performance entry), when the heap in use is the live data: the low point that clears the
// alarm once the drain freed enough, and the value V8 itself judges exhaustion by.

import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import type { MqError } from '@spoolmq/engine';
import type { Clock } from '@spoolmq/protocol';
import {
  type HeapSample,
  type MemoryChange,
  MemoryWatermark,
  type MemoryWatermarkStatus,
} from './memory-watermark.js';

/** How often the heap is sampled by default (ms). */
export const MEMORY_POLL_MS_DEFAULT = 100;

/** Reads the heap now. */
export type HeapSampler = () => HeapSample;

/**
 * What V8 reserves for the young generation on a 64-bit build: two semi-spaces of at most
 * 16 MiB and a new large-object space of the same size.
 */
export const V8_YOUNG_GENERATION_BYTES = 3 * 16 * 1024 ** 2;

/**
 * The limit that matters of a heap of `heapSizeLimitBytes` (`heap_size_limit`): V8 aborts the
 * process when the old generation outgrows `--max-old-space-size`, and `heap_size_limit` is that
 * plus the young generation (a 96 MiB old space reports 144 MiB). Measured against the whole
 * limit, an 80% mark would sit above the old space's own limit on a small heap and never fire
 * before the abort. At most half the limit is taken off: a build or a small machine with a
 * smaller young generation then gets a mark that errs early, never late.
 */
export function oldSpaceLimitOf(heapSizeLimitBytes: number): number {
  const young = Math.min(V8_YOUNG_GENERATION_BYTES, Math.floor(heapSizeLimitBytes / 2));
  return heapSizeLimitBytes - young;
}

/**
 * The process's own V8 heap: all of it in use (young objects included, so the alarm errs early)
 * against the old generation's limit.
 */
export const v8HeapSampler: HeapSampler = () => {
  const stats = getHeapStatistics();
  return { usedBytes: stats.used_heap_size, limitBytes: oldSpaceLimitOf(stats.heap_size_limit) };
};

export type MemoryMonitorStatus = MemoryWatermarkStatus;

export interface MemoryMonitorOptions {
  readonly clock: Clock;
  /** Default v8HeapSampler, which is also sampled after every major collection. */
  readonly sampler?: HeapSampler;
  /** Interval between samples in ms, >= 1. Default MEMORY_POLL_MS_DEFAULT. */
  readonly pollMs?: number;
  /** The high mark in percent of the heap limit, 11-99. Default 80. */
  readonly highPercent?: number;
  /** Told of every change of the alarm, with the status after it. */
  readonly onChange?: (change: Exclude<MemoryChange, null>, status: MemoryMonitorStatus) => void;
}

export class MemoryMonitor {
  private readonly watermark: MemoryWatermark;
  private readonly sampler: HeapSampler;
  private readonly pollMs: number;
  /** Clock time of the latest sample; null before the first. */
  private sampledAtMs: number | null = null;
  /** Samples after each major collection (the process's own heap only); null when closed. */
  private gcObserver: PerformanceObserver | null = null;

  constructor(private readonly options: MemoryMonitorOptions) {
    this.pollMs = options.pollMs ?? MEMORY_POLL_MS_DEFAULT;
    if (!Number.isSafeInteger(this.pollMs) || this.pollMs < 1) {
      throw new Error('memory monitor: pollMs must be a positive integer');
    }
    this.sampler = options.sampler ?? v8HeapSampler;
    this.watermark = new MemoryWatermark(options.highPercent);
  }

  /**
   * Takes a sample now (so a member starting above the mark refuses from its first call) and,
   * on the process's own heap, after every major collection until `close()`.
   */
  start(): void {
    this.sample(this.options.clock.nowMs());
    if (this.sampler !== v8HeapSampler || this.gcObserver !== null) return;
    this.gcObserver = new PerformanceObserver((list) => {
      const major = list.getEntries().some((entry) => isMajorGc(entry));
      if (major && this.gcObserver !== null) this.sample(this.options.clock.nowMs());
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  /** Stops sampling after collections; the alarm keeps its state. Idempotent. */
  close(): void {
    this.gcObserver?.disconnect();
    this.gcObserver = null;
  }

  /** 503 unavailable (counted) while the alarm is raised, else null; samples when due. */
  refuseGrowth(): MqError | null {
    this.sampleIfDue();
    return this.watermark.refuseGrowth();
  }

  get alarmed(): boolean {
    return this.watermark.alarmed;
  }

  /** The watermark after a sample if one is due. */
  status(): MemoryMonitorStatus {
    this.sampleIfDue();
    return this.watermark.status();
  }

  private sampleIfDue(): void {
    const nowMs = this.options.clock.nowMs();
    const at = this.sampledAtMs;
    // A clock that went back (a manual clock reset, a wall-clock step) samples too.
    if (at === null || nowMs - at >= this.pollMs || nowMs < at) this.sample(nowMs);
  }

  private sample(nowMs: number): void {
    this.sampledAtMs = nowMs;
    const change = this.watermark.observe(this.sampler());
    if (change !== null) this.options.onChange?.(change, this.watermark.status());
  }
}

/** Whether a `gc` entry is of a mark-compact (after which the heap in use is live data). */
function isMajorGc(entry: object): boolean {
  const kind = (entry as { detail?: { kind?: unknown } }).detail?.kind;
  return kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR;
}
