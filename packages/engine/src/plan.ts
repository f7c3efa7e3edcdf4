// Plan limits of one spool. The plan is configuration shared by every replica of the spool (the
// apply of a send checks the caps, so replicas must agree on them).

export interface Plan {
  /** Queues a spool may hold (draining queues count). Create beyond it: 403 queue_limit. */
  readonly queuesPerSpoolMax: number;
  /** Upper bound of retentionSeconds; 0 means the plan sets no bound. Above it: 403. */
  readonly retentionLimitSeconds: number;
  /** retentionSeconds of a queue created without one (clamped to the limit). */
  readonly retentionDefaultSeconds: number;
  /** Stored messages per spool, in-flight sends included. Beyond it: 507 spool_full. */
  readonly messagesPerSpoolMax: number;
  /** Payload bytes per spool, in-flight sends included. Beyond it: 507 spool_full. */
  readonly payloadBytesPerSpoolMax: number;
  /** Largest payload of one message (the gateway answers 413 above it). */
  readonly messageSizeMaxBytes: number;
  /** Remembered dedup keys per spool; a dedup send beyond it is refused with 507 spool_full. */
  readonly dedupKeysPerSpoolMax: number;
}

export const DEFAULT_PLAN: Plan = Object.freeze({
  queuesPerSpoolMax: 1000,
  retentionLimitSeconds: 14 * 24 * 3600,
  retentionDefaultSeconds: 345_600,
  messagesPerSpoolMax: 1_000_000,
  payloadBytesPerSpoolMax: 1024 * 1024 * 1024,
  messageSizeMaxBytes: 1024 * 1024,
  dedupKeysPerSpoolMax: 2_000_000,
});

const PLAN_FIELDS = Object.keys(DEFAULT_PLAN) as (keyof Plan)[];

/**
 * Returns `DEFAULT_PLAN` overridden by `partial`. Every field must be a non-negative safe integer;
 * the caps that bound memory (queues, messages, bytes, message size, dedup keys) must be >= 1.
 * Throws `Error` for a plan that makes no sense (configuration is checked when it loads).
 */
export function resolvePlan(partial: Partial<Plan> = {}): Plan {
  const plan: Plan = { ...DEFAULT_PLAN, ...partial };
  for (const field of PLAN_FIELDS) {
    const value = plan[field];
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new Error(`plan: ${field} must be a non-negative integer, got ${String(value)}`);
    }
  }
  for (const field of [
    'queuesPerSpoolMax',
    'messagesPerSpoolMax',
    'payloadBytesPerSpoolMax',
    'messageSizeMaxBytes',
    'dedupKeysPerSpoolMax',
  ] as const) {
    if (plan[field] < 1) throw new Error(`plan: ${field} must be at least 1`);
  }
  if (plan.messageSizeMaxBytes > plan.payloadBytesPerSpoolMax) {
    throw new Error('plan: messageSizeMaxBytes exceeds payloadBytesPerSpoolMax');
  }
  return Object.freeze(plan);
}
