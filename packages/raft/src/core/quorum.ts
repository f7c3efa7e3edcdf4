// Majority arithmetic for a voter set (Raft 5.2, 5.3).

import { defined } from './assert.js';

/** Votes needed out of `voters` (floor(n/2) + 1); 0 voters need 1 (no quorum is possible). */
export function majority(voters: number): number {
  return Math.floor(voters / 2) + 1;
}

/**
 * The largest value that at least a majority of `values` reach (e.g. the commit index from
 * match indexes, the lease start from acknowledged ticks). Sorts `values` in place. Returns
 * `fallback` when `values` is empty.
 */
export function quorumValue(values: number[], fallback: number): number {
  if (values.length === 0) return fallback;
  values.sort((a, b) => b - a);
  return defined(values[majority(values.length) - 1], 'a majority is within the values');
}

export type VoteResult = 'won' | 'lost' | 'pending';

/** Outcome of an election among `voters` given the responses recorded in `votes`. */
export function tallyVotes(
  voters: readonly string[],
  votes: ReadonlyMap<string, boolean>,
): VoteResult {
  let granted = 0;
  let rejected = 0;
  for (const voter of voters) {
    const vote = votes.get(voter);
    if (vote === true) granted += 1;
    else if (vote === false) rejected += 1;
  }
  const needed = majority(voters.length);
  if (granted >= needed) return 'won';
  if (rejected > voters.length - needed) return 'lost';
  return 'pending';
}
