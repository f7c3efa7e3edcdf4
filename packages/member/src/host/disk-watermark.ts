// The disk watermark: a pure state machine over samples of the data volume's free space. Below
// the reserve it raises the alarm, and growth (send, ack-and-send, queue create) is refused with
// 507 storage_full before anything is appended; receive, ack, nack, release, fail, discard and
// delete go on, since their entries are small and the reserve is there so that they fit and
// consumers can drain (RabbitMQ's free-disk alarm, etcd's NOSPACE alarm). The alarm clears only
// once free space is back above the reserve plus a margin (hysteresis), so a volume hovering at
// the reserve does not flap between refusing and accepting.

import { MqError, assert } from '@spoolmq/engine';
import { type AlarmChange, AlarmLatch } from './alarm-latch.js';

/** One sample of the data volume. */
export interface DiskSpace {
  /** Bytes this process may still write (statfs `bavail * bsize`). >= 0. */
  readonly freeBytes: number;
  /** Size of the volume in bytes (statfs `blocks * bsize`). >= 0. */
  readonly totalBytes: number;
}

/** The smallest default reserve: 1 GiB. */
export const DISK_RESERVE_BYTES_MIN_DEFAULT = 1024 ** 3;
/** The default reserve as a share of the volume (5%), when that is more than 1 GiB. */
export const DISK_RESERVE_SHARE_DEFAULT = 0.05;
/** The alarm clears once free space reaches the reserve plus this share of it (10%). */
export const DISK_CLEAR_MARGIN_SHARE = 0.1;
/** The wait a 507 storage_full asks for (`Retry-After`), in seconds. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 5;

/**
 * The reserve for a volume of `totalBytes`: `configuredBytes` when given, else the larger of
 * 1 GiB and 5% of the volume.
 */
export function reserveBytesOf(totalBytes: number, configuredBytes: number | undefined): number {
  if (configuredBytes !== undefined) return configuredBytes;
  const share = Math.ceil(totalBytes * DISK_RESERVE_SHARE_DEFAULT);
  return Math.max(DISK_RESERVE_BYTES_MIN_DEFAULT, share);
}

/** Free bytes at which a raised alarm clears: the reserve plus 10% of it (at least 1 byte). */
export function clearBytesOf(reserveBytes: number): number {
  return reserveBytes + Math.max(1, Math.ceil(reserveBytes * DISK_CLEAR_MARGIN_SHARE));
}

export interface DiskWatermarkStatus {
  /** Growth is refused: free space fell below the reserve and has not come back above clear. */
  readonly alarm: boolean;
  /** The latest sample (null before the first). */
  readonly freeBytes: number | null;
  readonly totalBytes: number | null;
  /** The reserve in force for the latest sample (null before the first). */
  readonly reserveBytes: number | null;
  /** Free bytes at which the alarm clears (null before the first sample). */
  readonly clearBytes: number | null;
  /** Times the alarm was raised. */
  readonly raisedTotal: number;
  /** Growth calls refused with storage_full. */
  readonly refusedTotal: number;
}

/** What a sample changed: the alarm was raised, cleared, or neither. */
export type WatermarkChange = AlarmChange;

export class DiskWatermark {
  private readonly latch = new AlarmLatch();
  private last: DiskSpace | null = null;
  private reserve: number | null = null;

  /** `reserveBytes`: a fixed reserve (>= 0); omitted, the default of each sample's volume. */
  constructor(private readonly reserveBytes?: number) {
    assert(
      reserveBytes === undefined || (Number.isSafeInteger(reserveBytes) && reserveBytes >= 0),
      'reserveBytes is a non-negative integer',
    );
  }

  /** Takes one sample; returns whether it raised or cleared the alarm. */
  observe(space: DiskSpace): WatermarkChange {
    this.last = space;
    const reserve = reserveBytesOf(space.totalBytes, this.reserveBytes);
    this.reserve = reserve;
    return this.latch.update(space.freeBytes < reserve, space.freeBytes >= clearBytesOf(reserve));
  }

  get alarmed(): boolean {
    return this.latch.alarmed;
  }

  /**
   * The answer to a call that would grow the store: null while the alarm is down, else 507
   * storage_full (counted) with the wait for `Retry-After` and the sample in its details.
   */
  refuseGrowth(): MqError | null {
    if (!this.latch.refuse()) return null;
    const free = this.last?.freeBytes ?? 0;
    const reserve = this.reserve ?? 0;
    const message =
      `the member's data volume is below its free-space reserve (${free} bytes free, ` +
      `reserve ${reserve}): sends and queue creation are refused until space is freed; ` +
      'receive, ack and delete still work';
    return new MqError('storage_full', message, {
      retryAfterSeconds: STORAGE_FULL_RETRY_AFTER_SECONDS,
      freeBytes: free,
      reserveBytes: reserve,
    });
  }

  status(): DiskWatermarkStatus {
    return {
      alarm: this.latch.alarmed,
      freeBytes: this.last?.freeBytes ?? null,
      totalBytes: this.last?.totalBytes ?? null,
      reserveBytes: this.reserve,
      clearBytes: this.reserve === null ? null : clearBytesOf(this.reserve),
      raisedTotal: this.latch.raisedTotal,
      refusedTotal: this.latch.refusedTotal,
    };
  }
}
