// A scripted stand-in for fetch: each call takes the next step of the script, which answers
// with a Response or throws (a connection failure). Every request is recorded for assertions.

import type { FetchFn } from '../src/index.js';

export interface RecordedRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array | undefined;
}

export type Step = (request: RecordedRequest) => Response;

export interface FakeFetch {
  readonly fetch: FetchFn;
  readonly requests: RecordedRequest[];
  /** Steps not yet used. */
  remaining(): number;
}

export function fakeFetch(steps: readonly Step[]): FakeFetch {
  const requests: RecordedRequest[] = [];
  let next = 0;
  const fetch: FetchFn = async (input, init) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries((init.headers ?? {}) as Record<string, string>)) {
      headers[name.toLowerCase()] = value;
    }
    const body = init.body;
    const request: RecordedRequest = {
      url: input,
      method: init.method ?? 'GET',
      headers,
      body: typeof body === 'string' ? new TextEncoder().encode(body) : (body as Uint8Array | undefined),
    };
    requests.push(request);
    const step = steps[next];
    next += 1;
    if (step === undefined) throw new Error(`fake fetch: no step for request ${requests.length}`);
    return step(request);
  };
  return { fetch, requests, remaining: () => steps.length - next };
}

export function reply(status: number, headers: Record<string, string> = {}, body?: string): Step {
  return () => new Response(status === 204 ? null : (body ?? null), { status, headers });
}

export function errorReply(status: number, kind: string | undefined, headers: Record<string, string> = {}): Step {
  const body = JSON.stringify(kind === undefined ? { message: 'no' } : { kind, message: kind, details: {} });
  return reply(status, { 'content-type': 'application/json', ...headers }, body);
}

export function created(messageId: string): Step {
  return reply(201, { 'svc-message-id': messageId });
}

export function noResponse(): Step {
  return () => {
    throw new TypeError('fetch failed', { cause: new Error('ECONNRESET') });
  };
}

export function queueJson(name: string, dedupWindowSeconds: number): Step {
  const queue = {
    name,
    createdAt: '2026-01-01T00:00:00.000Z',
    state: 'active',
    settings: {
      leaseTimeoutSeconds: 300,
      maxRetries: 10,
      dedupWindowSeconds,
      retentionSeconds: 345600,
      effectiveRetentionSeconds: 345600,
      recvRateLimit: { intervalMicros: 0, burst: 0 },
    },
  };
  return reply(200, { 'content-type': 'application/json' }, JSON.stringify(queue));
}
