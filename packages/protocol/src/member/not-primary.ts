// The one answer a member gives when it is not the spool's primary: 503 `unavailable` with
// details `{notPrimary: true, leaderId?, replicas?}` — `leaderId` the member it believes is the
// primary, `replicas` (comma-separated ids) the members holding the spool when it holds none.
// Nothing was changed, so the gateway may retry the call on another member; these routing
// details never reach an HTTP client.

import { MqError, type ErrorDetails } from '@spoolmq/engine';

/** Details a member adds for routing; removed before an error reaches a client. */
const ROUTING_DETAILS = ['notPrimary', 'leaderId', 'replicas'] as const;

export interface NotPrimaryHint {
  /** The member named as primary, or null when the answer named none. */
  readonly leaderId: string | null;
  /** Members said to hold the spool (possibly empty). */
  readonly replicas: readonly string[];
}

/**
 * The error a member rejects with when it is not `spool`'s primary. `leaderId`: the primary when
 * known. `replicas`: the members holding the spool, for a member that holds none of it.
 */
export function notPrimaryError(
  spool: string,
  leaderId?: string,
  replicas?: readonly string[],
): MqError {
  const details: Record<string, string | boolean> = { notPrimary: true };
  if (leaderId !== undefined) details['leaderId'] = leaderId;
  if (replicas !== undefined) details['replicas'] = replicas.join(',');
  return new MqError('unavailable', `this member is not the primary of spool ${spool}`, details);
}

/** The routing hint of a not-primary answer; undefined for any other error. */
export function notPrimaryHint(error: MqError): NotPrimaryHint | undefined {
  if (error.kind !== 'unavailable' || error.details['notPrimary'] !== true) return undefined;
  const leaderId = error.details['leaderId'];
  const replicas = error.details['replicas'];
  return {
    leaderId: typeof leaderId === 'string' && leaderId.length > 0 ? leaderId : null,
    replicas: typeof replicas === 'string' && replicas.length > 0 ? replicas.split(',') : [],
  };
}

/** `error` without the routing details: what a client may see. */
export function withoutRoutingDetails(error: MqError): MqError {
  if (!ROUTING_DETAILS.some((key) => key in error.details)) return error;
  const details: Record<string, string | number | boolean> = { ...error.details };
  for (const key of ROUTING_DETAILS) delete details[key];
  return new MqError(error.kind, error.message, details as ErrorDetails);
}
