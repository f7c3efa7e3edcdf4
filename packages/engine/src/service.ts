// The one interface the HTTP gateway talks to. The local variant implements it with the engine
// in-process; the cluster implements it by forwarding to the spool's primary member. Every method
// takes arguments the gateway already validated for syntax and range, and either returns the
// result or rejects with an `MqError` carrying the interface's kind. Times are epoch milliseconds.

export type QueueState = 'active' | 'draining' | 'deleting';
export type MessageState = 'delayed' | 'visible' | 'pending' | 'failed' | 'unavailable';
export type DeleteMode = 'force' | 'drain';

export interface RecvRateLimit {
  readonly intervalMicros: number;
  readonly burst: number;
}

/** Settings as the interface shows them (seconds). `recvRateLimit` zeros mean no limit. */
export interface SettingsView {
  readonly leaseTimeoutSeconds: number;
  readonly maxRetries: number;
  readonly dedupWindowSeconds: number;
  readonly retentionSeconds: number;
  readonly effectiveRetentionSeconds: number;
  readonly recvRateLimit: RecvRateLimit;
}

/** Create input: absent fields take defaults. Ranges already checked by the gateway. */
export interface SettingsInput {
  readonly leaseTimeoutSeconds?: number;
  readonly maxRetries?: number;
  readonly dedupWindowSeconds?: number;
  readonly retentionSeconds?: number;
  readonly recvRateLimit?: RecvRateLimit | null;
}

/** Update input: absent fields unchanged; `recvRateLimit: null` removes the limit. */
export type SettingsPatch = SettingsInput;

export interface QueueView {
  readonly name: string;
  readonly createdAtMs: number;
  readonly state: QueueState;
  readonly settings: SettingsView;
}

export interface Counts {
  readonly total: number;
  readonly dataBytes: number;
  readonly delayed: number;
  readonly visible: number;
  readonly pending: number;
  readonly failed: number;
  readonly unavailable: number;
  readonly addedTotal: number;
  readonly ackedTotal: number;
  readonly nackedTotal: number;
  readonly releasedTotal: number;
  readonly failedTotal: number;
  readonly discardedTotal: number;
  readonly expiredTotal: number;
}

export interface SpoolView {
  readonly name: string;
  readonly queueCount: number;
  readonly stats: Counts & { readonly sampledAtMs: number; readonly startedAtMs: number };
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Opaque cursor (1-256 chars); absent when the page ends the selection. */
  readonly next?: string;
}

export interface ListQuery {
  /** 1-1000. */
  readonly limit: number;
  /** Cursor from a previous page of the same listing. A bad cursor is 400 invalid_argument. */
  readonly after?: string;
  /** RE2 pattern, unanchored, already checked to compile. */
  readonly match?: string;
}

export interface StatsQuery extends ListQuery {
  /** Keep only these names; unknown names are simply absent. */
  readonly queues?: readonly string[];
}

export interface QueueStatsView extends QueueView {
  readonly stats: Counts;
}

export interface StatsPage {
  readonly queueCount: number;
  readonly stats: Counts;
  readonly queues: Page<QueueStatsView>;
}

export interface MessageView {
  readonly id: string;
  readonly state: MessageState;
  readonly retries: number;
  readonly createdAtMs: number;
  readonly visibleAtMs?: number;
  readonly leaseExpiresAtMs?: number;
  readonly expiresAtMs?: number;
  readonly handle?: string;
}

export interface MessageListQuery {
  readonly state?: MessageState;
  readonly limit: number;
  readonly after?: string;
  readonly withHandles: boolean;
}

export interface SendRequest {
  readonly payload: Uint8Array;
  /** 0 .. 604,800,000. */
  readonly delayMs: number;
  /** 16-byte fingerprint: sha256(dedup string)[0..16] or the Svc-Dedup-Hash bytes. */
  readonly dedupKey?: Uint8Array;
  readonly wantHandle: boolean;
}

export interface SendResult {
  readonly messageId: string;
  /** Present when asked for and the message was appended (not on a dedup hit). */
  readonly handle?: string;
  /** True on a dedup hit: nothing appended, `messageId` is the original's. */
  readonly duplicate: boolean;
}

export interface Delivery {
  readonly payload: Uint8Array;
  readonly lease: string;
  readonly messageId: string;
  readonly retries: number;
  /** Absent when the queue has no lease timeout (and for failure leases). */
  readonly leaseExpiresAtMs?: number;
}

export interface ReceiveRequest {
  /** 0 .. 20,000. */
  readonly waitMs: number;
  /** Aborted when the client went away or the server shuts down: answer null promptly. */
  readonly signal?: AbortSignal;
}

export interface PeekResult {
  readonly payload: Uint8Array;
  readonly messageId: string;
  readonly state: MessageState;
  readonly retries: number;
}

/** Exactly one of the two is set (the gateway checks presence). */
export interface TokenRef {
  readonly lease?: string;
  readonly handle?: string;
}

export interface SpoolService {
  /** Rejects with 404 spool_not_found / queue_not_found; used to order 404 before 400/411/413. */
  checkTarget(spool: string, queue?: string): Promise<void>;
  /** Whether every spool this process serves has a known primary (for /readyz). */
  ready(): boolean;

  describeSpool(spool: string): Promise<SpoolView>;
  spoolStats(spool: string, query: StatsQuery): Promise<StatsPage>;
  listQueues(spool: string, query: ListQuery): Promise<Page<QueueView>>;
  describeQueue(spool: string, queue: string): Promise<QueueView>;
  createQueue(spool: string, queue: string, input: SettingsInput): Promise<QueueView>;
  updateQueue(spool: string, queue: string, patch: SettingsPatch): Promise<QueueView>;
  /** 'deleted' renders 204, 'accepted' renders 202. */
  deleteQueue(spool: string, queue: string, mode: DeleteMode): Promise<'deleted' | 'accepted'>;

  send(spool: string, queue: string, request: SendRequest): Promise<SendResult>;
  receive(spool: string, queue: string, request: ReceiveRequest): Promise<Delivery | null>;
  ack(spool: string, lease: string): Promise<void>;
  nack(spool: string, lease: string): Promise<void>;
  /** `delayMs` 0 .. 604,800,000; 0 is immediate. */
  release(spool: string, lease: string, delayMs: number): Promise<void>;
  fail(spool: string, lease: string): Promise<void>;
  renew(spool: string, lease: string): Promise<{ readonly leaseExpiresAtMs?: number }>;
  peek(spool: string, handle: string): Promise<PeekResult>;
  /** `token.lease` here is a failure lease from failureHead. */
  recover(spool: string, token: TokenRef, delayMs: number): Promise<void>;
  discard(spool: string, token: TokenRef): Promise<void>;
  listMessages(spool: string, queue: string, query: MessageListQuery): Promise<Page<MessageView>>;
  failureHead(spool: string, queue: string): Promise<Delivery | null>;
  /** A dedup hit rejects with 409 dedup_claimed, details.messageId; nothing acked. */
  ackAndSend(
    spool: string,
    lease: string,
    queue: string,
    request: SendRequest,
  ): Promise<SendResult>;
}
