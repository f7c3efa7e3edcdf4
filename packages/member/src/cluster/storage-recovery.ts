// Brings a member back after a storage write failed (the disk was full or failed: ENOSPC, EIO),
// without restarting the process. The storage engine refuses every write after a failure, so
// every Raft group of the member stops writing; the calls in flight answer 500
// operation_unconfirmed (their write may or may not be on disk) and later ones 503.
//
// A round of recovery is what a process restart would do, in place: stop every group, reopen
// the storage (StorageEngine.reopen re-reads what the disk holds and makes it durable; nothing
// is assumed about the failed write), then start every group from storage again, which rebuilds
// each state machine from its snapshot and log. A round that fails (the disk is still full, so
// the reopen or a load fails) is retried every `retryMs` until one succeeds or the member
// closes. A group that fails again while a round runs makes it run one more round. A failure
// within `retryMs` after a recovery ended is a relapse (the groups started, then their replay
// failed on the same medium: a payload store's writes, say): that recovery waits `retryMs`
// before its first round, as after a failed round, instead of restarting every group at once
// (which looped about 100 times a second).

import type { Clock, TimerHandle } from '@spoolmq/protocol';

/** What a recovery round acts on: the member's groups and its storage. */
export interface RecoveryTarget {
  /** Closes every group (spool replicas and the metadata group). Idempotent. */
  stopGroups(): Promise<void>;
  /** Reopens the storage engine; rejects while the medium still fails. */
  reopenStorage(): Promise<void>;
  /** Starts every group from storage again; rejects when one cannot load. */
  startGroups(): Promise<void>;
}

export type RecoveryEvent =
  | { readonly kind: 'started'; readonly group: string; readonly error: Error }
  /** `attempt`: the rounds that failed so far; 0 for a relapse, which waits before any. */
  | { readonly kind: 'retrying'; readonly attempt: number; readonly error: Error }
  | { readonly kind: 'recovered'; readonly attempts: number; readonly downMs: number };

/** Wait between failed recovery rounds by default (ms). */
export const STORAGE_RECOVERY_RETRY_MS_DEFAULT = 1_000;

export interface StorageRecoveryStatus {
  readonly recovering: boolean;
  /** Recoveries begun (one per storage failure noticed while none ran). */
  readonly startedTotal: number;
  /** Rounds that failed and were retried. */
  readonly retriesTotal: number;
}

export class StorageRecovery {
  private running: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private timer: TimerHandle | null = null;
  private wake: (() => void) | null = null;
  private startedTotal = 0;
  private retriesTotal = 0;
  /** When the last recovery ended (clock ms). */
  private recoveredAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly target: RecoveryTarget,
    private readonly clock: Clock,
    private readonly onEvent: (event: RecoveryEvent) => void = () => undefined,
    private readonly retryMs = STORAGE_RECOVERY_RETRY_MS_DEFAULT,
  ) {
    if (!Number.isSafeInteger(retryMs) || retryMs < 1) {
      throw new Error('storage recovery: retryMs must be a positive integer');
    }
  }

  /** A recovery is running: the member's groups are stopped or starting. */
  get recovering(): boolean {
    return this.running !== null;
  }

  status(): StorageRecoveryStatus {
    const { startedTotal, retriesTotal } = this;
    return { recovering: this.running !== null, startedTotal, retriesTotal };
  }

  /**
   * Group `group` stopped on a storage failure `error`: starts a recovery, or, while one runs,
   * makes it run one more round (the failure may have come from a group it just started).
   */
  trigger(group: string, error: Error): void {
    if (this.closed) return;
    if (this.running !== null) {
      this.again = true;
      return;
    }
    this.startedTotal++;
    this.onEvent({ kind: 'started', group, error });
    const relapse = this.clock.nowMs() - this.recoveredAtMs < this.retryMs ? error : null;
    this.running = this.run(relapse).finally(() => {
      this.running = null;
    });
  }

  /** Resolves once no recovery runs (at once when none does). Never rejects. */
  settled(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  /** Stops retrying: a round in progress finishes, no new one starts. Idempotent. */
  close(): void {
    this.closed = true;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    this.wake?.();
  }

  /** Rounds until one succeeds; after a relapse (its error) the first waits like a retry. */
  private async run(relapse: Error | null): Promise<void> {
    const startedMs = this.clock.nowMs();
    let attempts = 0;
    if (relapse !== null) {
      this.retriesTotal++;
      this.onEvent({ kind: 'retrying', attempt: 0, error: relapse });
      await this.pause();
      if (this.closed) return;
    }
    do {
      this.again = false;
      for (;;) {
        attempts++;
        const error = await this.round();
        if (error === null || this.closed) break;
        this.retriesTotal++;
        this.onEvent({ kind: 'retrying', attempt: attempts, error });
        await this.pause();
        if (this.closed) return;
      }
    } while (this.again && !this.closed);
    if (this.closed) return;
    this.recoveredAtMs = this.clock.nowMs();
    this.onEvent({ kind: 'recovered', attempts, downMs: this.recoveredAtMs - startedMs });
  }

  /** One round: null when every group started again, else why not. */
  private async round(): Promise<Error | null> {
    try {
      await this.target.stopGroups();
      await this.target.reopenStorage();
      await this.target.startGroups();
      return null;
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
  }

  private pause(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        resolve();
      };
      this.timer = this.clock.setTimer(() => {
        this.timer = null;
        this.wake?.();
      }, this.retryMs);
    });
  }
}
