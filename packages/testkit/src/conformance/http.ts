// A raw HTTP/1.1 client for the conformance suite. It is built on node:http rather than fetch
// because the suite must control the wire exactly: omit Content-Length, send a chunked body,
// repeat a header, or send headers alone and read the answer without ever writing the body.

import http from 'node:http';
import type { Exchange, ExchangeRequest } from '../openapi/exchange.js';

/** How the request body is framed on the wire. */
export type BodyFraming =
  /** `Content-Length` set to the body's byte length (0 when there is no body). */
  | 'length'
  /** Neither `Content-Length` nor `Transfer-Encoding`: the request has no framing at all. */
  | 'none'
  /** `Transfer-Encoding: chunked`, no `Content-Length`. */
  | 'chunked';

export interface RawRequest {
  readonly method: string;
  /** Absolute URL, query string included. */
  readonly url: string;
  /** A string[] value sends the header once per element (a repeated header). */
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: Uint8Array | string;
  /** Default `length`. */
  readonly framing?: BodyFraming;
}

export interface RawResponse {
  readonly status: number;
  /** Lower-cased names, as node:http reports them. */
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Upper bound on any single exchange: a hung server fails the test rather than the run. */
const exchangeTimeoutMs = 30_000;

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

/** Sees every completed exchange. Throwing fails it: the caller's promise rejects instead. */
export type ExchangeObserver = (exchange: Exchange) => void;

const observers = new Set<ExchangeObserver>();

/**
 * Hands every exchange completed from now on to `observer` (the OpenAPI check of the suite);
 * returns the function that stops it.
 */
export function observeExchanges(observer: ExchangeObserver): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

function observed(request: ExchangeRequest, response: RawResponse): RawResponse {
  for (const observer of observers) observer({ request, response });
  return response;
}

function bodyBytes(body: Uint8Array | string | undefined): Uint8Array {
  if (body === undefined) return new Uint8Array(0);
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

function applyHeaders(req: http.ClientRequest, headers: RawRequest['headers']): void {
  if (headers === undefined) return;
  for (const [name, value] of Object.entries(headers)) {
    req.setHeader(name, typeof value === 'string' ? value : [...value]);
  }
}

function readResponse(res: http.IncomingMessage): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('error', reject);
    res.on('end', () => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
    });
  });
}

/** An exchange in progress: its eventual response, and a way to drop the connection. */
export interface PendingExchange {
  /** Rejects when the exchange fails, including after `abort()`. */
  readonly response: Promise<RawResponse>;
  /** Destroys the connection, as a client that went away would. */
  abort(): void;
}

/**
 * Starts one exchange; the response promise resolves with the whole body read.
 * It rejects on a network error, on `abort()`, or when no complete answer arrives within 30 s.
 */
export function startRequest(request: RawRequest): PendingExchange {
  const framing = request.framing ?? 'length';
  const bytes = bodyBytes(request.body);
  const req = http.request(request.url, { method: request.method, agent });
  const sent: ExchangeRequest = {
    method: request.method,
    url: request.url,
    headers: request.headers ?? {},
    body: bytes,
    contentLength: framing === 'length' ? bytes.byteLength : undefined,
  };
  const response = new Promise<RawResponse>((resolve, reject) => {
    req.setTimeout(exchangeTimeoutMs, () => req.destroy(new Error('exchange timed out')));
    req.on('error', reject);
    req.on('response', (res) => readResponse(res).then(resolve, reject));
  }).then((raw) => observed(sent, raw));
  try {
    applyHeaders(req, request.headers);
  } catch (error) {
    // node refuses some header values outright; drop the half-built request quietly.
    void response.catch(() => undefined);
    req.destroy();
    throw error;
  }
  if (framing === 'length') {
    req.setHeader('Content-Length', String(bytes.byteLength));
    req.end(bytes);
  } else if (framing === 'chunked') {
    req.setHeader('Transfer-Encoding', 'chunked');
    if (bytes.byteLength > 0) req.write(bytes);
    req.end();
  } else {
    // node adds `Content-Length: 0` on end() unless the header was explicitly removed.
    req.removeHeader('Content-Length');
    req.useChunkedEncodingByDefault = false;
    req.end();
  }
  return { response, abort: () => req.destroy(new Error('aborted by the test')) };
}

/**
 * Performs one exchange and reads the whole response body.
 * Rejects on a network error or when no complete answer arrives within 30 s.
 */
export function rawRequest(request: RawRequest): Promise<RawResponse> {
  return startRequest(request).response;
}

/**
 * Sends the request line and headers (with the given Content-Length) but never a byte of the
 * body, then waits for the server's answer. This proves an answer is given from the headers
 * alone: a server that reads the body first would wait until the 30 s bound and fail.
 * The connection is destroyed afterwards since its body was never completed.
 */
export function headersOnlyRequest(
  request: Omit<RawRequest, 'body' | 'framing'> & { readonly contentLength: number },
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    // A private connection: it cannot be reused after an unfinished body.
    const req = http.request(request.url, { method: request.method, agent: false });
    try {
      applyHeaders(req, request.headers);
    } catch (error) {
      req.on('error', () => undefined);
      req.destroy();
      throw error;
    }
    const timer = setTimeout(
      () => req.destroy(new Error('no answer to headers')),
      exchangeTimeoutMs,
    );
    req.setHeader('Content-Length', String(request.contentLength));
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    const sent: ExchangeRequest = {
      method: request.method,
      url: request.url,
      headers: request.headers ?? {},
      body: undefined,
      contentLength: request.contentLength,
    };
    req.on('response', (res) => {
      readResponse(res).then(
        (response) => {
          clearTimeout(timer);
          req.destroy();
          try {
            resolve(observed(sent, response));
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
    req.flushHeaders();
  });
}

/** Parses a response body as JSON; throws with the raw text when it is not JSON. */
export function jsonBody(response: RawResponse): unknown {
  const text = response.body.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`expected a JSON body, got status ${response.status}: ${text.slice(0, 200)}`);
  }
}

/** The single value of a response header; throws when it is repeated. */
export function header(response: RawResponse, name: string): string | undefined {
  const value = response.headers[name.toLowerCase()];
  if (Array.isArray(value)) throw new Error(`header ${name} repeated: ${value.join(' | ')}`);
  return value;
}
