// One queue of a spool: its replicated identity and settings, the structures that index its
// messages, per-state counts and counters, and its primary-local receive state.

import { Counters, type StateCounts } from './counters.js';
import { DedupTable } from './dedup-table.js';
import { MinHeap } from './heap.js';
import { SendOrder } from './send-order.js';
import type { QueueState } from './service.js';
import type { Settings } from './settings.js';
import { TokenBucket } from './token-bucket.js';

export class Queue implements StateCounts {
  readonly name: string;
  /** Spool-wide incarnation number: a queue recreated under the same name gets a new one. */
  readonly gen: number;
  readonly createdAtMs: number;
  state: QueueState = 'active';
  settings: Settings;
  /** Retention enforced, ms; 0 = no expiry. Derived from settings and the plan. */
  retentionMs = 0;

  readonly order = new SendOrder();
  /** Returned visible messages by seq (Where.Ready). */
  readonly ready = new MinHeap();
  /** Delayed messages by visibleAtMs (Where.Delayed). */
  readonly delayedHeap = new MinHeap();
  /** Failed messages by seq (Where.Failed). */
  readonly failedHeap = new MinHeap();
  /**
   * Messages by retentionStartMs whose retention clock does not start in send order (validated
   * by their expiry stamp); the others are indexed by the send order itself (expiryHead).
   */
  readonly expiry = new MinHeap();
  /** Primary-local: leased messages by lease deadline (validated by delivery number). */
  readonly leases = new MinHeap();
  readonly dedup = new DedupTable();

  // Per-state counts (replicated meaning; Leased counts as pending, Fresh/Ready/Expiring as
  // visible; Unavailable, replica-local, on its own).
  total = 0;
  dataBytes = 0;
  delayed = 0;
  visible = 0;
  pending = 0;
  failed = 0;
  /** Visible messages whose payload this replica cannot read (Where.Unavailable). */
  unavailable = 0;
  /** Visible messages held back because retention came due (subset of `visible`). */
  expiring = 0;

  readonly counters = new Counters();

  // Primary-local.
  /** When this queue's counters started: the later of its creation and the primary's opening. */
  startedAtMs: number;
  bucket: TokenBucket | null = null;
  inflightCount = 0;
  inflightBytes = 0;
  /** Dedup keys of sends proposed but not yet applied (409 dedup_in_flight). */
  readonly inflightDedup = new Set<string>();

  constructor(name: string, gen: number, createdAtMs: number, settings: Settings) {
    this.name = name;
    this.gen = gen;
    this.createdAtMs = createdAtMs;
    this.settings = settings;
    this.startedAtMs = createdAtMs;
  }

  /** Replaces the receive bucket to match the settings (a new bucket starts full). */
  resetBucket(nowMs: number): void {
    const { rateIntervalMicros, rateBurst } = this.settings;
    const limited = rateIntervalMicros > 0 && rateBurst > 0;
    this.bucket = limited ? new TokenBucket(rateIntervalMicros, rateBurst, nowMs) : null;
  }
}
