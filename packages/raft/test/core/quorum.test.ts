import { describe, expect, it } from 'vitest';
import { majority, quorumValue, tallyVotes } from '../../src/core/quorum.js';

describe('quorum arithmetic', () => {
  it('majority of n is floor(n/2) + 1', () => {
    expect([1, 2, 3, 4, 5, 7].map(majority)).toEqual([1, 2, 2, 3, 3, 4]);
  });

  it('quorumValue is the highest value a majority reaches', () => {
    expect(quorumValue([5, 9, 7], 0)).toBe(7);
    expect(quorumValue([5, 9, 7, 1], 0)).toBe(5);
    expect(quorumValue([3], 0)).toBe(3);
    expect(quorumValue([], 42)).toBe(42);
  });

  it('tallies an election: won, lost or still open', () => {
    const voters = ['a', 'b', 'c', 'd', 'e'];
    expect(tallyVotes(voters, new Map([['a', true], ['b', true]]))).toBe('pending');
    expect(
      tallyVotes(voters, new Map([['a', true], ['b', true], ['z', true], ['c', true]])),
    ).toBe('won');
    expect(
      tallyVotes(voters, new Map([['a', true], ['b', false], ['c', false], ['d', false]])),
    ).toBe('lost');
    expect(tallyVotes(voters, new Map([['z', true], ['y', true], ['x', true]]))).toBe('pending');
  });
});
