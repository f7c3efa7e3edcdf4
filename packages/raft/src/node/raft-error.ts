// Expected failures of RaftNode operations, as values with a stable kind. The gateway maps
// `not_leader` and `busy` to 503 (retry, nothing happened), `leadership_lost` to 500
// operation_unconfirmed (the write may or may not take effect).

import type { NodeId } from '../types.js';

export type RaftErrorKind =
  /** This member is not the leader (or is handing leadership over); nothing was appended. */
  | 'not_leader'
  /** The proposal was appended but leadership was lost before it committed: outcome unknown. */
  | 'leadership_lost'
  /** Too many proposals pending (`proposalsPendingMax`); nothing was appended. */
  | 'busy'
  /** The node was closed (or stopped after a storage failure). */
  | 'closed'
  /** Another membership change is not committed yet; retry later. */
  | 'conf_change_pending'
  /** The membership change does not fit the current configuration. */
  | 'invalid_conf_change'
  /** A new member did not catch up with the log within the allowed rounds. */
  | 'catch_up_failed'
  /** Leadership did not move to the requested member in time. */
  | 'transfer_failed';

export class RaftError extends Error {
  constructor(
    readonly kind: RaftErrorKind,
    message: string,
    /** For `not_leader`: the member believed to lead (null when unknown). */
    readonly leaderId: NodeId | null = null,
  ) {
    super(`raft: ${message}`);
    this.name = 'RaftError';
  }
}

export function isRaftError(value: unknown): value is RaftError {
  return value instanceof RaftError;
}
