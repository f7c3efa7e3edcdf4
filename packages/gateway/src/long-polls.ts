// The receives waiting right now, so a shutdown can end them all at once. One listener on the
// shutdown signal for the whole app instead of one per request keeps the receive path cheap.
// Each account may hold at most `perAccountMax` of them on this process: a long poll holds a
// connection and a waiter for up to 20 s, and one account's workers must not hold them all.

import { MqError } from '@spoolmq/engine';

/** Long polls one account may hold open on one process (a large worker pool's worth). */
export const LONG_POLLS_PER_ACCOUNT_MAX = 4_096;

export class LongPolls {
  private readonly active = new Set<AbortController>();
  private readonly byAccount = new Map<string, number>();
  private stopped = false;

  constructor(
    shutdownSignal: AbortSignal | undefined,
    private readonly perAccountMax = LONG_POLLS_PER_ACCOUNT_MAX,
  ) {
    if (shutdownSignal?.aborted === true) this.stopped = true;
    shutdownSignal?.addEventListener('abort', () => this.stopAll(), { once: true });
  }

  /** Whether shutdown began: new receives should answer 204 at once. */
  get stopping(): boolean {
    return this.stopped;
  }

  /**
   * Tracks a waiting receive of `account` (undefined: no accounts, `mq local`); its controller
   * is aborted on shutdown. Throws 429 rate_limited when the account holds perAccountMax already;
   * then nothing is tracked and `end` must not be called.
   */
  begin(controller: AbortController, account: string | undefined): void {
    const key = account ?? '';
    const held = this.byAccount.get(key) ?? 0;
    if (held >= this.perAccountMax) {
      throw new MqError('rate_limited', 'too many receives waiting for this account', {
        retryAfterMs: 1_000,
      });
    }
    this.byAccount.set(key, held + 1);
    if (this.stopped) controller.abort();
    else this.active.add(controller);
  }

  /** The receive of `account` stopped waiting. */
  end(controller: AbortController, account: string | undefined): void {
    this.active.delete(controller);
    const key = account ?? '';
    const held = this.byAccount.get(key) ?? 1;
    if (held <= 1) this.byAccount.delete(key);
    else this.byAccount.set(key, held - 1);
  }

  private stopAll(): void {
    this.stopped = true;
    for (const controller of this.active) controller.abort();
    this.active.clear();
  }
}
