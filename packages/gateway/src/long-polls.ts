// The receives waiting right now, so a shutdown can end them all at once. One listener on the
// shutdown signal for the whole app instead of one per request keeps the receive path cheap.

export class LongPolls {
  private readonly active = new Set<AbortController>();
  private stopped = false;

  constructor(shutdownSignal: AbortSignal | undefined) {
    if (shutdownSignal?.aborted === true) this.stopped = true;
    shutdownSignal?.addEventListener('abort', () => this.stopAll(), { once: true });
  }

  /** Whether shutdown began: new receives should answer 204 at once. */
  get stopping(): boolean {
    return this.stopped;
  }

  /** Tracks a waiting receive; its controller is aborted on shutdown. */
  begin(controller: AbortController): void {
    if (this.stopped) controller.abort();
    else this.active.add(controller);
  }

  /** The receive stopped waiting. */
  end(controller: AbortController): void {
    this.active.delete(controller);
  }

  private stopAll(): void {
    this.stopped = true;
    for (const controller of this.active) controller.abort();
    this.active.clear();
  }
}
