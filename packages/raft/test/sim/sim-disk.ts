// The durable image of one simulated replica, with GroupStorage's semantics. Writes reach it
// when the simulated fsync completes (SimNode schedules that), and a crash may also let some of
// the writes still pending through, oldest first (a write issued is on its way to the disk),
// never one out of order. `corrupt` plays bad bytes found on load, in the log, the snapshot or
// the hard state record (which storage restores from its copy: LevelGroupStorage.load).

import type { Entry, HardState, RestoredState, Snapshot } from '../../src/types.js';
import { SafetyViolation } from './checker.js';
import type { Prng } from '../../src/prng.js';

export class SimDisk {
  private hardState: HardState = { term: 0, vote: null, commit: 0 };
  /** The copy storage keeps: rewritten with the record whenever term, vote or damage change. */
  private copy: HardState = this.hardState;
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
      if (!sameSafetyState(hardState, this.copy)) this.copy = hardState;
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

  /**
   * Bad bytes found on load, handled as LevelGroupStorage.load does: from a random stored entry
   * on, every entry is unreadable and dropped; or the snapshot is unreadable, and it and the
   * entries after it (useless without it) go. The hard state records what may have been
   * acknowledged and lost, until the replica has caught up (RaftCore's `damage`). Or, one time
   * in four, the hard state record is unreadable and restored from its copy. Returns what
   * was dropped, for the trace, or null when the disk held nothing to corrupt.
   */
  corrupt(prng: Prng): string | null {
    const last = this.entries[this.entries.length - 1] ?? this.snapshot?.meta;
    if (last === undefined) return null;
    if (prng.chance(0.25)) {
      // The hard state record is unreadable: storage restores it from its copy, whose commit
      // index may be older (commit is not copied each time it moves).
      const commit = Math.min(this.copy.commit, last.index);
      const what = `hard state (term ${this.hardState.term}, commit ${this.hardState.commit}) lost`;
      this.hardState = { ...this.copy, commit };
      this.copy = this.hardState;
      return `${what}, restored from its copy with commit ${commit}`;
    }
    const lastIndex = last.index;
    let kept: number;
    let what: string;
    if (this.snapshot !== null && (this.entries.length === 0 || prng.chance(0.2))) {
      what = `dropped snapshot ${this.snapshot.meta.index} and ${this.entries.length} entries`;
      this.snapshot = null;
      this.entries = [];
      kept = 0;
    } else {
      const position = prng.int(this.entries.length);
      what = `dropped entries ${this.entries[position]!.index}-${lastIndex}`;
      kept = position > 0 ? this.entries[position - 1]!.index : (this.snapshot?.meta.index ?? 0);
      this.entries.length = position;
    }
    // The end of the lost log, as storage reads it off the last record; an earlier damage not
    // yet repaired ends at least as high (a log only grows past it).
    const earlier = this.hardState.damage;
    const damage =
      earlier === undefined || earlier === null || earlier.lastTerm < last.term
        ? { lastIndex, lastTerm: last.term }
        : earlier.lastTerm === last.term && earlier.lastIndex < lastIndex
          ? { lastIndex, lastTerm: last.term }
          : earlier;
    const commit = Math.min(this.hardState.commit, kept);
    this.hardState = { ...this.hardState, commit, damage };
    this.copy = this.hardState;
    return what;
  }

  isDamaged(): boolean {
    return (this.hardState.damage ?? null) !== null;
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

/** Whether two hard states agree on term, vote and damage (what storage copies). */
function sameSafetyState(a: HardState, b: HardState): boolean {
  const x = a.damage ?? null;
  const y = b.damage ?? null;
  const sameDamage =
    x === y ||
    (x !== null && y !== null && x.lastIndex === y.lastIndex && x.lastTerm === y.lastTerm);
  return a.term === b.term && a.vote === b.vote && sameDamage;
}
