// The initial state of a brand-new group. Like etcd's StartNode(peers), the founding
// configuration is written into the log as ConfChange entries 1..n of term 1, already
// committed, so that members added later learn the whole membership history from the log (or a
// snapshot) instead of from out-of-band configuration.

import { EntryType, type Entry, type NodeId, type RestoredState } from '../types.js';
import { ConfChangeType, encodeConfChange } from './conf-change.js';

/**
 * The state every founding member starts from: one AddVoter entry per voter, sorted by id so
 * that every member writes the same log. Throws `RangeError` on an empty or duplicated list.
 */
export function bootstrapState(voters: readonly NodeId[]): RestoredState {
  const sorted = [...voters].sort();
  if (sorted.length === 0) throw new RangeError('raft: bootstrap needs at least one voter');
  for (let i = 1; i < sorted.length; i += 1) {
    if (sorted[i] === sorted[i - 1]) throw new RangeError(`raft: duplicate voter ${sorted[i]}`);
  }
  const entries: Entry[] = sorted.map((node, i) => ({
    index: i + 1,
    term: 1,
    type: EntryType.ConfChange,
    data: encodeConfChange({ type: ConfChangeType.AddVoter, node }),
  }));
  return {
    hardState: { term: 1, vote: null, commit: entries.length },
    snapshot: null,
    entries,
  };
}

/** True when a restored state holds nothing: the member has never been part of the group. */
export function isEmptyState(state: RestoredState): boolean {
  return state.snapshot === null && state.entries.length === 0 && state.hardState.term === 0;
}
