// Failures a client call can end in, as values callers match on. An answered request that
// failed is an `MqClientError` (it has a status); a request that got no answer is an
// `MqTransportError` (no status: the server may or may not have acted on it).

export type ErrorDetails = Readonly<Record<string, unknown>>;

/**
 * The error kinds the service answers with, for matching on `MqClientError.kind` (a newer server
 * may send others, so `kind` stays a string). `storage_full` (507, with `Retry-After`): the
 * member's data volume is below its free-space reserve; sends and queue creation are refused
 * before anything is appended until space is freed, while receive, ack and delete go on.
 * `spool_full` (507, no `Retry-After`): the spool is at its plan's cap.
 */
export const ERROR_KINDS = [
  'invalid_argument',
  'invalid_json',
  'unknown_field',
  'unknown_header',
  'dedup_disabled',
  'token_kind',
  'unauthenticated',
  'account_suspended',
  'account_blocked',
  'queue_limit',
  'retention_limit',
  'spool_not_found',
  'queue_not_found',
  'not_found',
  'method_not_allowed',
  'queue_exists',
  'queue_draining',
  'queue_deleting',
  'conflict',
  'dedup_in_flight',
  'dedup_claimed',
  'message_leased',
  'gone',
  'length_required',
  'message_too_large',
  'unsupported_media_type',
  'rate_limited',
  'internal',
  'operation_unconfirmed',
  'unavailable',
  'spool_full',
  'storage_full',
] as const;

export type MqErrorKind = (typeof ERROR_KINDS)[number];

/** Whether `kind` is one this client knows (see ERROR_KINDS). */
export function isKnownErrorKind(kind: string | undefined): kind is MqErrorKind {
  return kind !== undefined && (ERROR_KINDS as readonly string[]).includes(kind);
}

/** The server answered with an error status. Match on `status`, `kind` and `details`. */
export class MqClientError extends Error {
  readonly transport = false as const;

  constructor(
    /** HTTP status, 400-599. */
    readonly status: number,
    /** The body's `kind`; undefined when the body has none (a 403 for a blocked key). */
    readonly kind: string | undefined,
    message: string,
    readonly details: ErrorDetails = {},
    /**
     * Whole seconds from `Retry-After` (429, 503, 507 storage_full); undefined when absent or
     * unparsable.
     */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'MqClientError';
  }
}

/** No response arrived: connection refused or reset, DNS failure, body cut off mid-way. */
export class MqTransportError extends Error {
  readonly transport = true as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MqTransportError';
  }
}

export type MqFailure = MqClientError | MqTransportError;

export function isMqClientError(value: unknown): value is MqClientError {
  return value instanceof MqClientError;
}

export function isMqTransportError(value: unknown): value is MqTransportError {
  return value instanceof MqTransportError;
}

/**
 * Builds the error for a non-2xx response from its status, headers and body text. A body that
 * is not the JSON error shape still yields an error, with the text as its message.
 */
export function errorFromResponse(
  status: number,
  headers: Headers,
  bodyText: string,
): MqClientError {
  let kind: string | undefined;
  let message = bodyText === '' ? `HTTP ${status}` : bodyText;
  let details: ErrorDetails = {};
  if (bodyText !== '') {
    const parsed = parseJsonObject(bodyText);
    if (parsed !== undefined) {
      if (typeof parsed['kind'] === 'string') kind = parsed['kind'];
      if (typeof parsed['message'] === 'string') message = parsed['message'];
      const rawDetails = parsed['details'];
      if (rawDetails !== null && typeof rawDetails === 'object' && !Array.isArray(rawDetails)) {
        details = rawDetails as ErrorDetails;
      }
    }
  }
  const retryAfterSeconds = parseRetryAfter(headers.get('retry-after'));
  return new MqClientError(status, kind, message, details, retryAfterSeconds);
}

/** `Retry-After` in its delay-seconds form; the interface never sends an HTTP-date. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\d{1,9}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): the caller keeps the raw text as the message.
  }
  return undefined;
}
