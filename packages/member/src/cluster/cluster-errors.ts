// How the cluster's failures reach callers: as MqError values with the interface's kinds. A
// NotPrimaryError (@spoolmq/protocol) marks an answer given before anything was appended, so the
// gateway may try the call on another member (its leader hint, when known, names which).

import { MqError } from '@spoolmq/engine';
import { notPrimaryError as notPrimary } from '@spoolmq/protocol';
import { isRaftError } from '@spoolmq/raft';
import type { MetaResult } from './meta-commands.js';

/**
 * 503 unavailable for a call that reached a member that is not the spool's primary: the
 * protocol's one not-primary construction (`notPrimaryError(spool, leaderId, replicas)`), the
 * hint as typed fields. Re-exported under this name for the cluster's callers.
 */
export { notPrimaryError as notPrimary } from '@spoolmq/protocol';

/** 503 unavailable with no hint: retry later (nothing was appended). */
export function unavailable(message: string): MqError {
  return new MqError('unavailable', message);
}

/**
 * Maps a failed proposal. `accepted`: the proposal was handed to Raft (so it may have been
 * appended). RaftError not_leader -> notPrimary with the hint; busy -> unavailable; closed ->
 * unavailable before acceptance, operation_unconfirmed after (the node closed with the entry
 * possibly appended); leadership_lost -> operation_unconfirmed; anything else (a bug, a storage
 * failure) -> internal when not accepted, operation_unconfirmed when accepted.
 */
export function proposalError(spool: string, error: unknown, accepted: boolean): MqError {
  if (error instanceof MqError) return error;
  if (isRaftError(error)) {
    switch (error.kind) {
      case 'not_leader':
        return notPrimary(spool, error.leaderId);
      case 'busy':
        return unavailable('too many writes pending on the primary; retry');
      case 'leadership_lost':
        return unconfirmed();
      case 'closed':
        return accepted ? unconfirmed() : unavailable('spool replica closed; retry');
      default:
        break;
    }
  }
  return accepted ? unconfirmed() : new MqError('internal', `spool ${spool}: ${String(error)}`);
}

function unconfirmed(): MqError {
  const message = 'the write was accepted but its commit could not be confirmed';
  return new MqError('operation_unconfirmed', message);
}

/** The MqError of a refused metadata proposal about `what` (null for `ok`). */
export function metaError(result: MetaResult, what: string): MqError | null {
  switch (result.kind) {
    case 'ok':
      return null;
    case 'exists':
      return new MqError('conflict', `${what} already exists`);
    case 'not_found':
      return new MqError('not_found', `${what}: not found`);
    case 'limit':
      return new MqError('conflict', `${what}: the ${result.what} limit is reached`, {
        limit: result.what,
      });
    case 'conflict':
      return new MqError('conflict', `${what}: ${result.why}`);
    case 'not_initialized':
      return unavailable('the cluster is not initialized yet; retry');
  }
}
