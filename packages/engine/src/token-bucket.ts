// The receive rate limit of one queue: a token bucket, primary-local (never replicated). One
// token per `intervalMicros`, at most `burst` held; a new bucket starts full.

export class TokenBucket {
  private tokens: number;
  private refilledAtMs: number;

  /** `intervalMicros` >= 1 and `burst` >= 1; both 0 is expressed by having no bucket. */
  constructor(
    readonly intervalMicros: number,
    readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.refilledAtMs = nowMs;
  }

  /** Takes one token if one is available at `nowMs`. */
  tryTake(nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Whether a token is available at `nowMs` (does not take it). */
  hasToken(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= 1;
  }

  /** Earliest time (ms, rounded up) at which a token is available; `nowMs` if one is now. */
  nextTokenAtMs(nowMs: number): number {
    this.refill(nowMs);
    if (this.tokens >= 1) return nowMs;
    const missingMicros = (1 - this.tokens) * this.intervalMicros;
    return nowMs + Math.max(1, Math.ceil(missingMicros / 1000));
  }

  private refill(nowMs: number): void {
    const elapsedMs = nowMs - this.refilledAtMs;
    if (elapsedMs <= 0) return;
    this.refilledAtMs = nowMs;
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs * 1000) / this.intervalMicros);
  }
}
