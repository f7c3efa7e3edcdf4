// Cumulative counters of a queue or a spool. Primary-local in meaning: they restart from zero
// when a primary opens the spool (`startedAtMs`), so they are not part of snapshots. Replicas
// count in apply too, which costs nothing and keeps apply uniform.

import type { Counts } from './service.js';

export class Counters {
  added = 0;
  acked = 0;
  nacked = 0;
  released = 0;
  failed = 0;
  discarded = 0;
  expired = 0;

  reset(): void {
    this.added = 0;
    this.acked = 0;
    this.nacked = 0;
    this.released = 0;
    this.failed = 0;
    this.discarded = 0;
    this.expired = 0;
  }
}

/** The per-state counts a Stats object reports, beside the counters. */
export interface StateCounts {
  readonly total: number;
  readonly dataBytes: number;
  readonly delayed: number;
  readonly visible: number;
  readonly pending: number;
  readonly failed: number;
  readonly unavailable: number;
}

export function countsOf(states: StateCounts, counters: Counters): Counts {
  return {
    total: states.total,
    dataBytes: states.dataBytes,
    delayed: states.delayed,
    visible: states.visible,
    pending: states.pending,
    failed: states.failed,
    unavailable: states.unavailable,
    addedTotal: counters.added,
    ackedTotal: counters.acked,
    nackedTotal: counters.nacked,
    releasedTotal: counters.released,
    failedTotal: counters.failed,
    discardedTotal: counters.discarded,
    expiredTotal: counters.expired,
  };
}
