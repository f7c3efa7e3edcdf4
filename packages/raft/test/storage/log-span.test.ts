import { describe, expect, it } from 'vitest';
import { LogSpan } from '../../src/storage/log-span.js';
import { entries, entry } from './conformance.js';

describe('LogSpan', () => {
  it('tracks terms as runs and answers termAt', () => {
    const span = LogSpan.of(0, 0, [...entries(1, 3, 1), ...entries(4, 6, 3), entry(7, 4)]);
    expect([0, 1, 3, 4, 6, 7, 8].map((i) => span.termAt(i))).toEqual([0, 1, 1, 3, 3, 4, undefined]);
    expect(span.firstIndex).toBe(1);
    expect(span.lastIndex).toBe(7);
  });

  it('returns the truncated range on a conflicting append', () => {
    const span = LogSpan.of(0, 0, entries(1, 10, 1));
    expect(span.append(entries(4, 5, 2))).toEqual({ from: 6, to: 10 });
    expect(span.lastIndex).toBe(5);
    expect(span.termAt(3)).toBe(1);
    expect(span.termAt(4)).toBe(2);
    expect(span.append(entries(6, 8, 2))).toEqual({ from: 9, to: 5 });
  });

  it('keeps the tail after a matching snapshot, drops all after a conflicting one', () => {
    const keep = LogSpan.of(0, 0, [...entries(1, 4, 1), ...entries(5, 9, 2)]);
    expect(keep.applySnapshot(6, 2)).toEqual({ from: 1, to: 6 });
    expect([6, 7, 9, 10].map((i) => keep.termAt(i))).toEqual([2, 2, 2, undefined]);
    expect(keep.firstIndex).toBe(7);

    const drop = LogSpan.of(0, 0, [...entries(1, 4, 1), ...entries(5, 9, 2)]);
    expect(drop.applySnapshot(6, 3)).toEqual({ from: 1, to: 9 });
    expect(drop.lastIndex).toBe(6);
    expect(drop.termAt(6)).toBe(3);
    expect(drop.termAt(7)).toBeUndefined();
  });

  it('a snapshot at the last index or beyond it leaves no entries', () => {
    const atEnd = LogSpan.of(0, 0, entries(1, 5, 1));
    expect(atEnd.applySnapshot(5, 1)).toEqual({ from: 1, to: 5 });
    expect(atEnd.lastIndex).toBe(5);
    expect(atEnd.append(entries(6, 6, 1))).toEqual({ from: 7, to: 5 });
    const beyond = LogSpan.of(0, 0, entries(1, 5, 1));
    expect(beyond.applySnapshot(50, 2)).toEqual({ from: 1, to: 5 });
    expect(beyond.firstIndex).toBe(51);
  });

  it('asserts on gaps, overlaps with the snapshot, falling terms and compaction past the snapshot', () => {
    const span = LogSpan.of(10, 2, entries(11, 12, 2));
    expect(() => span.append(entries(14, 14, 2))).toThrow(/outside/);
    expect(() => span.append(entries(10, 10, 2))).toThrow(/outside/);
    expect(() => span.append([entry(13, 1)])).toThrow(/term goes down/);
    expect(() => span.applySnapshot(9, 2)).toThrow(/older/);
    expect(() => span.checkCompact(11)).toThrow(/beyond the snapshot/);
    expect(() => span.checkCompact(10)).not.toThrow();
  });
});
