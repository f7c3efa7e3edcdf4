// The auth table on a member: what gateways authenticate with (accounts, keys, plans) as of the
// metadata applied here, pushed to in-process listeners and to the gateways watching this member
// through the accounts service, with the version each watcher acknowledged. An admin change
// answers once every member holds it with its watchers (MemberAdmin.propagated); `whenPropagated`
// ends that wait on the events that can end it (a push, an acknowledgement, a watcher leaving),
// not by polling.

import { type AuthTable, type Clock, type TimerHandle, afterTurn } from '@spoolmq/protocol';
import { ACCOUNT_WATCHERS_MAX, type AccountWatcher, type AuthFeed } from '../rpc/accounts-rpc.js';
import { hex } from './meta-state.js';
import type { MetaReplica } from './meta-replica.js';

/** Listeners of auth table changes (in-process gateways, watch streams). */
export const AUTH_LISTENERS_MAX = 2_048;
/**
 * Waits for a version to propagate at once (admin changes in flight, each a member's call).
 * Past it a wait answers at once with what holds now, as one that timed out.
 */
export const PROPAGATION_WAITERS_MAX = 1_024;

/** What the push needs of its member. */
export interface AuthHost {
  /** The metadata replica, null before it starts. */
  meta(): Pick<MetaReplica, 'state' | 'status'> | null;
  /** The member is closing or closed: nothing is pushed. */
  isClosing(): boolean;
  /** Whether the metadata follows a leader now (else watchers get no heartbeat). */
  metaCurrent(): boolean;
  /** Message size bound of an account whose plan the metadata does not know (bytes). */
  readonly messageSizeMaxBytes: number;
  /** The cluster layer's clock: propagation waits end on it. */
  readonly clock: Clock;
}

interface Waiter {
  readonly index: number;
  readonly resolve: (propagated: boolean) => void;
  readonly timer: TimerHandle;
}

export class AuthPush implements AuthFeed {
  private readonly listeners = new Set<() => void>();
  private readonly watchers = new Set<AccountWatcher>();
  private readonly waiters = new Set<Waiter>();
  private pushScheduled = false;
  /** The auth table version last pushed to the listeners. */
  private pushedVersion = -1;

  constructor(private readonly host: AuthHost) {}

  /** What gateways authenticate with, as of the metadata this member has applied. */
  authTable(): AuthTable {
    const meta = this.host.meta()!;
    const state = meta.state;
    const accounts = [...state.accounts.values()].map((account) => {
      const plan = state.plans.get(account.plan);
      return {
        id: account.id,
        state: account.state,
        messageSizeMaxBytes: plan?.messageSizeMaxBytes ?? this.host.messageSizeMaxBytes,
        requestsPerSecond: plan?.requestsPerSecond ?? 0,
        requestBurst: plan?.requestBurst ?? 0,
      };
    });
    const keys = [...state.keys.values()].map((key) => ({
      hashHex: hex(key.hash),
      accountId: key.accountId,
      blocked: key.blocked,
    }));
    return { version: meta.status().appliedIndex, accounts, keys };
  }

  /**
   * Calls `listener` (synchronously, inside the push) after every change of accounts, keys or
   * plans is applied here. Returns the unsubscribe. Throws RangeError past AUTH_LISTENERS_MAX.
   */
  onAuthChange(listener: () => void): () => void {
    if (this.listeners.size >= AUTH_LISTENERS_MAX) throw new RangeError('too many listeners');
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  metaCurrent(): boolean {
    return this.host.metaCurrent();
  }

  /** Registers a watching gateway; null when ACCOUNT_WATCHERS_MAX watch already. */
  addWatcher(): AccountWatcher | null {
    if (this.watchers.size >= ACCOUNT_WATCHERS_MAX) return null;
    const watcher: AccountWatcher = { acked: -1 };
    this.watchers.add(watcher);
    return watcher;
  }

  /** `watcher` stopped watching: a change no longer waits for it. */
  removeWatcher(watcher: AccountWatcher): void {
    if (this.watchers.delete(watcher)) this.wake();
  }

  /** `watcher` installed table `version` (one older than it acknowledged before is ignored). */
  ackWatcher(watcher: AccountWatcher, version: number): void {
    if (version <= watcher.acked) return;
    watcher.acked = version;
    this.wake();
  }

  /** Pushes the table to the listeners once this turn's batch of applied entries is done. */
  schedule(): void {
    if (this.pushScheduled) return;
    this.pushScheduled = true;
    afterTurn(() => {
      this.pushScheduled = false;
      const meta = this.host.meta();
      if (this.host.isClosing() || meta === null) return;
      this.pushedVersion = meta.status().appliedIndex;
      for (const listener of [...this.listeners]) listener();
      this.wake();
    });
  }

  /**
   * Whether this member applied the metadata up to `index`, pushed it to its in-process
   * listeners, and every gateway watching it acknowledged a table that new.
   */
  propagated(index: number): boolean {
    const applied = this.host.meta()?.status().appliedIndex ?? -1;
    if (applied < index || this.pushedVersion < index) return false;
    for (const watcher of this.watchers) if (watcher.acked < index) return false;
    return true;
  }

  /**
   * Resolves true once `propagated(index)`, or with what holds after `waitMs` (>= 0) on the
   * cluster clock, or false when the push closes. Never rejects.
   */
  whenPropagated(index: number, waitMs: number): Promise<boolean> {
    if (waitMs <= 0 || this.propagated(index) || this.waiters.size >= PROPAGATION_WAITERS_MAX) {
      return Promise.resolve(this.propagated(index));
    }
    return new Promise((resolve) => {
      const timer = this.host.clock.setTimer(() => {
        this.waiters.delete(waiter);
        resolve(this.propagated(index));
      }, waitMs);
      const waiter: Waiter = { index, resolve, timer };
      this.waiters.add(waiter);
    });
  }

  /** Drops the listeners and answers every wait false (the member closes). */
  close(): void {
    this.listeners.clear();
    for (const waiter of this.waiters) this.settle(waiter, false);
  }

  /** Resolves the waits that hold now. */
  private wake(): void {
    for (const waiter of this.waiters) {
      if (this.propagated(waiter.index)) this.settle(waiter, true);
    }
  }

  private settle(waiter: Waiter, propagated: boolean): void {
    this.waiters.delete(waiter);
    this.host.clock.clearTimer(waiter.timer);
    waiter.resolve(propagated);
  }
}
