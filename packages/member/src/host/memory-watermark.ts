// The memory watermark: a pure state machine over samples of the process's V8 heap (used bytes
// against the heap's limit). Above the high mark it raises the alarm, and growth (send,
// ack-and-send, queue create) is refused before anything is appended; receive, ack, nack,
// release, fail, discard and delete go on, since they shrink the store and consumers must be able
// to drain it (RabbitMQ's memory alarm blocks publishers, not consumers). The alarm clears only
// once the heap is back below the low mark (hysteresis), so a heap hovering at the high mark,
// where a garbage collection alone moves it by a few percent, does not flap.
//
// The refusal is 503 `unavailable` with `Retry-After`, not 507. The interface's 507 `spool_full`
// means "this spool is at its plan maximum" (a verdict about the spool, not to be retried
// blindly), and a heap alarm is neither about one spool nor about the plan: it is the process
// being momentarily unable to take more, which is what 503 says ("momentarily unavailable;
// retry"). Like every 503, it is answered before the append is attempted, so a retry cannot
// duplicate the message, and clients already retry 503 as transient.

import { MqError, assert } from '@spoolmq/engine';
import { type AlarmChange, AlarmLatch } from './alarm-latch.js';

/** One sample of the V8 heap (`v8.getHeapStatistics()`). */
export interface HeapSample {
  /** Bytes of the heap in use, garbage not yet collected included (`used_heap_size`). >= 0. */
  readonly usedBytes: number;
  /** The most the heap may grow to before V8 aborts the process (the old space's limit). > 0. */
  readonly limitBytes: number;
}

/** Default high mark: growth is refused at 80% of the heap limit. */
export const MEMORY_HIGH_PERCENT_DEFAULT = 80;
/** The alarm clears this many percentage points below the high mark (so at 70% by default). */
export const MEMORY_CLEAR_MARGIN_PERCENT = 10;
/** The wait a refusal asks for (`Retry-After`), in seconds: a drain or a collection takes that. */
export const MEMORY_RETRY_AFTER_SECONDS = 1;

/** Heap bytes at which the alarm rises: `highPercent` of the limit. */
export function highBytesOf(limitBytes: number, highPercent: number): number {
  return Math.floor((limitBytes * highPercent) / 100);
}

/** Heap bytes below which a raised alarm clears: 10 points under the high mark (at least 1%). */
export function clearBytesOf(limitBytes: number, highPercent: number): number {
  const clearPercent = Math.max(1, highPercent - MEMORY_CLEAR_MARGIN_PERCENT);
  return Math.floor((limitBytes * clearPercent) / 100);
}

export interface MemoryWatermarkStatus {
  /** Growth is refused: the heap went above the high mark and has not come back below clear. */
  readonly alarm: boolean;
  /** The latest sample (null before the first). */
  readonly usedBytes: number | null;
  readonly limitBytes: number | null;
  /** The high mark in force, as a share of the limit in percent. */
  readonly highPercent: number;
  /** Used bytes above which the alarm rises (null before the first sample). */
  readonly highBytes: number | null;
  /** Used bytes below which the alarm clears (null before the first sample). */
  readonly clearBytes: number | null;
  /** Times the alarm was raised. */
  readonly raisedTotal: number;
  /** Growth calls refused while the alarm was up. */
  readonly refusedTotal: number;
}

/** What a sample changed: the alarm was raised, cleared, or neither. */
export type MemoryChange = AlarmChange;

export class MemoryWatermark {
  private readonly latch = new AlarmLatch();
  private last: HeapSample | null = null;

  /** `highPercent`: the high mark, an integer 11-99 (so the clear mark is at least 1%). */
  constructor(private readonly highPercent: number = MEMORY_HIGH_PERCENT_DEFAULT) {
    assert(
      Number.isSafeInteger(highPercent) && highPercent > MEMORY_CLEAR_MARGIN_PERCENT &&
        highPercent < 100,
      'highPercent is an integer 11-99',
    );
  }

  /** Takes one sample; returns whether it raised or cleared the alarm. */
  observe(sample: HeapSample): MemoryChange {
    assert(sample.usedBytes >= 0 && sample.limitBytes > 0, 'heap sample is sane');
    this.last = sample;
    const { usedBytes, limitBytes } = sample;
    return this.latch.update(
      usedBytes >= highBytesOf(limitBytes, this.highPercent),
      usedBytes < clearBytesOf(limitBytes, this.highPercent),
    );
  }

  get alarmed(): boolean {
    return this.latch.alarmed;
  }

  /**
   * The answer to a call that would grow the store: null while the alarm is down, else 503
   * unavailable (counted) with the wait for `Retry-After` and the sample in its details.
   */
  refuseGrowth(): MqError | null {
    if (!this.latch.refuse()) return null;
    const used = this.last?.usedBytes ?? 0;
    const limit = this.last?.limitBytes ?? 0;
    const message =
      `the member's heap is above its high mark (${used} of ${limit} bytes used, high mark ` +
      `${this.highPercent}%): sends and queue creation are refused until consumers drain; ` +
      'receive, ack and delete still work';
    return new MqError('unavailable', message, {
      reason: 'memory_high',
      retryAfterSeconds: MEMORY_RETRY_AFTER_SECONDS,
      usedBytes: used,
      limitBytes: limit,
    });
  }

  status(): MemoryWatermarkStatus {
    const limit = this.last?.limitBytes ?? null;
    return {
      alarm: this.latch.alarmed,
      usedBytes: this.last?.usedBytes ?? null,
      limitBytes: limit,
      highPercent: this.highPercent,
      highBytes: limit === null ? null : highBytesOf(limit, this.highPercent),
      clearBytes: limit === null ? null : clearBytesOf(limit, this.highPercent),
      raisedTotal: this.latch.raisedTotal,
      refusedTotal: this.latch.refusedTotal,
    };
  }
}
