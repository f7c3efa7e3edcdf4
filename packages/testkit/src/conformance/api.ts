// The suite's view of the /v1 API: thin helpers that build requests from the interface's
// paths and headers. Helpers named `...Ok` assert the success status the spec gives and return
// what later steps need; the others return the raw response for the test to judge.

import { expect } from 'vitest';
import {
  header,
  jsonBody,
  rawRequest,
  startRequest,
  type BodyFraming,
  type PendingExchange,
  type RawResponse,
} from './http.js';
import {
  describeResponse,
  expectStatsShape,
  expectStatus,
  tokenPattern,
  type Stats,
} from './expectations.js';
import {
  capabilitiesOf,
  rootUrlOf,
  type ConformanceCapabilities,
  type ConformanceTarget,
} from './target.js';

export type Headers = Readonly<Record<string, string | readonly string[]>>;

export interface CallOptions {
  readonly headers?: Headers;
  readonly body?: Uint8Array | string;
  readonly framing?: BodyFraming;
  /** `false` sends no Authorization header; a string replaces the whole header value. */
  readonly auth?: boolean | string;
}

export interface Delivery {
  readonly payload: Buffer;
  readonly lease: string;
  readonly messageId: string;
  readonly retries: number;
  readonly leaseExpiresAt: string | undefined;
  readonly response: RawResponse;
}

export interface MessageItem {
  readonly id: string;
  readonly state: string;
  readonly retries: number;
  readonly createdAt: string;
  readonly visibleAt?: string;
  readonly leaseExpiresAt?: string;
  readonly expiresAt?: string;
  readonly handle?: string;
}

export interface Page<T> {
  readonly items: T[];
  readonly next?: string;
}

export interface QueueObject {
  readonly name: string;
  readonly createdAt: string;
  readonly state: string;
  readonly settings: Record<string, unknown>;
}

/** Spool-scoped token operations: the token already names the queue. */
export type SpoolTokenOp =
  | 'ack'
  | 'nack'
  | 'release'
  | 'fail'
  | 'renew'
  | 'recover'
  | 'discard'
  | 'peek'
  | 'inspect';

export class Api {
  readonly capabilities: ConformanceCapabilities;
  /** Every queue this client created (PUT answered 201), for cleanup after the suite. */
  private readonly createdQueues = new Set<string>();

  constructor(readonly target: ConformanceTarget) {
    this.capabilities = capabilitiesOf(target);
  }

  get spool(): string {
    return this.target.spool;
  }

  /** Full URL of a path under the base URL (path starts with `/`). */
  url(path: string): string {
    return `${this.target.baseUrl.replace(/\/$/, '')}${path}`;
  }

  /** Full URL of a path under the root (health, metrics, paths outside /v1). */
  rootUrl(path: string): string {
    return `${rootUrlOf(this.target)}${path}`;
  }

  spoolPath(rest = ''): string {
    return `/spools/${this.spool}${rest}`;
  }

  queuePath(queue: string, rest = ''): string {
    return `/spools/${this.spool}/queues/${queue}${rest}`;
  }

  /** One request to `path` under the base URL, authenticated unless `auth: false`. */
  call(method: string, path: string, options: CallOptions = {}): Promise<RawResponse> {
    return this.callUrl(method, this.url(path), options);
  }

  callUrl(method: string, url: string, options: CallOptions = {}): Promise<RawResponse> {
    const headers: Record<string, string | readonly string[]> = { ...options.headers };
    const auth = options.auth ?? true;
    if (auth === true) headers.Authorization = `Bearer ${this.target.apiKey}`;
    else if (typeof auth === 'string') headers.Authorization = auth;
    return rawRequest({
      method,
      url,
      headers,
      ...(options.body !== undefined ? { body: options.body } : {}),
      ...(options.framing !== undefined ? { framing: options.framing } : {}),
    });
  }

  /** A JSON request body with its content type. */
  jsonCall(
    method: string,
    path: string,
    body: unknown,
    headers: Headers = {},
  ): Promise<RawResponse> {
    return this.call(method, path, {
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  }

  // Queues ------------------------------------------------------------------------------------

  /** PUT with an optional JSON body; no body at all when `settings` is undefined. */
  async putQueue(queue: string, settings?: unknown): Promise<RawResponse> {
    const response =
      settings === undefined
        ? await this.call('PUT', this.queuePath(queue))
        : await this.jsonCall('PUT', this.queuePath(queue), settings);
    if (response.status === 201) this.createdQueues.add(queue);
    return response;
  }

  /**
   * Force-deletes every queue this client created that still exists, so a long-lived target
   * does not accumulate the suite's queues run after run. Returns how many were deleted.
   */
  async deleteCreatedQueues(): Promise<number> {
    let deleted = 0;
    for (const queue of this.createdQueues) {
      const response = await this.deleteQueue(queue, 'force');
      if (response.status === 204 || response.status === 202) deleted += 1;
    }
    this.createdQueues.clear();
    return deleted;
  }

  /** Creates a fresh queue (asserting 201) and returns its name. */
  async createQueue(settings?: Record<string, unknown>, name?: string): Promise<string> {
    const queue = name ?? this.target.newQueueName();
    const response = await this.putQueue(queue, settings);
    expectStatus(response, 201);
    return queue;
  }

  patchQueue(queue: string, patch: unknown): Promise<RawResponse> {
    return this.jsonCall('PATCH', this.queuePath(queue), patch);
  }

  describeQueue(queue: string): Promise<RawResponse> {
    return this.call('GET', this.queuePath(queue));
  }

  async describeQueueOk(queue: string): Promise<QueueObject> {
    const response = await this.describeQueue(queue);
    expectStatus(response, 200);
    return jsonBody(response) as QueueObject;
  }

  deleteQueue(queue: string, mode?: string): Promise<RawResponse> {
    const query = mode === undefined ? '' : `?mode=${mode}`;
    return this.call('DELETE', this.queuePath(queue, query));
  }

  // Messages ----------------------------------------------------------------------------------

  send(
    queue: string,
    payload: Uint8Array | string,
    headers: Headers = {},
    query = '',
  ): Promise<RawResponse> {
    return this.call('POST', this.queuePath(queue, `/send${query}`), {
      headers: { 'Content-Type': 'application/octet-stream', ...headers },
      body: payload,
    });
  }

  /** Sends (asserting 201) and returns the message id. */
  async sendOk(
    queue: string,
    payload: Uint8Array | string,
    headers: Headers = {},
  ): Promise<string> {
    const response = await this.send(queue, payload, headers);
    expectStatus(response, 201);
    const id = header(response, 'svc-message-id');
    expect(id, describeResponse(response)).toBeTruthy();
    return id as string;
  }

  /** Sends with `handle=true` (asserting 201) and returns the message id and its send handle. */
  async sendWithHandle(
    queue: string,
    payload: Uint8Array | string,
    headers: Headers = {},
  ): Promise<{ messageId: string; handle: string }> {
    const response = await this.send(queue, payload, headers, '?handle=true');
    expectStatus(response, 201);
    const handle = header(response, 'svc-handle') ?? '';
    expect(handle, describeResponse(response)).toMatch(tokenPattern);
    return { messageId: header(response, 'svc-message-id') ?? '', handle };
  }

  /** `waitSeconds: null` omits the parameter (the server then waits its maximum). */
  recv(
    queue: string,
    waitSeconds: number | string | null = 0,
    headers: Headers = {},
  ): Promise<RawResponse> {
    const query = waitSeconds === null ? '' : `?waitSeconds=${waitSeconds}`;
    return this.call('POST', this.queuePath(queue, `/recv${query}`), { headers });
  }

  /** Starts a long-poll receive that the test may abandon (`abort()`), as a vanished client. */
  startRecv(queue: string, waitSeconds: number): PendingExchange {
    return startRequest({
      method: 'POST',
      url: this.url(this.queuePath(queue, `/recv?waitSeconds=${waitSeconds}`)),
      headers: { Authorization: `Bearer ${this.target.apiKey}` },
    });
  }

  /** Receives (asserting 200 and a well-formed lease) and returns the delivery. */
  async recvOk(queue: string, waitSeconds = 0): Promise<Delivery> {
    const response = await this.recv(queue, waitSeconds);
    expectStatus(response, 200);
    return deliveryOf(response);
  }

  /** A spool-scoped token operation (`/spools/{spool}/{op}`) with no body. */
  tokenOp(op: SpoolTokenOp | 'ack-and-send', headers: Headers, query = ''): Promise<RawResponse> {
    return this.call('POST', this.spoolPath(`/${op}${query}`), { headers });
  }

  ack(lease: string): Promise<RawResponse> {
    return this.tokenOp('ack', { 'Svc-Lease': lease });
  }

  nack(lease: string): Promise<RawResponse> {
    return this.tokenOp('nack', { 'Svc-Lease': lease });
  }

  release(lease: string, delay?: string): Promise<RawResponse> {
    const headers: Record<string, string> = { 'Svc-Lease': lease };
    if (delay !== undefined) headers['Svc-Delay'] = delay;
    return this.tokenOp('release', headers);
  }

  fail(lease: string): Promise<RawResponse> {
    return this.tokenOp('fail', { 'Svc-Lease': lease });
  }

  renew(lease: string): Promise<RawResponse> {
    return this.tokenOp('renew', { 'Svc-Lease': lease });
  }

  peek(handle: string): Promise<RawResponse> {
    return this.tokenOp('peek', { 'Svc-Handle': handle });
  }

  discardHandle(handle: string): Promise<RawResponse> {
    return this.tokenOp('discard', { 'Svc-Handle': handle });
  }

  discardLease(lease: string): Promise<RawResponse> {
    return this.tokenOp('discard', { 'Svc-Lease': lease });
  }

  failureHead(queue: string): Promise<RawResponse> {
    return this.call('GET', this.queuePath(queue, '/failures/head'));
  }

  /** Path form of ack-and-send: the new message goes to `queue`. */
  ackAndSend(
    queue: string,
    lease: string,
    payload: Uint8Array | string,
    headers: Headers = {},
    query = '',
  ): Promise<RawResponse> {
    return this.call('POST', this.queuePath(queue, `/ack-and-send${query}`), {
      headers: { 'Content-Type': 'application/octet-stream', 'Svc-Lease': lease, ...headers },
      body: payload,
    });
  }

  // Listings and stats ------------------------------------------------------------------------

  listMessages(queue: string, query = ''): Promise<RawResponse> {
    return this.call('GET', this.queuePath(queue, `/messages${query}`));
  }

  async listMessagesOk(queue: string, query = ''): Promise<Page<MessageItem>> {
    const response = await this.listMessages(queue, query);
    expectStatus(response, 200);
    return jsonBody(response) as Page<MessageItem>;
  }

  /** Every message of the queue (walking pages of up to 1000), in listing order. */
  async allMessages(queue: string, query = ''): Promise<MessageItem[]> {
    const items: MessageItem[] = [];
    let after: string | undefined;
    for (let page = 0; page < 100; page += 1) {
      const sep = query === '' ? '?' : '&';
      const cursor = after === undefined ? '' : `${sep}after=${encodeURIComponent(after)}`;
      const result = await this.listMessagesOk(queue, `${query}${cursor}`);
      items.push(...result.items);
      if (result.next === undefined) return items;
      after = result.next;
    }
    throw new Error('message walk exceeded 100 pages');
  }

  /** The one message of `queue` with id `messageId`, or undefined when it is gone. */
  async messageById(queue: string, messageId: string): Promise<MessageItem | undefined> {
    const items = await this.allMessages(queue, '?limit=1000');
    return items.find((item) => item.id === messageId);
  }

  stats(query = ''): Promise<RawResponse> {
    return this.call('GET', this.spoolPath(`/stats${query}`));
  }

  /** The Stats object of one queue, from `/stats?queue=...` (asserting it is there). */
  async queueStats(queue: string): Promise<Stats> {
    const response = await this.stats(`?queue=${queue}`);
    expectStatus(response, 200);
    type StatsPage = { queues: { items: Array<{ name: string; stats: unknown }> } };
    const body = jsonBody(response) as StatsPage;
    const entry = body.queues.items.find((item) => item.name === queue);
    expect(entry, describeResponse(response)).toBeDefined();
    return expectStatsShape(entry?.stats);
  }
}

/** Reads a 200 receive (or failure-head) answer: payload and the lease headers. */
export function deliveryOf(response: RawResponse): Delivery {
  const lease = header(response, 'svc-lease') ?? '';
  expect(lease, describeResponse(response)).toMatch(tokenPattern);
  const messageId = header(response, 'svc-message-id') ?? '';
  expect(messageId, describeResponse(response)).not.toBe('');
  const retriesText =
    header(response, 'svc-message-retries') ?? header(response, 'svc-retry-count');
  expect(retriesText, describeResponse(response)).toMatch(/^\d+$/);
  return {
    payload: response.body,
    lease,
    messageId,
    retries: Number(retriesText),
    leaseExpiresAt: header(response, 'svc-lease-expires-at'),
    response,
  };
}

/** A token of the same length and charset with one middle character changed. */
export function tamper(token: string): string {
  // A middle character carries full bits in any base64url-like encoding; the last may not.
  const index = Math.floor(token.length / 2);
  const replacement = token[index] === 'A' ? 'B' : 'A';
  return `${token.slice(0, index)}${replacement}${token.slice(index + 1)}`;
}

/** The 256 byte values 0..255 in order. */
export function allByteValues(): Uint8Array {
  const bytes = new Uint8Array(256);
  for (let value = 0; value < 256; value += 1) bytes[value] = value;
  return bytes;
}
