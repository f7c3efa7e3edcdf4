// The interface's "Retry rules for send", as pure functions the client loop consults.
//
// 1. Every 4xx, 503 and 507 is answered before the append is attempted, so a retry cannot
//    duplicate the message. Of those, 409 dedup_in_flight, 429, 503 and 507 storage_full (a
//    member's disk alarm, which clears by itself; it carries Retry-After) are transient; the
//    rest, 507 spool_full (a plan cap) included, are verdicts.
// 2. A 500 of any kind, a 502 or 504, or no response means the append may have happened: retry
//    only carrying a dedup key, the same on every attempt, while the queue's window remembers it.
// 3. The key is assigned before the first attempt.

import type { MqFailure } from './errors.js';

/** transient: safe to retry; ambiguous: may have appended; verdict: do not retry. */
export type SendFailureClass = 'transient' | 'ambiguous' | 'verdict';

export function classifySendFailure(failure: MqFailure): SendFailureClass {
  if (failure.transport) return 'ambiguous';
  const { status, kind } = failure;
  if (status === 429 || status === 503) return 'transient';
  if (status === 409 && kind === 'dedup_in_flight') return 'transient';
  if (status === 507 && kind === 'storage_full') return 'transient';
  if (status === 500 || status === 502 || status === 504) return 'ambiguous';
  return 'verdict';
}

export interface SendRetryPolicy {
  /** Retries after the first attempt, 0-100. */
  readonly retries: number;
  /** First backoff step in milliseconds, doubled per retry. */
  readonly baseDelayMs: number;
  /** Cap of one backoff step in milliseconds. */
  readonly maxDelayMs: number;
}

export const DEFAULT_SEND_RETRY_POLICY: SendRetryPolicy = {
  retries: 3,
  baseDelayMs: 100,
  maxDelayMs: 5_000,
};

/** Allowance for the retry's travel time when checking it still lands inside the window. */
export const DEDUP_WINDOW_MARGIN_MS = 1_000;

export interface RetryContext {
  /** Which retry this would be, 1-based (1 = the second attempt). */
  readonly retry: number;
  /** Whether the request carries a dedup key (the same one on every attempt). */
  readonly hasDedupKey: boolean;
  /** Milliseconds since the first attempt started. */
  readonly elapsedMs: number;
  /**
   * The queue's dedup window in milliseconds when known; undefined when unknown. An ambiguous
   * failure is retried only when the retry lands inside a known window.
   */
  readonly dedupWindowMs: number | undefined;
}

/**
 * Decides whether to retry a failed send and after how long.
 * Returns the delay in milliseconds (>= 0), or undefined for "do not retry: surface the error".
 * `random01` is a number in [0, 1) used for jitter.
 */
export function nextSendRetryDelayMs(
  failure: MqFailure,
  context: RetryContext,
  policy: SendRetryPolicy,
  random01: number,
): number | undefined {
  if (context.retry > policy.retries) return undefined;
  const failureClass = classifySendFailure(failure);
  if (failureClass === 'verdict') return undefined;
  const delayMs = backoffDelayMs(failure, context.retry, policy, random01);
  if (failureClass === 'ambiguous') {
    if (!context.hasDedupKey || context.dedupWindowMs === undefined) return undefined;
    const landsByMs = context.elapsedMs + delayMs + DEDUP_WINDOW_MARGIN_MS;
    if (landsByMs >= context.dedupWindowMs) return undefined;
  }
  return delayMs;
}

/**
 * Delay before retry number `retry` (1-based): the server's `Retry-After` when it sent one,
 * else exponential backoff with jitter in [half, full] of the step.
 */
export function backoffDelayMs(
  failure: MqFailure,
  retry: number,
  policy: SendRetryPolicy,
  random01: number,
): number {
  if (!failure.transport && failure.retryAfterSeconds !== undefined) {
    return failure.retryAfterSeconds * 1000;
  }
  const stepMs = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(stepMs / 2 + (stepMs / 2) * random01);
}
