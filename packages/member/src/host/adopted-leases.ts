// The leases a primary took over from the previous one in a planned hand-off, with the term their
// tokens carry. A token of an earlier term normally answers 410 primary_changed; one naming an
// adopted lease (same queue generation, seq, delivery and term) is accepted instead, and the
// engine then resolves it as any lease (settled, expired, or held). Entries are never removed
// while the primary serves: an entry whose delivery has ended matches no live lease any more (the
// message's next delivery has a higher number), so it can only lead to a 410 from the engine.
//
// Failure leases are stateless (the token names the failed message and its generation, which
// fences a stale one), so the record lists none: it names the terms whose failure-lease tokens
// stay valid instead, from the first primary of an unbroken chain of planned hand-offs to the
// one that handed off. Every primary that served in those terms is in that chain (one that
// opened outside it would have voided the record), so a rolling restart voids no failure lease.

import type { HandedOffLease } from '@spoolmq/engine';

/** A lease as the hand-off record carries it: the engine's view plus its token's term. */
export interface TermedLease extends HandedOffLease {
  /** Term of the primary that minted the lease's token. */
  readonly term: number;
}

/**
 * What a primary opening after a planned hand-off takes over from the previous one (a hand-off
 * record's writer, or this replica itself before it lost the leadership). The terms come from
 * the record, not from the leases: a record may list none.
 */
export interface HandOff {
  /** Term of the primary that handed off. */
  readonly term: number;
  /** First term whose failure leases it accepted (its own term, or earlier after a hand-off). */
  readonly failureFromTerm: number;
  readonly leases: readonly TermedLease[];
}

export class AdoptedLeases {
  /** `queueGen:seq` -> the adopted lease of that message. */
  private readonly byMessage = new Map<string, TermedLease>();
  /** Failure-lease tokens of terms in [failureFromTerm, handedOffTerm] are accepted (0: none). */
  private readonly failureFromTerm: number;
  private readonly handedOffTerm: number;

  /** `leases`: those of `handOff` still valid (engine.adoptLeases). */
  constructor(
    leases: readonly TermedLease[] = [],
    handOff: Omit<HandOff, 'leases'> | null = null,
  ) {
    for (const lease of leases) this.byMessage.set(keyOf(lease.queueGen, lease.seq), lease);
    this.failureFromTerm = handOff?.failureFromTerm ?? 0;
    this.handedOffTerm = handOff?.term ?? 0;
  }

  get size(): number {
    return this.byMessage.size;
  }

  /** Whether a failure-lease token minted in `term` was minted by a primary of the chain. */
  acceptsFailureLease(term: number): boolean {
    return this.handedOffTerm !== 0 && term >= this.failureFromTerm && term <= this.handedOffTerm;
  }

  /** The first term whose failure leases this primary (of `ownTerm`) accepts. */
  failureLeasesFromTerm(ownTerm: number): number {
    return this.handedOffTerm === 0 ? ownTerm : this.failureFromTerm;
  }

  /** Whether a lease token minted in `term` for this delivery names an adopted lease. */
  accepts(term: number, queueGen: number, seq: number, delivery: number): boolean {
    const lease = this.byMessage.get(keyOf(queueGen, seq));
    return lease !== undefined && lease.term === term && lease.delivery === delivery;
  }

  /**
   * The term of the token of lease (queueGen, seq, delivery) held now: the adopted lease's term
   * when it is that one, else `ownTerm` (this primary minted it).
   */
  termOf(queueGen: number, seq: number, delivery: number, ownTerm: number): number {
    const lease = this.byMessage.get(keyOf(queueGen, seq));
    return lease !== undefined && lease.delivery === delivery ? lease.term : ownTerm;
  }
}

function keyOf(queueGen: number, seq: number): string {
  return `${queueGen}:${seq}`;
}
