// One HTTP exchange as the conformance client put it on the wire and read the answer: what the
// OpenAPI checker judges.

export interface ExchangeRequest {
  readonly method: string;
  /** Absolute URL, query string included. */
  readonly url: string;
  /** Headers as given by the caller; an array value was sent once per element. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  /** The body bytes; undefined when the client sent headers alone and never the body. */
  readonly body: Uint8Array | undefined;
  /** The Content-Length on the wire; undefined when there was none (unframed or chunked). */
  readonly contentLength: number | undefined;
}

export interface ExchangeResponse {
  readonly status: number;
  /** Lower-case names, as node:http reports them. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Uint8Array;
}

export interface Exchange {
  readonly request: ExchangeRequest;
  readonly response: ExchangeResponse;
}

/** Every value of a request header, whatever the case of its name. */
export function requestHeaderValues(request: ExchangeRequest, name: string): string[] {
  const lower = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(request.headers)) {
    if (key.toLowerCase() !== lower) continue;
    if (typeof value === 'string') values.push(value);
    else values.push(...value);
  }
  return values;
}

/** The media type of a Content-Type value, lower case, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}
