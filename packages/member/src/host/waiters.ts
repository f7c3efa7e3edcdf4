// Long-poll receivers waiting on one queue, in arrival order, bounded. A waiter ends exactly once:
// with a delivery, or with null when its wait elapses, its client goes away (abort signal), the
// queue is deleted, or the service closes.

import type { Delivery } from '@spoolmq/engine';
import type { Clock, TimerHandle } from '@spoolmq/protocol';

export class Waiter {
  done = false;
  timer: TimerHandle | null = null;
  signal: AbortSignal | null = null;
  onAbort: (() => void) | null = null;

  constructor(readonly resolve: (delivery: Delivery | null) => void) {}
}

export class WaiterList {
  private items: Waiter[] = [];
  private head = 0;
  private live = 0;

  /** `max`: waiters held at once (>= 1). */
  constructor(
    readonly max: number,
    private readonly clock: Clock,
  ) {}

  /** Waiters still waiting. */
  get size(): number {
    return this.live;
  }

  /**
   * Adds a waiter that ends with null after `waitMs` or when `signal` aborts.
   * Returns false (and adds nothing) when the list is full.
   */
  add(waiter: Waiter, waitMs: number, signal: AbortSignal | undefined): boolean {
    if (this.live >= this.max) return false;
    waiter.timer = this.clock.setTimer(() => this.finish(waiter, null), waitMs);
    if (signal !== undefined) {
      waiter.signal = signal;
      waiter.onAbort = () => this.finish(waiter, null);
      signal.addEventListener('abort', waiter.onAbort, { once: true });
    }
    this.items.push(waiter);
    this.live++;
    return true;
  }

  /** Ends the longest-waiting waiter with `delivery`. Returns false when none is waiting. */
  deliverToFirst(delivery: Delivery): boolean {
    while (this.head < this.items.length) {
      const waiter = this.items[this.head++]!;
      if (waiter.done) continue;
      this.finish(waiter, delivery);
      this.trim();
      return true;
    }
    this.trim();
    return false;
  }

  /** Ends every waiter with null. */
  finishAll(): void {
    for (let i = this.head; i < this.items.length; i++) this.finish(this.items[i]!, null);
    this.items = [];
    this.head = 0;
  }

  /** Ends `waiter` once: clears its timer and abort listener, then resolves it. */
  finish(waiter: Waiter, delivery: Delivery | null): void {
    if (waiter.done) return;
    waiter.done = true;
    this.live--;
    if (waiter.timer !== null) this.clock.clearTimer(waiter.timer);
    if (waiter.signal !== null && waiter.onAbort !== null) {
      waiter.signal.removeEventListener('abort', waiter.onAbort);
    }
    waiter.resolve(delivery);
  }

  private trim(): void {
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
  }
}
