// Failures a client call can end in, as values callers match on. An answered request that
// failed is an `MqClientError` (it has a status); a request that got no answer is an
// `MqTransportError` (no status: the server may or may not have acted on it).

export type ErrorDetails = Readonly<Record<string, unknown>>;

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
    /** Whole seconds from `Retry-After` (429, 503); undefined when absent or unparsable. */
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
