// Time for the I/O shells, injected: the system clock with real timers, and a manual clock for
// tests that fires timers in time order only when told to advance. It lives here, the lowest
// package both the gateway and the member depend on, so the two share one Clock (the engine is
// pure and holds no timer). The engine never sees a clock: the shell reads the time and passes it.

export type TimerHandle = object;

export interface Clock {
  /** Epoch milliseconds (monotonicClock: milliseconds since an arbitrary origin). */
  nowMs(): number;
  /** Calls `callback` once after `delayMs` (>= 0). */
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

/** Longest delay setTimeout honours; longer timers fire early and the host re-arms. */
export const TIMER_DELAY_MAX_MS = 2_147_483_647;

/** Real time and timers. Timers are unref'd: a pending deadline never keeps a process alive. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  setTimer(callback, delayMs) {
    const timer = setTimeout(callback, Math.min(Math.max(0, delayMs), TIMER_DELAY_MAX_MS));
    timer.unref();
    return timer;
  },
  clearTimer(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/**
 * Real timers on the monotonic clock: the cluster layer's time, which is Raft's (RaftNode ticks
 * on performance.now), for deadlines and retries a wall-clock step must not stretch or cut.
 * `nowMs` is not an epoch: compare it only with itself.
 */
export const monotonicClock: Clock = {
  nowMs: () => performance.now(),
  setTimer: systemClock.setTimer,
  clearTimer: systemClock.clearTimer,
};

/**
 * Runs `callback` once the current event-loop turn's I/O callbacks are done (setImmediate). No
 * time passes, so it is no timer and needs no Clock: it batches what one turn produced.
 */
export function afterTurn(callback: () => void): void {
  setImmediate(callback);
}

/**
 * Runs `tick` every `intervalMs` on `clock` until the returned stop is called. Each run arms the
 * next after `tick` returns, so a slow tick delays the next one instead of stacking runs, and a
 * tick may call the stop itself.
 */
export function repeatEvery(clock: Clock, intervalMs: number, tick: () => void): () => void {
  let stopped = false;
  const run = (): void => {
    tick();
    if (!stopped) timer = clock.setTimer(run, intervalMs);
  };
  let timer = clock.setTimer(run, intervalMs);
  return () => {
    stopped = true;
    clock.clearTimer(timer);
  };
}

interface ManualTimer {
  readonly id: number;
  readonly atMs: number;
  readonly callback: () => void;
}

/** Bound on timers fired by one `advance` (a runaway re-arming loop fails loudly instead). */
const MANUAL_FIRES_MAX = 100_000;

/**
 * A clock that moves only when told. `advance` fires due timers in time order, setting the time to
 * each timer's deadline first and letting promise continuations run after each (so async work a
 * timer starts completes before the next fires).
 */
export class ManualClock implements Clock {
  private now: number;
  private nextId = 1;
  private readonly timers = new Map<number, ManualTimer>();

  constructor(startMs = Date.UTC(2026, 10, 21, 10, 0, 0)) {
    this.now = startMs;
  }

  nowMs(): number {
    return this.now;
  }

  setTimer(callback: () => void, delayMs: number): TimerHandle {
    const atMs = this.now + Math.max(0, delayMs);
    const timer: ManualTimer = { id: this.nextId++, atMs, callback };
    this.timers.set(timer.id, timer);
    return timer;
  }

  clearTimer(handle: TimerHandle): void {
    this.timers.delete((handle as ManualTimer).id);
  }

  /** Sets the time without firing timers; may step backwards (to test clock steps). */
  set(ms: number): void {
    this.now = ms;
  }

  /** Timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing every timer due by then in order. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms;
    for (let fired = 0; ; fired++) {
      if (fired >= MANUAL_FIRES_MAX) {
        throw new Error('ManualClock: too many timers fired in one advance');
      }
      const next = this.earliest();
      if (next === undefined || next.atMs > target) break;
      this.timers.delete(next.id);
      if (next.atMs > this.now) this.now = next.atMs;
      next.callback();
      await settle();
    }
    this.now = target;
    await settle();
  }

  private earliest(): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const timer of this.timers.values()) {
      const earlier = best === undefined || timer.atMs < best.atMs;
      if (earlier || (timer.atMs === best!.atMs && timer.id < best!.id)) {
        best = timer;
      }
    }
    return best;
  }
}

/** Lets pending promise continuations (and I/O callbacks) run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
