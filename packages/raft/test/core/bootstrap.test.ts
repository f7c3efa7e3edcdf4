import { describe, expect, it } from 'vitest';
import { bootstrapState, isEmptyState } from '../../src/core/bootstrap.js';
import { ConfChangeType, decodeConfChange } from '../../src/core/conf-change.js';

describe('bootstrapState', () => {
  it('writes the founding voters as committed AddVoter entries, sorted', () => {
    const state = bootstrapState(['n3', 'n1', 'n2']);
    expect(state.hardState).toEqual({ term: 1, vote: null, commit: 3 });
    expect(state.entries.map((e) => [e.index, e.term])).toEqual([[1, 1], [2, 1], [3, 1]]);
    expect(state.entries.map((e) => decodeConfChange(e.data))).toEqual(
      ['n1', 'n2', 'n3'].map((node) => ({ type: ConfChangeType.AddVoter, node })),
    );
    expect(isEmptyState(state)).toBe(false);
    expect(
      isEmptyState({ hardState: { term: 0, vote: null, commit: 0 }, snapshot: null, entries: [] }),
    ).toBe(true);
  });

  it('refuses an empty or duplicated voter list', () => {
    expect(() => bootstrapState([])).toThrow(RangeError);
    expect(() => bootstrapState(['a', 'a'])).toThrow(/duplicate/);
  });
});
