// Wire shapes of the interface as a client sees them: JSON fields exactly as the server sends
// them (timestamps stay RFC 3339 strings), plus the results the client builds from headers.

export type QueueState = 'active' | 'draining' | 'deleting';
export type MessageState = 'delayed' | 'visible' | 'pending' | 'failed' | 'unavailable';
export type DeleteMode = 'force' | 'drain';

export interface RecvRateLimit {
  /** Refill interval in microseconds; 0 (with burst 0) means no limit. */
  readonly intervalMicros: number;
  readonly burst: number;
}

export interface Settings {
  readonly leaseTimeoutSeconds: number;
  readonly maxRetries: number;
  readonly dedupWindowSeconds: number;
  readonly retentionSeconds: number;
  readonly effectiveRetentionSeconds: number;
  readonly recvRateLimit: RecvRateLimit;
}

/** Create input: absent fields take the server's defaults. */
export interface SettingsInput {
  readonly leaseTimeoutSeconds?: number;
  readonly maxRetries?: number;
  readonly dedupWindowSeconds?: number;
  readonly retentionSeconds?: number;
  readonly recvRateLimit?: RecvRateLimit;
}

/** Update input: absent fields stay; `recvRateLimit: null` removes the limit. */
export interface SettingsPatch {
  readonly leaseTimeoutSeconds?: number;
  readonly maxRetries?: number;
  readonly dedupWindowSeconds?: number;
  readonly retentionSeconds?: number;
  readonly recvRateLimit?: RecvRateLimit | null;
}

export interface Queue {
  readonly name: string;
  readonly createdAt: string;
  readonly state: QueueState;
  readonly settings: Settings;
}

export interface Stats {
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

export interface Spool {
  readonly name: string;
  readonly queueCount: number;
  readonly stats: Stats & { readonly sampledAt: string; readonly startedAt: string };
}

export interface Page<T> {
  readonly items: readonly T[];
  /** Cursor for the next page; absent when this page ends the selection. */
  readonly next?: string;
}

export interface QueueStats extends Queue {
  readonly stats: Stats;
}

export interface StatsPage {
  readonly queueCount: number;
  readonly stats: Stats;
  readonly queues: Page<QueueStats>;
}

export interface MessageInfo {
  readonly id: string;
  readonly state: MessageState;
  readonly retries: number;
  readonly createdAt: string;
  readonly visibleAt?: string;
  readonly leaseExpiresAt?: string;
  readonly expiresAt?: string;
  readonly handle?: string;
}

export interface SendResult {
  readonly messageId: string;
  /** Present when `handle: true` was asked and the message was appended. */
  readonly handle?: string;
  /** True on a dedup hit (200): nothing appended, `messageId` is the original's. */
  readonly duplicate: boolean;
}

export interface Delivery {
  readonly body: Uint8Array;
  readonly lease: string;
  readonly messageId: string;
  /** Redeliveries so far. */
  readonly retries: number;
  /** RFC 3339; absent when the queue has no lease timeout. */
  readonly leaseExpiresAt?: string;
}

/** The failure-queue head: its `lease` is a failure lease, good for recover and discard only. */
export interface FailedMessage {
  readonly body: Uint8Array;
  readonly lease: string;
  readonly messageId: string;
  /** Redeliveries before failing. */
  readonly retries: number;
}

export interface PeekResult {
  readonly body: Uint8Array;
  readonly messageId: string;
  readonly state: MessageState;
  readonly retries: number;
}

/** Exactly one token: a handle, or a lease (a delivery lease for discard, a failure lease). */
export type TokenRef = { readonly handle: string } | { readonly lease: string };

export type Body = Uint8Array | string;
