// What the harness collects once faults are healed and consumers have drained: every message
// still stored, per queue, and each queue's stats from the same quiet moment. The checker
// compares it with the history.

import type { MessageState, Stats } from '@spoolmq/client';

/** One message of a final listing. Times are the listing's RFC 3339 strings. */
export interface FinalMessage {
  readonly id: string;
  readonly state: MessageState;
  readonly retries?: number;
  /** Present in state delayed. */
  readonly visibleAt?: string;
  /** Present in state pending on a queue with a lease timeout. */
  readonly leaseExpiresAt?: string;
  /**
   * The payload as `describePayload` names it (its text, or a backlog payload's description),
   * when the collector could read it (listing handle + peek). Lets the checker match messages
   * whose send got no answer, whose id it never learnt.
   */
  readonly payload?: string;
}

export interface FinalQueue {
  readonly name: string;
  /** The queue's dedup window as its settings say at collection time, seconds. */
  readonly dedupWindowSeconds: number;
  /** Every message the listing walked, in listing order. */
  readonly messages: readonly FinalMessage[];
  /** The queue's stats entry; only `total` is checked. */
  readonly stats: Pick<Stats, 'total'> & Partial<Stats>;
}

export interface FinalState {
  /** When collection started, on the history's clock (ms). */
  readonly collectedAtMs: number;
  /** Every queue the history touched. */
  readonly queues: readonly FinalQueue[];
}
