// The gateway's in-memory view of accounts and keys, and the one place a request's key becomes
// an account: hash the presented key once (sha256), look the hash up, check the key and the
// account, take a token from the account's request bucket. No I/O on this path; the table is
// replaced whenever the metadata changes (pushed, not polled).
//
// Looking a key up by its sha256 is safe against timing attacks without a constant-time compare:
// what is compared is the hash of the presented key, which an attacker cannot steer towards a
// stored hash byte by byte.

import { hash } from 'node:crypto';
import { MqError } from '@spoolmq/engine';
import { type AuthAccount, type AuthTable, type Clock, monotonicClock } from '@spoolmq/protocol';

/** Who a request acts for, once authenticated. */
export interface Principal {
  readonly accountId: string;
  /** Prepended to the path's spool name: the spool's cluster identity. */
  readonly spoolPrefix: string;
  /** The plan's message size limit (413 above it). */
  readonly messageSizeMaxBytes: number;
}

export interface AccountDirectoryOptions {
  /**
   * The share of each account's request rate and burst this gateway enforces, in (0, 1]: with
   * G gateways behind one load balancer, 1/G keeps the cluster-wide rate at most the plan's.
   * Default 1.
   */
  readonly rateShare?: number;
  /** Time for the request buckets; default monotonicClock. */
  readonly clock?: Clock;
}

interface Entry {
  readonly blocked: boolean;
  readonly account: AuthAccount;
  readonly principal: Principal;
}

/** A token bucket of one account: `ratePerMs` tokens a millisecond, at most `capacity`. */
class RequestBucket {
  tokens: number;
  constructor(
    readonly ratePerMs: number,
    readonly capacity: number,
    public refilledAtMs: number,
  ) {
    this.tokens = capacity;
  }

  /** Takes a token; returns 0, or the ms until one is available. */
  take(nowMs: number): number {
    const elapsed = nowMs - this.refilledAtMs;
    if (elapsed > 0) {
      this.tokens = Math.min(this.capacity, this.tokens + elapsed * this.ratePerMs);
      this.refilledAtMs = nowMs;
    }
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return (1 - this.tokens) / this.ratePerMs;
  }
}

export class AccountDirectory {
  private readonly rateShare: number;
  private readonly clock: Clock;
  private entries = new Map<string, Entry>();
  /** One bucket per capped account (bounded by the table's accounts). */
  private buckets = new Map<string, RequestBucket>();
  private versionValue = -1;

  /** Throws RangeError for a rateShare outside (0, 1]. */
  constructor(options: AccountDirectoryOptions = {}) {
    const share = options.rateShare ?? 1;
    if (!(share > 0 && share <= 1)) throw new RangeError('rateShare must be in (0, 1]');
    this.rateShare = share;
    this.clock = options.clock ?? monotonicClock;
  }

  /** Whether a table has arrived (until then every request is 503: nothing can be checked). */
  get ready(): boolean {
    return this.versionValue >= 0;
  }

  get version(): number {
    return this.versionValue;
  }

  /**
   * Replaces the table unless `table` is older than the one held. Buckets of accounts whose rate
   * is unchanged are kept (a table push must not refill them).
   */
  replace(table: AuthTable): void {
    if (table.version < this.versionValue) return;
    const accounts = new Map<string, AuthAccount>();
    for (const account of table.accounts) accounts.set(account.id, account);
    const entries = new Map<string, Entry>();
    for (const key of table.keys) {
      const account = accounts.get(key.accountId);
      if (account === undefined) continue;
      const principal: Principal = {
        accountId: account.id,
        spoolPrefix: `${account.id}/`,
        messageSizeMaxBytes: account.messageSizeMaxBytes,
      };
      entries.set(key.hashHex, { blocked: key.blocked, account, principal });
    }
    const buckets = new Map<string, RequestBucket>();
    const now = this.clock.nowMs();
    for (const account of accounts.values()) {
      if (account.requestsPerSecond === 0) continue;
      const ratePerMs = (account.requestsPerSecond * this.rateShare) / 1000;
      const capacity = Math.max(1, account.requestBurst * this.rateShare);
      const old = this.buckets.get(account.id);
      const same = old !== undefined && old.ratePerMs === ratePerMs && old.capacity === capacity;
      buckets.set(account.id, same ? old : new RequestBucket(ratePerMs, capacity, now));
    }
    this.entries = entries;
    this.buckets = buckets;
    this.versionValue = table.version;
  }

  /**
   * The principal of `key`. Throws MqError: 503 unavailable before any table arrived; 401
   * unauthenticated for an unknown key; 403 key_blocked (rendered without a kind); 402
   * account_suspended; 403 account_blocked; 429 rate_limited (details.retryAfterMs) when the
   * account's bucket is empty. Checks in that order, so a refused key never spends a token.
   */
  authenticate(key: string): Principal {
    if (!this.ready) throw new MqError('unavailable', 'accounts are not loaded yet; retry');
    const entry = this.entries.get(hashKey(key));
    if (entry === undefined) throw new MqError('unauthenticated', 'the API key is not recognized');
    if (entry.blocked) throw new MqError('key_blocked', 'the API key is blocked');
    const state = entry.account.state;
    if (state === 'suspended') {
      throw new MqError('account_suspended', 'the account is suspended');
    }
    if (state === 'blocked') throw new MqError('account_blocked', 'the account is on hold');
    const bucket = this.buckets.get(entry.account.id);
    if (bucket !== undefined) {
      const waitMs = bucket.take(this.clock.nowMs());
      if (waitMs > 0) {
        throw new MqError('rate_limited', 'the account request rate is exceeded', {
          retryAfterMs: waitMs,
        });
      }
    }
    return entry.principal;
  }
}

/** sha256 of an API key, lower-case hex: how keys are stored and looked up. */
export function hashKey(key: string): string {
  // The one-shot form: no Hash object per request (this runs on every authenticated call).
  return hash('sha256', key, 'hex');
}
