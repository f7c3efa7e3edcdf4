// A new leader that lacks payloads (it installed another replica's snapshot and its fetch is not
// done, or its scrub dropped a bad copy) would answer `unavailable` for those messages until the
// fetch ends. Instead of opening, it hands the leadership to an up-to-date voter that is
// replicating normally, which most likely holds them (the voter was not rebuilt: Raft brings it
// fully up to date before it campaigns). It opens after all when no such voter shows up within
// LACKING_HEIR_WAIT_TICKS ticks, when the transfer fails, or when the fetch ends meanwhile; and it
// hands over at most once per LACKING_HAND_OFF_PAUSE_MS, so two lacking replicas pass the
// leadership back and forth at most once before one of them serves what it holds.

import type { Clock, TimerHandle } from '@spoolmq/protocol';

/**
 * Ticks a lacking new leader waits for a voter to hand over to. A new leader's followers reach
 * the replicating state after their first answers, a tick or two; 20 leaves room for a slow one.
 */
export const LACKING_HEIR_WAIT_TICKS = 20;
/** The least time between two hand-overs of one replica for lacking payloads. */
export const LACKING_HAND_OFF_PAUSE_MS = 60_000;

export interface LackingLeaderDeps {
  /** The cluster layer's clock (waits and the pause). */
  readonly clock: Clock;
  readonly tickMs: number;
  /** Payloads the replica lacks and still hopes to fetch. */
  lacking(): number;
  /** Whether the group has another voter (a sole member has nobody to hand over to). */
  hasPeers(): boolean;
  /** Whether the replica still leads in `term` and may open there (not open, closing or lame). */
  leads(term: number): boolean;
  /** Opens as primary in `term` (proposes the barrier). */
  open(term: number): void;
  /** An up-to-date voter replicating normally to hand over to, or null (lame-duck.ts). */
  heir(): string | null;
  /** Transfers the leadership to `to`; rejects when it did not move. */
  transfer(to: string): Promise<void>;
}

export class LackingLeaderHandOff {
  private timer: TimerHandle | null = null;
  private lastAtMs = Number.NEGATIVE_INFINITY;
  private handOffsValue = 0;

  constructor(private readonly deps: LackingLeaderDeps) {}

  /** Leaderships handed over for lacking payloads. */
  get handOffs(): number {
    return this.handOffsValue;
  }

  /** The replica leads in `term`: it opens, unless it lacks payloads and hands over first. */
  lead(term: number): void {
    this.cancel();
    const { deps } = this;
    const paused = deps.clock.nowMs() < this.lastAtMs + LACKING_HAND_OFF_PAUSE_MS;
    if (deps.lacking() === 0 || !deps.hasPeers() || paused) {
      deps.open(term);
      return;
    }
    this.look(term, LACKING_HEIR_WAIT_TICKS);
  }

  /** Stops waiting (the replica closes). */
  cancel(): void {
    if (this.timer !== null) this.deps.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private look(term: number, ticksLeft: number): void {
    const { deps } = this;
    if (!deps.leads(term)) return;
    if (deps.lacking() === 0) {
      deps.open(term);
      return;
    }
    const heir = deps.heir();
    if (heir !== null) {
      this.handOver(term, heir);
      return;
    }
    if (ticksLeft === 0) {
      deps.open(term);
      return;
    }
    this.timer = deps.clock.setTimer(() => {
      this.timer = null;
      this.look(term, ticksLeft - 1);
    }, deps.tickMs);
  }

  private handOver(term: number, heir: string): void {
    const { deps } = this;
    this.lastAtMs = deps.clock.nowMs();
    this.handOffsValue += 1;
    deps.transfer(heir).catch(() => {
      // The heir did not take over: serve what this replica holds after all.
      if (deps.leads(term)) deps.open(term);
    });
  }
}
