// Expected operating errors are values of one class carrying the interface's status and kind.
// They are rendered to HTTP in one gateway handler and to gRPC status in one member place.

export type ErrorKind =
  | 'invalid_argument'
  | 'invalid_json'
  | 'unknown_field'
  | 'unknown_header'
  | 'dedup_disabled'
  | 'token_kind'
  | 'unauthenticated'
  | 'account_suspended'
  | 'account_blocked'
  | 'key_blocked'
  | 'queue_limit'
  | 'retention_limit'
  | 'spool_not_found'
  | 'queue_not_found'
  | 'not_found'
  | 'method_not_allowed'
  | 'queue_exists'
  | 'queue_draining'
  | 'queue_deleting'
  | 'conflict'
  | 'dedup_in_flight'
  | 'dedup_claimed'
  | 'message_leased'
  | 'gone'
  | 'length_required'
  | 'message_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'operation_unconfirmed'
  | 'unavailable'
  | 'spool_full'
  | 'storage_full';

/** HTTP status of each kind. `key_blocked` renders as a 403 whose body has no `kind`. */
export const STATUS_OF_KIND: Readonly<Record<ErrorKind, number>> = {
  invalid_argument: 400,
  invalid_json: 400,
  unknown_field: 400,
  unknown_header: 400,
  dedup_disabled: 400,
  token_kind: 400,
  unauthenticated: 401,
  account_suspended: 402,
  account_blocked: 403,
  key_blocked: 403,
  queue_limit: 403,
  retention_limit: 403,
  spool_not_found: 404,
  queue_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  queue_exists: 409,
  queue_draining: 409,
  queue_deleting: 409,
  conflict: 409,
  dedup_in_flight: 409,
  dedup_claimed: 409,
  message_leased: 409,
  gone: 410,
  length_required: 411,
  message_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  operation_unconfirmed: 500,
  unavailable: 503,
  spool_full: 507,
  storage_full: 507,
};

export type GoneReason = 'expired' | 'settled' | 'primary_changed' | 'stale';

export type ErrorDetails = Readonly<Record<string, string | number | boolean>>;

export class MqError extends Error {
  readonly status: number;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = 'MqError';
    this.status = STATUS_OF_KIND[kind];
  }
}

export function invalidArgument(field: string, message: string): MqError {
  return new MqError('invalid_argument', message, { field });
}

export function gone(reason: GoneReason): MqError {
  return new MqError('gone', `token no longer settles anything (${reason})`, { reason });
}

export function isMqError(value: unknown): value is MqError {
  return value instanceof MqError;
}
