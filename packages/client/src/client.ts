// A typed client for every operation of the interface. One instance addresses one spool
// (`default` unless told); `forSpool` gives a sibling for another spool sharing everything else.
// Sends follow the interface's retry rules (send-retry.ts); every other call is one attempt.

import { MqClientError, type MqFailure, isMqClientError, isMqTransportError } from './errors.js';
import { DedupWindowCache } from './dedup-window-cache.js';
import { formatDelay } from './duration.js';
import { type FetchFn, type HttpAnswer, HttpTransport, segment } from './http.js';
import {
  DEFAULT_SEND_RETRY_POLICY,
  type SendRetryPolicy,
  classifySendFailure,
  nextSendRetryDelayMs,
} from './send-retry.js';
import type {
  Body,
  DeleteMode,
  Delivery,
  FailedMessage,
  MessageInfo,
  MessageState,
  Page,
  PeekResult,
  Queue,
  SendResult,
  SettingsInput,
  SettingsPatch,
  Spool,
  StatsPage,
  TokenRef,
} from './types.js';

export interface MqClientOptions {
  /** Service base address including `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`; the local variant accepts any non-empty key. */
  readonly apiKey: string;
  /** Spool every call addresses; default `default`. */
  readonly spool?: string;
  /** Replacement for the global fetch (tests inject a fake). */
  readonly fetch?: FetchFn;
  /** Send retry policy; default 3 retries, 100 ms doubling to at most 5 s. */
  readonly sendRetry?: Partial<SendRetryPolicy>;
  /** Waits between send attempts; default a timer. Rejects with the signal's reason on abort. */
  readonly sleep?: (delayMs: number, signal?: AbortSignal) => Promise<void>;
  /** Jitter source in [0, 1); default Math.random. */
  readonly random?: () => number;
  /** Wall clock in epoch milliseconds; default Date.now. */
  readonly nowMs?: () => number;
  /** Makes a dedup key (1-128 chars in 0x21-0x7E) for sends that ask for retries. */
  readonly newDedupKey?: () => string;
}

export interface CallOptions {
  readonly signal?: AbortSignal;
}

export interface ListOptions extends CallOptions {
  /** Page size 1-1000; server default 100. */
  readonly limit?: number;
  /** Cursor: the previous page's `next`. */
  readonly after?: string;
  /** RE2 pattern, unanchored, on queue names. */
  readonly match?: string;
}

export interface StatsOptions extends ListOptions {
  /** Keep only these queues. */
  readonly queues?: readonly string[];
}

export interface ListMessagesOptions extends CallOptions {
  readonly state?: MessageState;
  readonly limit?: number;
  readonly after?: string;
  /** Ask for each message's handle (a bearer credential). */
  readonly handle?: boolean;
}

export interface SendOptions extends CallOptions {
  /** 0-604,800 seconds until visible. */
  readonly delaySeconds?: number;
  /** Dedup key, 1-128 chars in 0x21-0x7E; sent as Svc-Dedup-String. */
  readonly dedupKey?: string;
  /** 16-byte fingerprint as 32 hex chars; sent as Svc-Dedup-Hash. Not with dedupKey. */
  readonly dedupHash?: string;
  /** Ask for a send handle (`Svc-Handle`) to cancel or peek the message later. */
  readonly handle?: boolean;
  /** Retries after the first attempt; default from the client's policy (3). 0 = one attempt. */
  readonly retries?: number;
  /**
   * When retries are asked, no key is given and the queue has a dedup window, assign a fresh
   * key before the first attempt so ambiguous failures (500/502/504/no response) can be retried
   * without duplicating. Default true.
   */
  readonly autoDedupKey?: boolean;
}

export interface ReceiveOptions extends CallOptions {
  /** Long-poll wait, 0-20 seconds; omitted means the server's maximum (20). */
  readonly waitSeconds?: number;
}

export interface DelayMsOptions extends CallOptions {
  /** Delay in whole milliseconds, 0 .. 604,800,000; sent as a `Svc-Delay` Duration. */
  readonly delayMs?: number;
}

export interface RecoverOptions extends CallOptions {
  /** 0-604,800 seconds before the recovered message is visible. */
  readonly delaySeconds?: number;
}

export interface AckAndSendOptions extends DelayMsOptions {
  readonly dedupKey?: string;
  readonly dedupHash?: string;
  readonly handle?: boolean;
  /**
   * `path` (default): POST /spools/{spool}/queues/{queue}/ack-and-send.
   * `header`: POST /spools/{spool}/ack-and-send with the target in `Svc-Queue`.
   */
  readonly form?: 'path' | 'header';
}

const encoder = new TextEncoder();

export class MqClient {
  /** The spool every call of this instance addresses. */
  readonly spool: string;
  private readonly http: HttpTransport;
  private readonly policy: SendRetryPolicy;
  private windows = new DedupWindowCache();

  constructor(private readonly options: MqClientOptions) {
    this.spool = options.spool ?? 'default';
    const fetchFn = options.fetch ?? globalThis.fetch;
    this.http = new HttpTransport(options.baseUrl, options.apiKey, fetchFn);
    this.policy = { ...DEFAULT_SEND_RETRY_POLICY, ...options.sendRetry };
  }

  /** A client for another spool, sharing transport settings and learned queue settings. */
  forSpool(spool: string): MqClient {
    const sibling = new MqClient({ ...this.options, spool });
    sibling.windows = this.windows;
    return sibling;
  }

  // ---- spool and queue operations -------------------------------------------------------

  /** GET /spools/{spool}: name, queueCount, stats with sampledAt and startedAt. */
  async describeSpool(options: CallOptions = {}): Promise<Spool> {
    const { signal } = options;
    const answer = await this.http.request({ method: 'GET', path: this.spoolPath(), signal });
    return this.json<Spool>(answer);
  }

  /** GET /spools/{spool}/stats: one page of per-queue stats plus the spool rollup. */
  async stats(options: StatsOptions = {}): Promise<StatsPage> {
    const { queues, limit, after, match, signal } = options;
    const answer = await this.http.request({
      method: 'GET',
      path: `${this.spoolPath()}/stats`,
      query: { queue: queues, limit, after, match },
      signal,
    });
    const page = this.json<StatsPage>(answer);
    for (const queue of page.queues.items) this.learn(queue);
    return page;
  }

  /** Every stats page of the selection in order; ends when a page has no `next`. */
  statsPages(options: Omit<StatsOptions, 'after'> = {}): AsyncIterable<StatsPage> {
    return walkPages((after) => this.stats({ ...options, after }), (page) => page.queues.next);
  }

  /** GET /spools/{spool}/queues: one page of queues in byte order of name. */
  async listQueues(options: ListOptions = {}): Promise<Page<Queue>> {
    const { limit, after, match, signal } = options;
    const answer = await this.http.request({
      method: 'GET',
      path: `${this.spoolPath()}/queues`,
      query: { limit, after, match },
      signal,
    });
    const page = this.json<Page<Queue>>(answer);
    for (const queue of page.items) this.learn(queue);
    return page;
  }

  /** Every page of the queue listing in order; ends when a page has no `next`. */
  queuePages(options: Omit<ListOptions, 'after'> = {}): AsyncIterable<Page<Queue>> {
    return walkPages((after) => this.listQueues({ ...options, after }), (page) => page.next);
  }

  /** Every queue of the listing, fetched page by page. */
  async *queues(options: Omit<ListOptions, 'after'> = {}): AsyncIterable<Queue> {
    for await (const page of this.queuePages(options)) yield* page.items;
  }

  /** GET /spools/{spool}/queues/{queue}. Errors: 404 queue_not_found. */
  async describeQueue(queue: string, options: CallOptions = {}): Promise<Queue> {
    const { signal } = options;
    const answer = await this.http.request({ method: 'GET', path: this.queuePath(queue), signal });
    return this.learn(this.json<Queue>(answer));
  }

  /** PUT /spools/{spool}/queues/{queue}; absent settings take defaults. 409 queue_exists. */
  async createQueue(
    queue: string,
    settings?: SettingsInput,
    options: CallOptions = {},
  ): Promise<Queue> {
    const answer = await this.http.request({
      method: 'PUT',
      path: this.queuePath(queue),
      body: settings === undefined ? undefined : { json: settings },
      signal: options.signal,
    });
    return this.learn(this.json<Queue>(answer));
  }

  /** PATCH /spools/{spool}/queues/{queue}; `recvRateLimit: null` removes the limit. */
  async updateQueue(
    queue: string,
    patch: SettingsPatch,
    options: CallOptions = {},
  ): Promise<Queue> {
    const answer = await this.http.request({
      method: 'PATCH',
      path: this.queuePath(queue),
      body: { json: patch },
      signal: options.signal,
    });
    return this.learn(this.json<Queue>(answer));
  }

  /**
   * DELETE /spools/{spool}/queues/{queue}?mode=. Resolves 'deleted' (204: gone, name free) or
   * 'accepted' (202: drain or deletion in progress). Errors: 409 conflict (retry).
   */
  async deleteQueue(
    queue: string,
    mode: DeleteMode,
    options: CallOptions = {},
  ): Promise<'deleted' | 'accepted'> {
    const answer = await this.http.request({
      method: 'DELETE',
      path: this.queuePath(queue),
      query: { mode },
      signal: options.signal,
    });
    this.windows.forget(this.spool, queue);
    return answer.status === 202 ? 'accepted' : 'deleted';
  }

  // ---- messages ------------------------------------------------------------------------------

  /**
   * POST .../queues/{queue}/send, with the interface's retry rules: 409 dedup_in_flight, 429
   * (after Retry-After) and 503 are retried; 500/502/504 and no response only when a dedup key
   * rides every attempt and the queue's window still remembers it; the rest are verdicts.
   * Rejects with the last `MqClientError` / `MqTransportError`.
   */
  async send(queue: string, body: Body, options: SendOptions = {}): Promise<SendResult> {
    const bytes = toBytes(body);
    const retries = options.retries ?? this.policy.retries;
    const policy = { ...this.policy, retries };
    let dedup = dedupHeaders(options.dedupKey, options.dedupHash);
    let autoKey = false;
    if (dedup === undefined && retries > 0 && options.autoDedupKey !== false) {
      const windowMs = await this.dedupWindowMs(queue, options.signal);
      if (windowMs !== undefined && windowMs > 0) {
        dedup = { 'svc-dedup-string': this.newDedupKey() };
        autoKey = true;
      }
    }
    const startMs = this.now();
    // Bounded: each pass either returns, throws, or spends one of `retries` retries; the one
    // dedup_disabled fallback is allowed once since it clears `autoKey`.
    for (let retry = 1; ; retry += 1) {
      try {
        return await this.sendOnce(queue, bytes, options, dedup);
      } catch (error) {
        if (!isFailure(error)) throw error;
        if (autoKey && isDedupDisabled(error)) {
          // Our own key met a queue whose window went to 0: a 4xx appended nothing, resend bare.
          this.windows.forget(this.spool, queue);
          dedup = undefined;
          autoKey = false;
          retry -= 1;
          continue;
        }
        const delayMs = nextSendRetryDelayMs(
          error,
          {
            retry,
            hasDedupKey: dedup !== undefined,
            elapsedMs: this.now() - startMs,
            dedupWindowMs:
              dedup !== undefined && classifySendFailure(error) === 'ambiguous'
                ? await this.dedupWindowMs(queue, options.signal)
                : undefined,
          },
          policy,
          this.random(),
        );
        if (delayMs === undefined) throw error;
        await this.sleep(delayMs, options.signal);
      }
    }
  }

  /** POST .../queues/{queue}/recv. Resolves a delivery, or null when the wait ended empty (204). */
  async receive(queue: string, options: ReceiveOptions = {}): Promise<Delivery | null> {
    const answer = await this.http.request({
      method: 'POST',
      path: `${this.queuePath(queue)}/recv`,
      query: { waitSeconds: options.waitSeconds },
      signal: options.signal,
    });
    if (answer.status === 204) return null;
    const leaseExpiresAt = answer.headers.get('svc-lease-expires-at') ?? undefined;
    return {
      body: answer.body,
      lease: requiredHeader(answer, 'svc-lease'),
      messageId: requiredHeader(answer, 'svc-message-id'),
      retries: integerHeader(answer, 'svc-message-retries'),
      ...(leaseExpiresAt === undefined ? {} : { leaseExpiresAt }),
    };
  }

  /** POST /spools/{spool}/ack. Errors: 409, 410 gone, 500. */
  async ack(lease: string, options: CallOptions = {}): Promise<void> {
    await this.leaseCall('ack', lease, {}, options.signal);
  }

  /** POST /spools/{spool}/nack: redeliver with a retry counted (or fail when exhausted). */
  async nack(lease: string, options: CallOptions = {}): Promise<void> {
    await this.leaseCall('nack', lease, {}, options.signal);
  }

  /** POST /spools/{spool}/release: back to the queue, no retry spent, optional delay. */
  async release(lease: string, options: DelayMsOptions = {}): Promise<void> {
    await this.leaseCall('release', lease, delayHeader(options.delayMs), options.signal);
  }

  /** POST /spools/{spool}/fail: to the failure queue now. */
  async fail(lease: string, options: CallOptions = {}): Promise<void> {
    await this.leaseCall('fail', lease, {}, options.signal);
  }

  /** POST /spools/{spool}/renew: extends the lease by the queue's lease timeout. */
  async renew(
    lease: string,
    options: CallOptions = {},
  ): Promise<{ readonly leaseExpiresAt?: string }> {
    const answer = await this.leaseCall('renew', lease, {}, options.signal);
    const leaseExpiresAt = answer.headers.get('svc-lease-expires-at');
    return leaseExpiresAt === null ? {} : { leaseExpiresAt };
  }

  /** POST /spools/{spool}/peek: the message a handle names, without moving it. Errors: 410. */
  async peek(handle: string, options: CallOptions = {}): Promise<PeekResult> {
    return this.peekAt('peek', handle, options);
  }

  /** POST /spools/{spool}/inspect: the overview's name for peek. */
  async inspect(handle: string, options: CallOptions = {}): Promise<PeekResult> {
    return this.peekAt('inspect', handle, options);
  }

  /** POST /spools/{spool}/recover: a failed message (by handle or failure lease) back to queue. */
  async recover(token: TokenRef, options: RecoverOptions = {}): Promise<void> {
    const headers: Record<string, string> = tokenHeaders(token);
    if (options.delaySeconds !== undefined) {
      headers['svc-delay-seconds'] = String(options.delaySeconds);
    }
    const { signal } = options;
    const path = `${this.spoolPath()}/recover`;
    await this.http.request({ method: 'POST', path, headers, signal });
  }

  /** POST /spools/{spool}/discard: drop a message by lease or handle, permanently. */
  async discard(token: TokenRef, options: CallOptions = {}): Promise<void> {
    await this.http.request({
      method: 'POST',
      path: `${this.spoolPath()}/discard`,
      headers: tokenHeaders(token),
      signal: options.signal,
    });
  }

  /** GET .../queues/{queue}/messages: one page of message listings in send order. */
  async listMessages(queue: string, options: ListMessagesOptions = {}): Promise<Page<MessageInfo>> {
    const { state, limit, after, handle, signal } = options;
    const answer = await this.http.request({
      method: 'GET',
      path: `${this.queuePath(queue)}/messages`,
      query: { state, limit, after, handle },
      signal,
    });
    return this.json<Page<MessageInfo>>(answer);
  }

  /** Every page of a queue's message listing in order. */
  messagePages(
    queue: string,
    options: Omit<ListMessagesOptions, 'after'> = {},
  ): AsyncIterable<Page<MessageInfo>> {
    return walkPages(
      (after) => this.listMessages(queue, { ...options, after }),
      (page) => page.next,
    );
  }

  /** GET .../queues/{queue}/failures/head: the oldest failed message, or null when none. */
  async failureHead(queue: string, options: CallOptions = {}): Promise<FailedMessage | null> {
    const answer = await this.http.request({
      method: 'GET',
      path: `${this.queuePath(queue)}/failures/head`,
      signal: options.signal,
    });
    if (answer.status === 204) return null;
    return {
      body: answer.body,
      lease: requiredHeader(answer, 'svc-lease'),
      messageId: requiredHeader(answer, 'svc-message-id'),
      retries: integerHeader(answer, 'svc-retry-count'),
    };
  }

  /**
   * Acks `lease` and appends `body` to `queue` atomically. Not retried automatically: a retry of
   * a committed call answers 410 and appends nothing. Errors: 409 dedup_claimed (nothing acked,
   * details.messageId), 410, 411, 413, 500, 507.
   */
  async ackAndSend(
    lease: string,
    queue: string,
    body: Body,
    options: AckAndSendOptions = {},
  ): Promise<SendResult> {
    const headers: Record<string, string> = {
      'svc-lease': lease,
      ...delayHeader(options.delayMs),
      ...dedupHeaders(options.dedupKey, options.dedupHash),
    };
    let path = `${this.queuePath(queue)}/ack-and-send`;
    if (options.form === 'header') {
      path = `${this.spoolPath()}/ack-and-send`;
      headers['svc-queue'] = queue;
    }
    const answer = await this.http.request({
      method: 'POST',
      path,
      query: { handle: options.handle === true ? true : undefined },
      headers,
      body: { bytes: toBytes(body) },
      signal: options.signal,
    });
    return sendResult(answer);
  }

  // ---- internals -----------------------------------------------------------------------------

  private async sendOnce(
    queue: string,
    bytes: Uint8Array,
    options: SendOptions,
    dedup: Record<string, string> | undefined,
  ): Promise<SendResult> {
    const headers: Record<string, string> = { ...dedup };
    if (options.delaySeconds !== undefined) {
      headers['svc-delay-seconds'] = String(options.delaySeconds);
    }
    const answer = await this.http.request({
      method: 'POST',
      path: `${this.queuePath(queue)}/send`,
      query: { handle: options.handle === true ? true : undefined },
      headers,
      body: { bytes },
      signal: options.signal,
    });
    return sendResult(answer);
  }

  private async leaseCall(
    operation: string,
    lease: string,
    extraHeaders: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<HttpAnswer> {
    return this.http.request({
      method: 'POST',
      path: `${this.spoolPath()}/${operation}`,
      headers: { 'svc-lease': lease, ...extraHeaders },
      signal,
    });
  }

  private async peekAt(
    operation: 'peek' | 'inspect',
    handle: string,
    options: CallOptions,
  ): Promise<PeekResult> {
    const answer = await this.http.request({
      method: 'POST',
      path: `${this.spoolPath()}/${operation}`,
      headers: { 'svc-handle': handle },
      signal: options.signal,
    });
    return {
      body: answer.body,
      messageId: requiredHeader(answer, 'svc-message-id'),
      state: requiredHeader(answer, 'svc-message-state') as MessageState,
      retries: integerHeader(answer, 'svc-retry-count'),
    };
  }

  /** The queue's dedup window in ms from the cache, else from a describe; undefined if unknown. */
  private async dedupWindowMs(
    queue: string,
    signal: AbortSignal | undefined,
  ): Promise<number | undefined> {
    const cached = this.windows.get(this.spool, queue, this.now());
    if (cached !== undefined) return cached;
    try {
      return (await this.describeQueue(queue, { signal })).settings.dedupWindowSeconds * 1000;
    } catch (error) {
      if (signal?.aborted === true) throw error;
      // Unknown window: the send goes without an automatic key, and ambiguous failures surface.
      return undefined;
    }
  }

  private learn<T extends Queue>(queue: T): T {
    this.windows.learn(this.spool, queue.name, queue.settings.dedupWindowSeconds, this.now());
    return queue;
  }

  private json<T>(answer: HttpAnswer): T {
    return JSON.parse(new TextDecoder().decode(answer.body)) as T;
  }

  private spoolPath(): string {
    return `/spools/${segment(this.spool)}`;
  }

  private queuePath(queue: string): string {
    return `${this.spoolPath()}/queues/${segment(queue)}`;
  }

  private now(): number {
    return (this.options.nowMs ?? Date.now)();
  }

  private random(): number {
    return (this.options.random ?? Math.random)();
  }

  private newDedupKey(): string {
    return (this.options.newDedupKey ?? (() => globalThis.crypto.randomUUID()))();
  }

  private sleep(delayMs: number, signal: AbortSignal | undefined): Promise<void> {
    return (this.options.sleep ?? sleepMs)(delayMs, signal);
  }
}

/** Decodes a payload as UTF-8 text. */
export function decodeText(body: Uint8Array): string {
  return new TextDecoder().decode(body);
}

/** Pages bound: a server that kept answering `next` forever would otherwise never end a walk. */
export const PAGES_MAX = 1_000_000;

async function* walkPages<P>(
  fetchPage: (after: string | undefined) => Promise<P>,
  nextOf: (page: P) => string | undefined,
): AsyncIterable<P> {
  let after: string | undefined;
  for (let count = 0; count < PAGES_MAX; count += 1) {
    const page = await fetchPage(after);
    yield page;
    const next = nextOf(page);
    if (next === undefined) return;
    if (next === after) throw new Error(`listing returned the same cursor twice: ${next}`);
    after = next;
  }
}

function sendResult(answer: HttpAnswer): SendResult {
  const handle = answer.headers.get('svc-handle');
  return {
    messageId: requiredHeader(answer, 'svc-message-id'),
    ...(handle === null ? {} : { handle }),
    duplicate: answer.status === 200,
  };
}

function toBytes(body: Body): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body;
}

function dedupHeaders(
  key: string | undefined,
  hash: string | undefined,
): Record<string, string> | undefined {
  if (key !== undefined && hash !== undefined) {
    throw new TypeError('give dedupKey or dedupHash, not both');
  }
  if (key !== undefined) return { 'svc-dedup-string': key };
  if (hash !== undefined) return { 'svc-dedup-hash': hash };
  return undefined;
}

function delayHeader(delayMs: number | undefined): Record<string, string> {
  return delayMs === undefined ? {} : { 'svc-delay': formatDelay(delayMs) };
}

function tokenHeaders(token: TokenRef): Record<string, string> {
  return 'handle' in token ? { 'svc-handle': token.handle } : { 'svc-lease': token.lease };
}

function requiredHeader(answer: HttpAnswer, name: string): string {
  const value = answer.headers.get(name);
  if (value === null) {
    throw new MqClientError(answer.status, 'invalid_response', `response lacks the ${name} header`);
  }
  return value;
}

function integerHeader(answer: HttpAnswer, name: string): number {
  const text = requiredHeader(answer, name);
  if (!/^\d+$/.test(text)) {
    const message = `${name} is not an integer: ${text}`;
    throw new MqClientError(answer.status, 'invalid_response', message);
  }
  return Number(text);
}

function isFailure(error: unknown): error is MqFailure {
  return isMqClientError(error) || isMqTransportError(error);
}

function isDedupDisabled(error: MqFailure): boolean {
  return !error.transport && error.status === 400 && error.kind === 'dedup_disabled';
}

/** Resolves after `delayMs`; rejects with the signal's reason if it aborts first. */
export function sleepMs(delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
