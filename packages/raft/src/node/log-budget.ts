// A bound shared by every group of one process on the bytes of log they keep in memory
// unsnapshotted. Each group's own bound (`snapshotLogBytes`) alone lets a member hosting many
// groups hold that much per group; with a budget, a group snapshots early once the groups
// together hold more than the budget and it holds at least its share of that total. Some group
// always holds at least the mean, so the total comes back down; a group whose last snapshot is
// larger than its log still waits for as many bytes as that snapshot held (the amortization
// RaftNode keeps), so its log may exceed its share by its state's size.

import { RaftConfigError } from '../core/config.js';

/** One group's part of a LogBudget: what it holds, counted until it leaves. */
export interface LogShare {
  /** The group now keeps `bytes`. */
  set(bytes: number): void;
  /** Whether the group should snapshot now: the total is over budget and it holds its share. */
  due(): boolean;
  /** The group is gone (closed): it keeps nothing any more. Later calls do nothing. */
  leave(): void;
}

export class LogBudget {
  private total = 0;
  private shares = 0;

  /** `bytesMax`: applied, unsnapshotted log bytes the groups keep together before trimming. */
  constructor(readonly bytesMax: number) {
    if (!Number.isSafeInteger(bytesMax) || bytesMax < 1) {
      throw new RaftConfigError(`log budget must be a positive integer, got ${bytesMax}`);
    }
  }

  /** Bytes all groups keep. */
  get heldBytes(): number {
    return this.total;
  }

  /** Groups counted (joined and not left). */
  get holders(): number {
    return this.shares;
  }

  /** A new group's share, holding nothing yet. */
  join(): LogShare {
    this.shares += 1;
    let held = 0;
    let joined = true;
    return {
      set: (bytes) => {
        if (!joined) return;
        this.total += bytes - held;
        held = bytes;
      },
      due: () =>
        joined && this.total > this.bytesMax && held > 0 && held * this.shares >= this.total,
      leave: () => {
        if (!joined) return;
        joined = false;
        this.total -= held;
        held = 0;
        this.shares -= 1;
      },
    };
  }
}
