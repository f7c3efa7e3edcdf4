// What a storage engine must know about one group's stored log to plan a write without reading
// it back: the snapshot point, the last index, and the term of every index (kept as runs of equal
// terms, since terms change rarely). Both engines plan with it, so they share one semantics.

import assert from 'node:assert/strict';
import { defined } from '../core/assert.js';
import type { Entry } from '../types.js';

/** Inclusive range of log indexes; empty when `from > to`. */
export interface IndexRange {
  readonly from: number;
  readonly to: number;
}

export class LogSpan {
  private snapshotIndexValue: number;
  private snapshotTermValue: number;
  private lastIndexValue: number;
  // Run k covers [runStart[k], runStart[k + 1] - 1] (the last run ends at lastIndex) with one term.
  private runStart: number[] = [];
  private runTerm: number[] = [];

  constructor(snapshotIndex = 0, snapshotTerm = 0) {
    assert(Number.isSafeInteger(snapshotIndex) && snapshotIndex >= 0, 'snapshot index');
    this.snapshotIndexValue = snapshotIndex;
    this.snapshotTermValue = snapshotTerm;
    this.lastIndexValue = snapshotIndex;
  }

  /** Builds the span of a restored log; `entries` must follow the snapshot contiguously. */
  static of(snapshotIndex: number, snapshotTerm: number, entries: readonly Entry[]): LogSpan {
    const span = new LogSpan(snapshotIndex, snapshotTerm);
    if (entries.length > 0) span.append(entries);
    return span;
  }

  get snapshotIndex(): number {
    return this.snapshotIndexValue;
  }

  get snapshotTerm(): number {
    return this.snapshotTermValue;
  }

  /** First stored entry's index; greater than `lastIndex` when no entry is stored. */
  get firstIndex(): number {
    return this.snapshotIndexValue + 1;
  }

  get lastIndex(): number {
    return this.lastIndexValue;
  }

  /** Term of `index`: a stored entry's, or the snapshot's at its own index; else undefined. */
  termAt(index: number): number | undefined {
    if (index === this.snapshotIndexValue) return this.snapshotTermValue;
    if (index < this.firstIndex || index > this.lastIndexValue) return undefined;
    let lo = 0;
    let hi = this.runStart.length - 1;
    // Binary search for the last run starting at or before `index`.
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (defined(this.runStart[mid], 'run in range') <= index) lo = mid;
      else hi = mid - 1;
    }
    return this.runTerm[lo];
  }

  /**
   * Records `entries` (contiguous, ascending, terms non-decreasing) replacing every stored entry
   * at or after `entries[0].index`. Returns the stored indexes past the new last entry, which the
   * caller deletes (log truncation). A gap, an overlap with the snapshot, or a term going down is
   * a bug in the caller and fails an assertion.
   */
  append(entries: readonly Entry[]): IndexRange {
    if (entries.length === 0) return { from: 1, to: 0 };
    const first = defined(entries[0], 'first entry').index;
    const last = first + entries.length - 1;
    assert(
      first >= this.firstIndex && first <= this.lastIndexValue + 1,
      `append at ${first} outside [${this.firstIndex}, ${this.lastIndexValue + 1}]`,
    );
    let previousTerm = defined(this.termAt(first - 1), 'the entry before an append is known');
    for (let i = 0; i < entries.length; i++) {
      const entry = defined(entries[i], 'entry in range');
      assert(entry.index === first + i, `entries not contiguous at ${entry.index}`);
      assert(entry.term >= previousTerm, `term goes down at index ${entry.index}`);
      previousTerm = entry.term;
    }
    while ((this.runStart.at(-1) ?? -1) >= first) {
      this.runStart.pop();
      this.runTerm.pop();
    }
    for (const entry of entries) {
      if (this.runTerm.length === 0 || this.runTerm[this.runTerm.length - 1] !== entry.term) {
        this.runStart.push(entry.index);
        this.runTerm.push(entry.term);
      }
    }
    const truncated = { from: last + 1, to: this.lastIndexValue };
    this.lastIndexValue = last;
    return truncated;
  }

  /**
   * Records a snapshot covering up to `index` (term `term`) and returns the stored indexes to
   * delete. As in the Raft paper (figure 13, steps 6-7): when the stored entry at `index` has the
   * snapshot's term, the entries after it are kept; otherwise the whole log is discarded.
   */
  applySnapshot(index: number, term: number): IndexRange {
    const snapshotIndex = this.snapshotIndexValue;
    assert(index >= snapshotIndex, `snapshot ${index} older than ${snapshotIndex}`);
    const keepTail = index <= this.lastIndexValue && this.termAt(index) === term;
    const dropped = { from: this.firstIndex, to: keepTail ? index : this.lastIndexValue };
    if (keepTail) {
      while (this.runStart.length > 1 && defined(this.runStart[1], 'second run') <= index + 1) {
        this.runStart.shift();
        this.runTerm.shift();
      }
      if (index === this.lastIndexValue) this.clearRuns();
      else this.runStart[0] = index + 1;
    } else {
      this.clearRuns();
      this.lastIndexValue = index;
    }
    this.snapshotIndexValue = index;
    this.snapshotTermValue = term;
    return dropped;
  }

  /**
   * Checks a compaction up to `index`. Entries up to the snapshot are already gone (a snapshot
   * drops them), and dropping past it would leave a gap after the snapshot, so `index` must not
   * exceed the snapshot index: there is never anything left to delete.
   */
  checkCompact(index: number): void {
    assert(
      Number.isSafeInteger(index) && index >= 0 && index <= this.snapshotIndexValue,
      `compact(${index}) beyond the snapshot at ${this.snapshotIndexValue}`,
    );
  }

  private clearRuns(): void {
    this.runStart = [];
    this.runTerm = [];
  }
}
