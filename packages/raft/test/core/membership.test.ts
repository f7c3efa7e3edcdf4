import { describe, expect, it } from 'vitest';
import { ConfChangeType, encodeConfChange, type ConfChange } from '../../src/core/conf-change.js';
import { EMPTY_CONFIG, Membership } from '../../src/core/membership.js';
import { EntryType, type Entry } from '../../src/types.js';

function conf(index: number, change: ConfChange): Entry {
  return { index, term: 1, type: EntryType.ConfChange, data: encodeConfChange(change) };
}

describe('Membership (latest configuration in the log, thesis 4.1)', () => {
  it('takes effect on append, reverts on truncation, folds on compaction', () => {
    const m = new Membership(EMPTY_CONFIG);
    const normal = { index: 2, term: 1, type: EntryType.Normal, data: new Uint8Array() };
    m.onAppend([conf(1, { type: ConfChangeType.AddVoter, node: 'a' }), normal], 0);
    m.onAppend([conf(3, { type: ConfChangeType.AddVoter, node: 'b' })], 3);
    expect(m.current().voters).toEqual(['a', 'b']);
    expect(m.currentIndex(0)).toBe(3);
    expect(m.configAt(2).voters).toEqual(['a']);
    expect(m.onTruncate(3)).toBe(true);
    expect(m.current().voters).toEqual(['a']);
    expect(m.onTruncate(3)).toBe(false);
    m.onCompact(2);
    expect(m.currentIndex(2)).toBe(2);
    expect(m.current().voters).toEqual(['a']);
  });

  it('ignores entries before fromIndex (already in the log)', () => {
    const m = new Membership(EMPTY_CONFIG);
    const entries = [
      conf(1, { type: ConfChangeType.AddVoter, node: 'a' }),
      conf(2, { type: ConfChangeType.AddVoter, node: 'b' }),
    ];
    expect(m.onAppend(entries, 2)).toBe(true);
    expect(m.current().voters).toEqual(['b']);
  });
});
