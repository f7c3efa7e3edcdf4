// The one answer a member gives when it is not the spool's primary: a `NotPrimaryError`, 503
// `unavailable` carrying the routing hint as typed fields: `leaderId`, the member it believes is
// the primary, and `replicas`, the members holding the spool when it holds none. Nothing was
// changed, so the gateway may retry the call on another member. On the wire it is an `Error`
// with its `not_primary` field set (proto/member.proto); an older peer that does not know the
// field sees a plain 503, which it also retries elsewhere, just without the hint. The hint never
// reaches an HTTP client: the gateway follows it and answers with the primary's answer.

import { MqError } from '@spoolmq/engine';

export class NotPrimaryError extends MqError {
  /**
   * `leaderId`: the member named as primary, or null when none is known. `replicas`: members
   * said to hold the spool (possibly empty).
   */
  constructor(
    message: string,
    readonly leaderId: string | null,
    readonly replicas: readonly string[],
  ) {
    super('unavailable', message);
    this.name = 'NotPrimaryError';
  }
}

/**
 * The error a member rejects with when it is not `spool`'s primary: the one place it is built.
 * `leaderId`: the primary when known. `replicas`: the members holding the spool, for a member
 * that holds none of it.
 */
export function notPrimaryError(
  spool: string,
  leaderId?: string | null,
  replicas: readonly string[] = [],
): NotPrimaryError {
  const leader = leaderId ?? null;
  const where = leader === null ? 'primary unknown' : `primary is ${leader}`;
  const message = `this member is not the primary of spool ${spool} (${where})`;
  return new NotPrimaryError(message, leader, replicas);
}

/** Whether `error` is a not-primary answer (and so carries a routing hint). */
export function isNotPrimary(error: unknown): error is NotPrimaryError {
  return error instanceof NotPrimaryError;
}
