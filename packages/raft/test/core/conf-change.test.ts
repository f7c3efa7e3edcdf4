import { describe, expect, it } from 'vitest';
import {
  ConfChangeType,
  applyConfChange,
  checkConfChange,
  decodeConfChange,
  encodeConfChange,
  sameConfig,
} from '../../src/core/conf-change.js';

const base = { voters: ['a', 'b', 'c'], learners: ['l'] };

describe('conf change encoding', () => {
  it('round-trips every type and rejects malformed data', () => {
    for (const type of [
      ConfChangeType.AddVoter,
      ConfChangeType.AddLearner,
      ConfChangeType.RemoveMember,
      ConfChangeType.PromoteLearner,
    ]) {
      const change = { type, node: 'member-ü2' };
      expect(decodeConfChange(encodeConfChange(change))).toEqual(change);
    }
    expect(() => decodeConfChange(new Uint8Array([1, 0]))).toThrow(RangeError);
    expect(() => decodeConfChange(new Uint8Array([2, 0, 65]))).toThrow(RangeError);
    expect(() => decodeConfChange(new Uint8Array([1, 9, 65]))).toThrow(/unknown/);
    expect(() => encodeConfChange({ type: ConfChangeType.AddVoter, node: '' })).toThrow(RangeError);
  });
});

describe('applyConfChange (deterministic on every replica)', () => {
  it('adds, promotes and removes single servers', () => {
    expect(
      applyConfChange(base, { type: ConfChangeType.AddVoter, node: 'd' }).voters,
    ).toEqual(['a', 'b', 'c', 'd']);
    expect(applyConfChange(base, { type: ConfChangeType.PromoteLearner, node: 'l' })).toEqual({
      voters: ['a', 'b', 'c', 'l'],
      learners: [],
    });
    expect(
      applyConfChange(base, { type: ConfChangeType.AddVoter, node: 'l' }).learners,
    ).toEqual([]);
    expect(
      applyConfChange(base, { type: ConfChangeType.RemoveMember, node: 'b' }).voters,
    ).toEqual(['a', 'c']);
    expect(
      applyConfChange(base, { type: ConfChangeType.RemoveMember, node: 'l' }).learners,
    ).toEqual([]);
  });

  it('leaves the configuration alone for changes that do not apply', () => {
    expect(applyConfChange(base, { type: ConfChangeType.AddVoter, node: 'a' })).toBe(base);
    expect(applyConfChange(base, { type: ConfChangeType.AddLearner, node: 'a' })).toBe(base);
    expect(applyConfChange(base, { type: ConfChangeType.PromoteLearner, node: 'z' })).toBe(base);
    expect(
      sameConfig(applyConfChange(base, { type: ConfChangeType.RemoveMember, node: 'z' }), base),
    ).toBe(true);
  });
});

describe('checkConfChange (leader-side validation)', () => {
  it('refuses changes that do not fit the current configuration', () => {
    expect(
      checkConfChange(base, { type: ConfChangeType.AddVoter, node: 'a' }),
    ).toMatch(/already a voter/);
    expect(
      checkConfChange(base, { type: ConfChangeType.AddLearner, node: 'l' }),
    ).toMatch(/already a member/);
    expect(
      checkConfChange(base, { type: ConfChangeType.PromoteLearner, node: 'a' }),
    ).toMatch(/not a learner/);
    expect(
      checkConfChange(base, { type: ConfChangeType.RemoveMember, node: 'z' }),
    ).toMatch(/not a member/);
    const lone = { voters: ['a'], learners: [] };
    const removeA = { type: ConfChangeType.RemoveMember, node: 'a' };
    expect(checkConfChange(lone, removeA)).toMatch(/last voter/);
    expect(checkConfChange(base, { type: ConfChangeType.AddLearner, node: 'd' })).toBeNull();
  });
});
