// The I/O shell of the memory watermark: samples the V8 heap through a sampler
// (v8.getHeapStatistics by default; tests pass their own) on a timer of the injected Clock, feeds
// the pure MemoryWatermark, and tells a listener when the alarm is raised or cleared. Sampling on
// a timer, not per call, keeps the send path free of the sampler's allocation; the interval is
// short because a heap fills faster than a disk (at 50,000 sends/s of metadata, a 384 MB heap's
// last 20% lasts a few seconds).

import { getHeapStatistics } from 'node:v8';
import type { MqError } from '@spoolmq/engine';
import type { Clock, TimerHandle } from './clock.js';
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

/** The process's own V8 heap. */
export const v8HeapSampler: HeapSampler = () => {
  const stats = getHeapStatistics();
  return { usedBytes: stats.used_heap_size, limitBytes: stats.heap_size_limit };
};

export type MemoryMonitorStatus = MemoryWatermarkStatus;

export interface MemoryMonitorOptions {
  readonly clock: Clock;
  /** Default v8HeapSampler. */
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
  private timer: TimerHandle | null = null;
  private closed = false;

  constructor(private readonly options: MemoryMonitorOptions) {
    this.pollMs = options.pollMs ?? MEMORY_POLL_MS_DEFAULT;
    if (!Number.isSafeInteger(this.pollMs) || this.pollMs < 1) {
      throw new Error('memory monitor: pollMs must be a positive integer');
    }
    this.sampler = options.sampler ?? v8HeapSampler;
    this.watermark = new MemoryWatermark(options.highPercent);
  }

  /** Takes the first sample, then samples every `pollMs` until `close()`. */
  start(): void {
    if (this.closed) return;
    this.sample();
    this.schedule();
  }

  /** 503 unavailable (counted) while the alarm is raised, else null. */
  refuseGrowth(): MqError | null {
    return this.watermark.refuseGrowth();
  }

  get alarmed(): boolean {
    return this.watermark.alarmed;
  }

  status(): MemoryMonitorStatus {
    return this.watermark.status();
  }

  /** Stops sampling; the alarm keeps its last state. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) this.options.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.options.clock.setTimer(() => {
      this.timer = null;
      this.sample();
      this.schedule();
    }, this.pollMs);
  }

  private sample(): void {
    const change = this.watermark.observe(this.sampler());
    if (change !== null) this.options.onChange?.(change, this.status());
  }
}
