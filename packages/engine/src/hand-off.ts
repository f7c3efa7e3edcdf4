// Leases across a planned change of primary (a "lame duck" hand-off). Leases are primary-local:
// a new primary normally opens with none (primary.openPrimary). Before a primary hands its
// leadership over on purpose, it stops serving and logs the leases it holds (`outstandingLeases`);
// the next primary, when that record is the last thing in the log before its opening, takes them
// over (`adoptLeases`) instead of making their messages visible again. Both are primary-local and
// pure: which record applies, and the tokens' terms, are the member's business.

import { type Message, Where } from './message.js';
import { placeLeased, setLeaseDeadline } from './moves.js';
import type { SpoolState } from './spool-state.js';

/** One lease as a primary hands it over. */
export interface HandedOffLease {
  readonly queueGen: number;
  readonly seq: number;
  /** Replicated message generation when leased: any logged transition since voids the lease. */
  readonly gen: number;
  /** The lease's delivery number (>= 1), as its token carries it. */
  readonly delivery: number;
  /** Lease deadline (epoch ms on the old primary's clock); Infinity when it has none. */
  readonly deadlineMs: number;
}

/**
 * Every lease the primary holds now, in queue and send order: messages pending under a lease,
 * including leases whose settling command is in the log (if that command commits, it bumps the
 * message's generation and the next primary skips the lease; if it was refused, the lease still
 * holds) and leases past their deadline (the next primary times them out at once). O(messages).
 */
export function outstandingLeases(state: SpoolState): HandedOffLease[] {
  const out: HandedOffLease[] = [];
  for (const queue of state.queues.values()) {
    if (queue.pending === 0) continue;
    queue.order.scanAfter(0, (message) => {
      if (message.where !== Where.Leased) return true;
      out.push({
        queueGen: queue.gen,
        seq: message.seq,
        gen: message.gen,
        delivery: message.deliveries,
        deadlineMs: message.leaseExpiresAtMs,
      });
      return true;
    });
  }
  return out;
}

/**
 * Takes over `leases` on a primary that just opened (after `openPrimary`, before any receive):
 * each lease whose message still exists with the same generation and is not failed becomes a
 * lease again with its delivery number and deadline (a deadline in the past times out on the
 * next timer run, as it would have on the old primary). The rest are skipped: their message was
 * settled, moved or deleted by a logged command after the lease was taken. Counters, retries and
 * rate buckets are untouched: the delivery already happened. Returns the leases taken over.
 */
export function adoptLeases<L extends HandedOffLease>(
  state: SpoolState,
  leases: readonly L[],
  nowMs: number,
): L[] {
  const adopted: L[] = [];
  for (const lease of leases) {
    const message = adoptable(state, lease);
    if (message === null) continue;
    const queue = state.queuesByGen.get(lease.queueGen)!;
    // placeLeased numbers the delivery one past the message's count; the lease keeps its own.
    message.deliveries = lease.delivery - 1;
    placeLeased(state, queue, message, nowMs);
    if (lease.deadlineMs !== Infinity) {
      setLeaseDeadline(state, queue, message, lease.deadlineMs);
    } else {
      // Leased without a timeout: stays so even if the queue has one now (a changed timeout
      // applies to leases issued afterwards). The heap entry placeLeased made goes stale.
      message.leaseExpiresAtMs = Infinity;
    }
    adopted.push(lease);
  }
  return adopted;
}

/** The message `lease` still names and may take it over, or null. */
function adoptable(state: SpoolState, lease: HandedOffLease): Message | null {
  if (!Number.isSafeInteger(lease.delivery) || lease.delivery < 1) return null;
  const message = state.queuesByGen.get(lease.queueGen)?.order.find(lease.seq);
  if (message === undefined || message.gen !== lease.gen) return null;
  const where = message.where;
  if (where === Where.Leased || where === Where.Failed || where === Where.Removed) return null;
  return message;
}
