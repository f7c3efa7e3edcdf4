// The durable image of one simulated replica, with GroupStorage's semantics. Writes reach it
// only when the simulated fsync completes (SimNode schedules that); a crash loses every write
// still pending, never one that completed.

import type { Entry, HardState, RestoredState, Snapshot } from '../../src/types.js';
import { SafetyViolation } from './checker.js';

export class SimDisk {
  private hardState: HardState = { term: 0, vote: null, commit: 0 };
  private snapshot: Snapshot | null = null;
  /** Ascending by index; may have a gap after a snapshot (stale tail, see GroupStorage). */
  private entries: Entry[] = [];
  fsyncs = 0;

  /** storage.save: hard state, and entries replacing everything from entries[0].index on. */
  save(hardState: HardState | null, entries: readonly Entry[]): void {
    this.fsyncs += 1;
    if (hardState !== null) {
      const old = this.hardState;
      if (hardState.term < old.term) {
        throw new SafetyViolation(`durable term went back from ${old.term} to ${hardState.term}`);
      }
      if (hardState.term === old.term && old.vote !== null && hardState.vote !== old.vote) {
        throw new SafetyViolation(`two durable votes in term ${old.term}`);
      }
      this.hardState = hardState;
    }
    if (entries.length === 0) return;
    this.entries.length = this.positionOf(entries[0]!.index);
    for (const entry of entries) this.entries.push(entry);
  }

  /** storage.saveSnapshot: stores it and drops entries with index <= its index. */
  saveSnapshot(snapshot: Snapshot): void {
    this.fsyncs += 1;
    if (this.snapshot !== null && this.snapshot.meta.index >= snapshot.meta.index) {
      const { index } = snapshot.meta;
      throw new Error(`sim: snapshot ${index} saved over ${this.snapshot.meta.index}`);
    }
    this.snapshot = snapshot;
    this.entries.splice(0, this.positionOf(snapshot.meta.index + 1));
  }

  load(): RestoredState {
    return { hardState: this.hardState, snapshot: this.snapshot, entries: [...this.entries] };
  }

  isEmpty(): boolean {
    return this.hardState.term === 0 && this.snapshot === null && this.entries.length === 0;
  }

  /** Position of the first entry with index >= `index`. */
  private positionOf(index: number): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.index < index) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
