// One HTTP exchange with the service: builds the URL and headers, maps a non-2xx answer to an
// `MqClientError` and a missing answer to an `MqTransportError`. No retries here; the send
// retry rules live in send-retry.ts and are applied by the client.

import { MqTransportError, errorFromResponse } from './errors.js';

export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;

export type QueryValue = string | number | boolean | readonly string[] | undefined;

export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path below the base URL, starting with `/`, segments already encoded. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>>;
  readonly headers?: Readonly<Record<string, string>>;
  /** Raw bytes (sent as application/octet-stream) or a JSON value. */
  readonly body?: { readonly bytes: Uint8Array } | { readonly json: unknown };
  readonly signal?: AbortSignal;
}

export interface HttpAnswer {
  /** 2xx only; anything else was thrown as an error. */
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
}

const EMPTY = new Uint8Array(0);

export class HttpTransport {
  private readonly baseUrl: string;
  private readonly authorization: string;

  constructor(
    baseUrl: string,
    apiKey: string,
    private readonly fetchFn: FetchFn,
  ) {
    this.baseUrl = normalizeBaseUrl(baseUrl);
    this.authorization = `Bearer ${apiKey}`;
  }

  /**
   * Performs one request. Resolves with a 2xx answer (body fully read). Rejects with
   * `MqClientError` for any other status, `MqTransportError` when no complete answer arrived,
   * or the signal's reason when the caller's signal aborted it.
   */
  async request(req: HttpRequest): Promise<HttpAnswer> {
    const headers: Record<string, string> = { authorization: this.authorization, ...req.headers };
    let body: Uint8Array | string | undefined;
    if (req.body !== undefined) {
      if ('bytes' in req.body) {
        headers['content-type'] = 'application/octet-stream';
        body = req.body.bytes;
      } else {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(req.body.json);
      }
    }
    const url = this.baseUrl + req.path + encodeQuery(req.query);
    let response: Response;
    let bytes: Uint8Array;
    try {
      response = await this.fetchFn(url, { method: req.method, headers, body, signal: req.signal });
      bytes = response.status === 204 ? await drain(response) : await readAll(response);
    } catch (error) {
      if (req.signal?.aborted === true) throw req.signal.reason;
      throw new MqTransportError(`${req.method} ${req.path}: no response (${describe(error)})`, {
        cause: error,
      });
    }
    if (response.status < 200 || response.status > 299) {
      throw errorFromResponse(response.status, response.headers, new TextDecoder().decode(bytes));
    }
    return { status: response.status, headers: response.headers, body: bytes };
  }
}

/** Accepts `http://host:port/v1` as given; a bare `http://host:port` gets `/v1` appended. */
export function normalizeBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/v1' : path;
  return url.toString().replace(/\/+$/, '');
}

/** Encodes a name as one path segment; `:` stays literal since names allow it. */
export function segment(name: string): string {
  return encodeURIComponent(name).replace(/%3A/gi, ':');
}

function encodeQuery(query: HttpRequest['query']): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) {
      for (const item of value as readonly string[]) params.append(key, item);
    } else {
      params.append(key, String(value));
    }
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

async function readAll(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

async function drain(response: Response): Promise<Uint8Array> {
  // A 204 has no body, but reading it releases the connection back to the pool at once.
  if (response.body !== null) await response.arrayBuffer();
  return EMPTY;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
  }
  return String(error);
}
