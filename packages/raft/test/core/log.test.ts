import { describe, expect, it } from 'vitest';
import { RaftLog, entrySizeBytes } from '../../src/core/log.js';
import { EntryType, type Entry } from '../../src/types.js';

function entry(index: number, term: number, bytes = 0): Entry {
  return { index, term, type: EntryType.Normal, data: new Uint8Array(bytes) };
}

function terms(log: RaftLog): number[] {
  const out: number[] = [];
  for (let i = log.firstIndex(); i <= log.lastIndex(); i += 1) out.push(log.term(i)!);
  return out;
}

describe('RaftLog', () => {
  it('restores contiguous entries after a base and clamps commit to the last index', () => {
    const log = new RaftLog(10, 3, [entry(11, 3), entry(12, 4)], 99);
    expect([log.firstIndex(), log.lastIndex(), log.lastTerm()]).toEqual([11, 12, 4]);
    expect(log.committed()).toBe(12);
    expect(log.term(10)).toBe(3);
    expect(log.term(9)).toBeUndefined();
    expect(log.term(13)).toBeUndefined();
    expect(() => new RaftLog(0, 0, [entry(2, 1)], 0)).toThrow(/contiguous/);
  });

  it('appendAfter skips what is present, truncates at a conflict, never below commit', () => {
    const log = new RaftLog(0, 0, [entry(1, 1), entry(2, 1), entry(3, 2), entry(4, 2)], 2);
    expect(log.takeUnstable()).toEqual([]);
    // Same entries again: nothing written.
    expect(log.appendAfter(1, [entry(2, 1), entry(3, 2)])).toBe(0);
    // Conflict at 3: truncated from there, new entries handed to storage again from 3.
    expect(log.appendAfter(2, [entry(3, 3), entry(4, 3), entry(5, 3)])).toBe(3);
    expect(terms(log)).toEqual([1, 1, 3, 3, 3]);
    expect(log.stableIndex()).toBe(2);
    expect(log.takeUnstable().map((e) => e.index)).toEqual([3, 4, 5]);
    expect(() => log.appendAfter(1, [entry(2, 9)])).toThrow(/committed/);
  });

  it('stableTo ignores an acknowledgement for entries that were replaced since', () => {
    const log = new RaftLog(0, 0, [], 0);
    log.append([entry(1, 1), entry(2, 1)]);
    log.takeUnstable();
    log.appendAfter(1, [entry(2, 2)]); // replaced before the first write completed
    log.stableTo(2, 1);
    expect(log.stableIndex()).toBe(0);
    log.stableTo(2, 2);
    expect(log.stableIndex()).toBe(2);
  });

  it('hands committed entries to the application once, in order', () => {
    const log = new RaftLog(0, 0, [entry(1, 1), entry(2, 1), entry(3, 1)], 0);
    log.commitTo(2);
    expect(log.takeCommitted().map((e) => e.index)).toEqual([1, 2]);
    expect(log.takeCommitted()).toEqual([]);
    expect(log.commitTo(1)).toBe(false); // never decreases
    log.commitTo(3);
    expect(log.takeCommitted().map((e) => e.index)).toEqual([3]);
    expect(() => log.commitTo(4)).toThrow(/beyond last index/);
  });

  it('slice honours the byte bound but always returns at least one entry', () => {
    const log = new RaftLog(0, 0, [entry(1, 1, 100), entry(2, 1, 100), entry(3, 1, 100)], 0);
    const size = entrySizeBytes(entry(1, 1, 100));
    expect(log.slice(1, 4, size * 2).map((e) => e.index)).toEqual([1, 2]);
    expect(log.slice(1, 4, 1).map((e) => e.index)).toEqual([1]);
    expect(log.slice(2, 4, 1e9).map((e) => e.index)).toEqual([2, 3]);
  });

  it('compacts up to the applied index and keeps the term of the new base', () => {
    const log = new RaftLog(0, 0, [entry(1, 1), entry(2, 2), entry(3, 2)], 3);
    log.takeCommitted();
    log.compact(2);
    expect(
      [log.baseIndex(), log.baseTerm(), log.firstIndex(), log.lastIndex()],
    ).toEqual([2, 2, 3, 3]);
    expect(log.term(1)).toBeUndefined();
    expect(log.entry(3).term).toBe(2);
    const fresh = new RaftLog(0, 0, [entry(1, 1)], 0);
    expect(() => fresh.compact(1)).toThrow(/beyond applied/);
  });

  it('retainFrom keeps at most the entries and bytes asked for behind an index', () => {
    const list = Array.from({ length: 10 }, (_, i) => entry(i + 1, 1, 1_000));
    const log = new RaftLog(0, 0, list, 10);
    const size = entrySizeBytes(list[0]!);
    expect(log.retainFrom(8, 1_000, Number.POSITIVE_INFINITY)).toBe(0);
    expect(log.retainFrom(8, 3, Number.POSITIVE_INFINITY)).toBe(5);
    // Three entries' bytes: entries 6..8 stay whatever the count allows.
    expect(log.retainFrom(8, 1_000, 3 * size)).toBe(5);
    expect(log.retainFrom(8, 1_000, 3 * size - 1)).toBe(6);
    expect(log.retainFrom(8, 0, 3 * size)).toBe(8);
    expect(log.retainFrom(8, 1_000, 0)).toBe(8);
  });

  it('compaction stays correct across many rounds (amortized array reclaim)', () => {
    const log = new RaftLog(0, 0, [], 0);
    for (let i = 1; i <= 5000; i += 1) {
      log.append([entry(i, 1 + Math.floor(i / 1000))]);
      log.commitTo(i);
      log.takeCommitted();
      if (i % 7 === 0) log.compact(i - 3);
    }
    expect(log.lastIndex()).toBe(5000);
    expect(log.entry(4999).term).toBe(5);
    expect(log.baseIndex()).toBe(4995); // last compaction at i = 4998
  });

  it('restore replaces the log by a snapshot base', () => {
    const log = new RaftLog(0, 0, [entry(1, 1), entry(2, 1)], 1);
    log.restore(10, 4);
    expect(
      [log.baseIndex(), log.lastIndex(), log.lastTerm(), log.committed(), log.applied()],
    ).toEqual([10, 10, 4, 10, 10]);
    expect(log.takeUnstable()).toEqual([]);
    expect(() => log.restore(5, 4)).toThrow(/not past the commit/);
  });

  it('finds term boundaries by binary search (fast backtracking)', () => {
    const entries = [entry(1, 1), entry(2, 2), entry(3, 2), entry(4, 2), entry(5, 5)];
    const log = new RaftLog(0, 0, entries, 0);
    expect(log.firstIndexOfTerm(2, 1, 5)).toBe(2);
    expect(log.firstIndexOfTerm(2, 3, 5)).toBe(3);
    expect(log.firstIndexOfTerm(3, 1, 5)).toBe(6); // absent
    expect(log.lastIndexOfTerm(2, 5)).toBe(4);
    expect(log.lastIndexOfTerm(2, 3)).toBe(3);
    expect(log.lastIndexOfTerm(4, 5)).toBe(0);
  });

  it('up-to-date comparison: later last term wins, then longer log (Raft 5.4.1)', () => {
    const log = new RaftLog(0, 0, [entry(1, 1), entry(2, 3)], 0);
    expect(log.isUpToDate(1, 4)).toBe(true);
    expect(log.isUpToDate(2, 3)).toBe(true);
    expect(log.isUpToDate(1, 3)).toBe(false);
    expect(log.isUpToDate(9, 2)).toBe(false);
  });

  it('releasePayloadsBeyond keeps the newest applied payloads within both bounds', () => {
    const sizes = [5, 4, 3, 2, 1];
    const log = new RaftLog(0, 0, sizes.map((bytes, i) => entry(i + 1, 1, bytes)), 5);
    const held = (): number[] => sizes.map((_, i) => log.entry(i + 1).data.byteLength);
    log.commitTo(5);
    log.releasePayloadsBeyond(0, 0); // nothing applied yet: nothing released
    expect(held()).toEqual(sizes);
    expect(log.takeCommitted().map((e) => e.data.byteLength)).toEqual(sizes);
    log.releasePayloadsBeyond(3, 100);
    expect([log.releasedIndex(), ...held()]).toEqual([2, 0, 0, 3, 2, 1]);
    log.releasePayloadsBeyond(3, 3); // 3 + 2 + 1 bytes > 3: only 2 + 1 stay
    expect([log.releasedIndex(), ...held()]).toEqual([3, 0, 0, 0, 2, 1]);
    // Compaction past held entries stops counting them: 1 byte held after it.
    log.compact(4);
    log.releasePayloadsBeyond(5, 1);
    expect([log.releasedIndex(), log.entry(5).data.byteLength]).toEqual([4, 1]);
    log.restore(9, 2);
    log.releasePayloadsBeyond(0, 0);
    expect(log.releasedIndex()).toBe(9);
  });
});
