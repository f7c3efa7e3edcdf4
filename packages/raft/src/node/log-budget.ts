// A bound shared by every group of one process on the bytes of log they keep in memory
// unsnapshotted. Each group's own bound (`snapshotLogBytes`) alone lets a member hosting many
// groups hold that much per group; with a budget, a group snapshots early once the groups
// together hold more than the budget and it holds at least its share of that total. Some group
// always holds at least the mean, so the total comes back down; a group whose last snapshot is
// larger than its log still waits for as many bytes as that snapshot held (the amortization
// RaftNode keeps), so its log may exceed its share by its state's size.

import { RaftConfigError } from '../core/config.js';

export class LogBudget {
  private readonly held = new Map<object, number>();
  private total = 0;

  /** `bytesMax`: applied, unsnapshotted log bytes the holders keep together before trimming. */
  constructor(readonly bytesMax: number) {
    if (!Number.isSafeInteger(bytesMax) || bytesMax < 1) {
      throw new RaftConfigError(`log budget must be a positive integer, got ${bytesMax}`);
    }
  }

  /** Bytes all holders keep. */
  get heldBytes(): number {
    return this.total;
  }

  /** Groups counted. */
  get holders(): number {
    return this.held.size;
  }

  /** `holder` now keeps `bytes`. */
  set(holder: object, bytes: number): void {
    this.total += bytes - (this.held.get(holder) ?? 0);
    this.held.set(holder, bytes);
  }

  /** `holder` is gone (closed): it keeps nothing any more. */
  remove(holder: object): void {
    this.total -= this.held.get(holder) ?? 0;
    this.held.delete(holder);
  }

  /** Whether `holder` should snapshot now: the total is over budget and it holds its share. */
  due(holder: object): boolean {
    if (this.total <= this.bytesMax) return false;
    const bytes = this.held.get(holder) ?? 0;
    return bytes > 0 && bytes * this.held.size >= this.total;
  }
}
