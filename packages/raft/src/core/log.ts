// The in-memory Raft log of one replica: every entry after the log base (the last compacted
// index) plus the indexes that say how far each entry has travelled: handed to storage, durable,
// committed, handed to the application. The core keeps the unsnapshotted log in memory (bounded
// by snapshotting), so storage is only written to and read back at restart.
//
// Index space: entries hold indexes (baseIndex, lastIndex]. `term(baseIndex)` is known (the term
// of the last compacted entry, or of the snapshot); anything below the base is gone.

import { type Entry, EntryType } from '../types.js';
import { assert, defined } from './assert.js';

/** Per-entry overhead counted against byte bounds, on top of `data.byteLength`. */
export const ENTRY_OVERHEAD_BYTES = 24;

const EMPTY: readonly Entry[] = [];
const RELEASED_DATA = new Uint8Array(0);

/** Bytes an entry counts for against `appendBytesMax`. */
export function entrySizeBytes(entry: Entry): number {
  return entry.data.byteLength + ENTRY_OVERHEAD_BYTES;
}

export class RaftLog {
  /** Entries with indexes (baseIndex, lastIndex]; `entries[head]` has index baseIndex + 1. */
  private entries: Entry[] = [];
  private head = 0;
  private base: number;
  private baseTermValue: number;
  /** Highest index known committed. Never decreases. */
  private committedIndex: number;
  /** Highest index handed to the application (in a Ready's committed entries). */
  private appliedIndex: number;
  /** Highest index known durable in local storage (term-checked, see `stableTo`). */
  private stable: number;
  /** First index not yet handed to storage in a Ready. */
  private unstableFrom: number;
  /** Entries up to here hold no application payload (releasePayloadsTo); >= base. */
  private released: number;
  /** Payload bytes of the entries in (released, applied]: applied and still held. */
  private heldAppliedBytes = 0;

  /**
   * A log whose base is (`baseIndex`, `baseTerm`) holding `entries` (contiguous from
   * baseIndex + 1), all already durable, with `committed` clamped to the last index.
   */
  constructor(baseIndex: number, baseTerm: number, entries: readonly Entry[], committed: number) {
    this.base = baseIndex;
    this.baseTermValue = baseTerm;
    let expected = baseIndex + 1;
    for (const entry of entries) {
      assert(entry.index === expected, `restored entries not contiguous at ${entry.index}`);
      this.entries.push(entry);
      expected += 1;
    }
    this.committedIndex = Math.max(baseIndex, Math.min(committed, this.lastIndex()));
    this.appliedIndex = baseIndex;
    this.stable = this.lastIndex();
    this.unstableFrom = this.lastIndex() + 1;
    this.released = baseIndex;
  }

  baseIndex(): number {
    return this.base;
  }

  baseTerm(): number {
    return this.baseTermValue;
  }

  firstIndex(): number {
    return this.base + 1;
  }

  lastIndex(): number {
    return this.base + this.entries.length - this.head;
  }

  lastTerm(): number {
    const n = this.entries.length;
    return n > this.head ? defined(this.entries[n - 1], 'last entry').term : this.baseTermValue;
  }

  committed(): number {
    return this.committedIndex;
  }

  applied(): number {
    return this.appliedIndex;
  }

  stableIndex(): number {
    return this.stable;
  }

  /** Term of the entry at `index`, or undefined when it is compacted or beyond the last index. */
  term(index: number): number | undefined {
    if (index === this.base) return this.baseTermValue;
    if (index < this.base || index > this.lastIndex()) return undefined;
    return defined(this.entries[this.head + index - this.base - 1], 'entry in log').term;
  }

  /** Entry at `index` in (baseIndex, lastIndex]. */
  entry(index: number): Entry {
    assert(index > this.base && index <= this.lastIndex(), `entry ${index} not in log`);
    return defined(this.entries[this.head + index - this.base - 1], 'entry in log');
  }

  matchTerm(index: number, term: number): boolean {
    return this.term(index) === term;
  }

  /** Highest index whose entry may have dropped its payload: entries up to it are not sent. */
  releasedIndex(): number {
    return this.released;
  }

  /**
   * Drops the payload (data) of the normal entries up to `index`, which must be handed to the
   * application already: their terms and places stay (elections and the consistency check need
   * only those), while the bytes, applied and on disk, stop being held in memory until the next
   * snapshot. No-ops and configuration changes keep theirs. Such entries are never sliced again:
   * a replica that needs them gets a snapshot (the leader's caller checks releasedIndex).
   */
  releasePayloadsTo(index: number): void {
    if (index <= this.released) return;
    assert(index <= this.appliedIndex, `release ${index} beyond applied ${this.appliedIndex}`);
    for (let at = this.released + 1; at <= index; at += 1) {
      const slot = this.head + at - this.base - 1;
      const entry = defined(this.entries[slot], 'released entry in log');
      this.heldAppliedBytes -= entry.data.byteLength;
      if (entry.type !== EntryType.Normal || entry.data.byteLength === 0) continue;
      const { term, type } = entry;
      this.entries[slot] = { index: at, term, type, data: RELEASED_DATA };
    }
    this.released = index;
  }

  /**
   * Releases the payloads of the oldest applied entries (see releasePayloadsTo) until at most
   * `entriesMax` applied entries holding at most `bytesMax` payload bytes keep theirs: the
   * newest, which a replica that leads next may still send to a peer lagging a little.
   */
  releasePayloadsBeyond(entriesMax: number, bytesMax: number): void {
    let to = this.released;
    let held = this.heldAppliedBytes;
    while (to < this.appliedIndex && (this.appliedIndex - to > entriesMax || held > bytesMax)) {
      to += 1;
      held -= defined(this.entries[this.head + to - this.base - 1], 'entry in log').data.byteLength;
    }
    this.releasePayloadsTo(to);
  }

  /**
   * Entries with indexes in [lo, hi), lo > baseIndex, at most `bytesMax` bytes in total but
   * always at least one entry when lo < hi (a large entry travels alone).
   */
  slice(lo: number, hi: number, bytesMax: number): Entry[] {
    assert(lo > this.base && hi <= this.lastIndex() + 1, `slice [${lo}, ${hi}) out of range`);
    assert(lo > this.released, `slice [${lo}, ${hi}) of released payloads`);
    const out: Entry[] = [];
    let bytes = 0;
    for (let index = lo; index < hi; index += 1) {
      const entry = defined(this.entries[this.head + index - this.base - 1], 'entry in log');
      bytes += entrySizeBytes(entry);
      if (out.length > 0 && bytes > bytesMax) break;
      out.push(entry);
    }
    return out;
  }

  /**
   * Raft 5.4.1 up-to-date check: a candidate whose last entry is (`lastIndex`, `lastTerm`) is at
   * least as up to date as this log.
   */
  isUpToDate(lastIndex: number, lastTerm: number): boolean {
    const ourTerm = this.lastTerm();
    return lastTerm > ourTerm || (lastTerm === ourTerm && lastIndex >= this.lastIndex());
  }

  /** Appends `entries` right after the last index (leader's own proposals). */
  append(entries: readonly Entry[]): void {
    if (entries.length === 0) return;
    const first = defined(entries[0], 'first entry');
    assert(first.index === this.lastIndex() + 1, 'append not contiguous');
    for (const entry of entries) this.entries.push(entry);
  }

  /**
   * Follower append (Raft 5.3): entries following (`prevIndex`, `prevTerm`), which must match.
   * Skips entries already present, truncates from the first conflicting entry and appends the
   * rest. Returns the index of the first entry actually written (entries before it were already
   * present), or 0 when nothing was written; a returned index <= the previous last index means
   * the log was truncated there. The caller has checked that `prevIndex` matches. Never
   * truncates committed entries (asserted).
   */
  appendAfter(prevIndex: number, entries: readonly Entry[]): number {
    let skip = 0;
    while (skip < entries.length) {
      const entry = defined(entries[skip], 'appended entry');
      assert(entry.index === prevIndex + 1 + skip, 'appended entries not contiguous');
      if (this.term(entry.index) !== entry.term) break;
      skip += 1;
    }
    if (skip === entries.length) return 0;
    const first = defined(entries[skip], 'first new entry').index;
    if (first <= this.lastIndex()) {
      assert(first > this.committedIndex, `conflict at committed index ${first}`);
      this.entries.length = this.head + first - this.base - 1;
      this.stable = Math.min(this.stable, first - 1);
      this.unstableFrom = Math.min(this.unstableFrom, first);
    }
    for (let i = skip; i < entries.length; i += 1) {
      this.entries.push(defined(entries[i], 'appended entry'));
    }
    return first;
  }

  /** Raises the commit index to `index` (<= lastIndex); lower values are ignored. */
  commitTo(index: number): boolean {
    if (index <= this.committedIndex) return false;
    assert(index <= this.lastIndex(), `commit ${index} beyond last index ${this.lastIndex()}`);
    this.committedIndex = index;
    return true;
  }

  /** Entries not yet handed to storage; marks them handed over. */
  takeUnstable(): readonly Entry[] {
    const last = this.lastIndex();
    if (this.unstableFrom > last) return EMPTY;
    const out = this.entries.slice(this.head + this.unstableFrom - this.base - 1);
    this.unstableFrom = last + 1;
    return out;
  }

  hasUnstable(): boolean {
    return this.unstableFrom <= this.lastIndex();
  }

  /** Committed entries not yet handed to the application; marks them handed over. */
  takeCommitted(): readonly Entry[] {
    if (this.appliedIndex >= this.committedIndex) return EMPTY;
    const lo = this.head + this.appliedIndex - this.base;
    const out = this.entries.slice(lo, this.head + this.committedIndex - this.base);
    this.appliedIndex = this.committedIndex;
    for (const entry of out) this.heldAppliedBytes += entry.data.byteLength;
    return out;
  }

  hasCommittedToApply(): boolean {
    return this.appliedIndex < this.committedIndex;
  }

  /**
   * Storage reports entries up to (`index`, `term`) durable. Ignored when the entry at `index`
   * has since been replaced (another term), because then what was written is no longer our log.
   * Indexes at or below the base are covered by a snapshot and count as durable.
   */
  stableTo(index: number, term: number): void {
    if (index <= this.base) {
      this.stable = Math.max(this.stable, index);
      return;
    }
    if (this.term(index) === term && index > this.stable) this.stable = index;
  }

  /** Local storage holds a snapshot at `index` (the base after `restore`). */
  stableSnapshot(index: number): void {
    if (index <= this.base) this.stable = Math.max(this.stable, index);
  }

  /**
   * Replaces the whole log by a snapshot at (`index`, `term`): no entries, committed and applied
   * at the snapshot (the application restores from it).
   */
  restore(index: number, term: number): void {
    assert(index > this.committedIndex, 'restore of a snapshot not past the commit index');
    this.entries = [];
    this.head = 0;
    this.base = index;
    this.baseTermValue = term;
    this.committedIndex = index;
    this.appliedIndex = index;
    this.stable = Math.min(this.stable, index);
    this.unstableFrom = index + 1;
    this.released = index;
    this.heldAppliedBytes = 0;
  }

  /**
   * The index to compact to so that behind `index` (in [baseIndex, lastIndex]) stay at most
   * `entriesMax` entries holding at most `bytesMax` bytes (entrySizeBytes), the newest first.
   */
  retainFrom(index: number, entriesMax: number, bytesMax: number): number {
    assert(index >= this.base && index <= this.lastIndex(), `retain from ${index} not in log`);
    let from = index;
    let bytes = 0;
    while (from > this.base && index - from < entriesMax) {
      bytes += entrySizeBytes(this.entry(from));
      if (bytes > bytesMax) break;
      from -= 1;
    }
    return from;
  }

  /**
   * Drops entries with index <= `index` from memory (a snapshot covers them). `index` must be
   * handed to the application already and not beyond the last index.
   */
  compact(index: number): void {
    if (index <= this.base) return;
    assert(index <= this.appliedIndex, `compact ${index} beyond applied ${this.appliedIndex}`);
    const term = defined(this.term(index), 'compacted entry in log');
    // Entries compacted while still holding their payloads stop counting as held.
    for (let at = this.released + 1; at <= index; at += 1) {
      this.heldAppliedBytes -= this.entry(at).data.byteLength;
    }
    this.head += index - this.base;
    this.base = index;
    this.baseTermValue = term;
    this.released = Math.max(this.released, index);
    // Reclaim the dropped prefix once it dominates the array, keeping compaction amortized O(1).
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** First index in [lo, hi] whose entry has term `term` (terms ascend), or hi + 1. */
  firstIndexOfTerm(term: number, lo: number, hi: number): number {
    let low = Math.max(lo, this.base + 1);
    let high = Math.min(hi, this.lastIndex());
    let found = hi + 1;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const t = defined(this.term(mid), 'searched entry in log');
      if (t >= term) {
        if (t === term) found = mid;
        high = mid - 1;
      } else {
        low = mid + 1;
      }
    }
    return found;
  }

  /** Last index <= hi whose entry has term `term`, or 0 when no such entry is in memory. */
  lastIndexOfTerm(term: number, hi: number): number {
    let low = this.base;
    let high = Math.min(hi, this.lastIndex());
    let found = 0;
    while (low <= high) {
      const mid = (low + high) >>> 1;
      const t = defined(this.term(mid), 'searched entry in log');
      if (t <= term) {
        if (t === term) found = mid;
        low = mid + 1;
      } else {
        high = mid - 1;
      }
    }
    return found;
  }
}
