// Request body bytes held in memory at once, for the whole process and per account. Bytes are
// counted as they arrive (never from a declared Content-Length), so a client declaring large
// bodies and sending them slowly holds only what it sent; past the account's share the request
// answers 429, past the process's budget 503, both before anything is appended.

import assert from 'node:assert/strict';
import { MqError } from '@spoolmq/engine';

/** Body bytes in flight for the whole process: far above a busy gateway's working set. */
export const BODY_BYTES_IN_FLIGHT_MAX = 256 * 1_048_576;
/** Body bytes in flight for one account (one account cannot take the whole process). */
export const BODY_BYTES_IN_FLIGHT_PER_ACCOUNT_MAX = 64 * 1_048_576;
/** Accounts tracked at once (each with bytes in flight); more are refused as the process is. */
const ACCOUNTS_TRACKED_MAX = 100_000;

export interface BodyBudgetLimits {
  readonly totalBytesMax: number;
  readonly accountBytesMax: number;
}

export class BodyBudget {
  private totalBytes = 0;
  private readonly accounts = new Map<string, number>();

  constructor(
    readonly limits: BodyBudgetLimits = {
      totalBytesMax: BODY_BYTES_IN_FLIGHT_MAX,
      accountBytesMax: BODY_BYTES_IN_FLIGHT_PER_ACCOUNT_MAX,
    },
  ) {
    assert(limits.accountBytesMax > 0 && limits.accountBytesMax <= limits.totalBytesMax, 'budget');
  }

  /** Bytes held now by everyone (for metrics and tests). */
  get inFlightBytes(): number {
    return this.totalBytes;
  }

  /**
   * Takes `bytes` more for `account` (undefined: requests without an account, `mq local`).
   * Throws 429 rate_limited past the account's share or 503 unavailable past the process's; on
   * a throw nothing was taken.
   */
  take(account: string | undefined, bytes: number): void {
    const key = account ?? '';
    const held = this.accounts.get(key) ?? 0;
    if (held + bytes > this.limits.accountBytesMax) {
      throw new MqError('rate_limited', 'too many request body bytes in flight for this account', {
        retryAfterMs: 1_000,
      });
    }
    const tracking = held === 0 && this.accounts.size >= ACCOUNTS_TRACKED_MAX;
    if (tracking || this.totalBytes + bytes > this.limits.totalBytesMax) {
      throw new MqError('unavailable', 'the server holds too many request bodies; retry');
    }
    this.accounts.set(key, held + bytes);
    this.totalBytes += bytes;
  }

  /** Gives back `bytes` that `take` took for `account` (the request finished or failed). */
  give(account: string | undefined, bytes: number): void {
    if (bytes === 0) return;
    const key = account ?? '';
    const held = this.accounts.get(key) ?? 0;
    assert(held >= bytes && this.totalBytes >= bytes, 'giving back more than was taken');
    if (held === bytes) this.accounts.delete(key);
    else this.accounts.set(key, held - bytes);
    this.totalBytes -= bytes;
  }
}
