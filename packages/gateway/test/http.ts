// Request helpers for app.request() tests: a bearer key by default, headers as a list so a test
// can send one twice (through a raw-header env, as @hono/node-server would show it).

import type { Hono } from 'hono';
import { expect } from 'vitest';

export interface CallOptions {
  /** Header pairs in order; duplicates allowed. */
  readonly headers?: readonly (readonly [string, string])[];
  readonly body?: Uint8Array | string;
  /** Omit the default Authorization header. */
  readonly noAuth?: boolean;
  readonly signal?: AbortSignal;
  /** Pass the header list as Node's rawHeaders (how the server sees repetition). */
  readonly rawHeaders?: boolean;
}

export const KEY = 'test-key-1';

export function call(
  app: Hono,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Response> {
  const pairs: (readonly [string, string])[] = [];
  if (options.noAuth !== true) pairs.push(['Authorization', `Bearer ${KEY}`]);
  pairs.push(...(options.headers ?? []));
  const headers = new Headers();
  for (const [name, value] of pairs) headers.append(name, value);
  const init: RequestInit = { method, headers };
  if (options.body !== undefined) {
    init.body = options.body as RequestInit['body'];
    (init as { duplex?: string }).duplex = 'half';
  }
  if (options.signal !== undefined) init.signal = options.signal;
  const env = options.rawHeaders === true ? { incoming: { rawHeaders: pairs.flat() } } : undefined;
  return Promise.resolve(app.request(`http://gateway.test${path}`, init, env));
}

/** A body with an explicit Content-Length, as a real client sends it. */
export function withLength(body: Uint8Array | string): CallOptions['headers'] & object {
  const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  return [['Content-Length', String(length)]];
}

export async function errorOf(response: Response): Promise<{ kind?: string; message: string; details: Record<string, unknown> }> {
  expect(response.headers.get('content-type')).toBe('application/json');
  return (await response.json()) as { kind?: string; message: string; details: Record<string, unknown> };
}
