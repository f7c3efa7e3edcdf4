// The I/O shell of the disk watermark: samples the data volume's free space through a probe
// (fs.statfs by default; tests pass their own) on a timer of the injected Clock, feeds the pure
// DiskWatermark, and tells a listener when the alarm is raised or cleared. A probe that fails
// leaves the alarm as it was (a transient statfs error must neither refuse nor admit writes on
// its own) and is counted.

import { statfs } from 'node:fs/promises';
import type { MqError } from '@spoolmq/engine';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import type { DiskBallast } from './disk-ballast.js';
import {
  type DiskSpace,
  DiskWatermark,
  type DiskWatermarkStatus,
  type WatermarkChange,
} from './disk-watermark.js';

/** How often the volume is sampled by default (ms). */
export const DISK_POLL_MS_DEFAULT = 1_000;

/** Reads the free space of the volume holding the data. Rejects when it cannot. */
export type DiskProbe = () => Promise<DiskSpace>;

/** The probe of the volume holding `path`: `bavail` (what an unprivileged writer may use). */
export function statfsProbe(path: string): DiskProbe {
  return async () => {
    const stats = await statfs(path);
    return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
  };
}

export interface DiskMonitorStatus extends DiskWatermarkStatus {
  /** Samples that failed (the alarm kept its state). */
  readonly probeErrorsTotal: number;
  /** The latest probe failure's message, null once a sample succeeds again. */
  readonly probeError: string | null;
}

export interface DiskMonitorOptions {
  readonly probe: DiskProbe;
  readonly clock: Clock;
  /** Interval between samples in ms, >= 1. Default DISK_POLL_MS_DEFAULT. */
  readonly pollMs?: number;
  /** Fixed reserve in bytes; default the larger of 1 GiB and 5% of the volume. */
  readonly reserveBytes?: number;
  /**
   * The volume's emergency ballast (see disk-ballast.ts): what it lacks counts as used space, and
   * it is written again after a sample that leaves room for it above where the alarm clears.
   * Default none.
   */
  readonly ballast?: DiskBallast;
  /** Told of every change of the alarm, with the status after it. */
  readonly onChange?: (change: Exclude<WatermarkChange, null>, status: DiskMonitorStatus) => void;
}

export class DiskMonitor {
  private readonly watermark: DiskWatermark;
  private readonly pollMs: number;
  private timer: TimerHandle | null = null;
  private closed = false;
  private probeErrorsTotal = 0;
  private probeError: string | null = null;

  constructor(private readonly options: DiskMonitorOptions) {
    this.pollMs = options.pollMs ?? DISK_POLL_MS_DEFAULT;
    if (!Number.isSafeInteger(this.pollMs) || this.pollMs < 1) {
      throw new Error('disk monitor: pollMs must be a positive integer');
    }
    this.watermark = new DiskWatermark(options.reserveBytes);
  }

  /**
   * Takes the first sample (so a member starting on a full volume refuses growth from its first
   * call), then samples every `pollMs` until `close()`. Never rejects: a failed first sample
   * leaves the alarm down and is counted.
   */
  async start(): Promise<void> {
    await this.sample();
    this.schedule();
  }

  /**
   * Deletes the ballast when the volume has less free space than it holds (before storage
   * opens or reopens). Returns the bytes released; 0 without a ballast. Never rejects.
   */
  releaseBallast(): Promise<number> {
    return this.options.ballast?.releaseIfLow() ?? Promise.resolve(0);
  }

  /** 507 storage_full (counted) while the alarm is raised, else null. */
  refuseGrowth(): MqError | null {
    return this.watermark.refuseGrowth();
  }

  get alarmed(): boolean {
    return this.watermark.alarmed;
  }

  status(): DiskMonitorStatus {
    return {
      ...this.watermark.status(),
      probeErrorsTotal: this.probeErrorsTotal,
      probeError: this.probeError,
    };
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
      void this.sample().then(() => this.schedule());
    }, this.pollMs);
  }

  private async sample(): Promise<void> {
    let space: DiskSpace;
    try {
      space = await this.options.probe();
    } catch (error) {
      this.probeErrorsTotal++;
      this.probeError = error instanceof Error ? error.message : String(error);
      return;
    }
    if (this.closed) return;
    this.probeError = null;
    // A released ballast's room is spoken for: growth stays refused until it fits again.
    const missing = (await this.options.ballast?.missingBytes()) ?? 0;
    const counted = { ...space, freeBytes: Math.max(0, space.freeBytes - missing) };
    const change = this.watermark.observe(counted);
    if (change !== null) this.options.onChange?.(change, this.status());
    const clearBytes = this.watermark.status().clearBytes;
    if (this.options.ballast !== undefined && !this.watermark.alarmed && clearBytes !== null) {
      void this.options.ballast.restoreIfRoom(space, clearBytes);
    }
  }
}
