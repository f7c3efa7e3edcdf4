import { describe, expect, it } from 'vitest';
import {
  ManualClock,
  TIMER_DELAY_MAX_MS,
  afterTurn,
  monotonicClock,
  repeatEvery,
  systemClock,
} from '../src/clock.js';

describe('ManualClock', () => {
  it('fires due timers in deadline order, setting the time to each deadline', async () => {
    const clock = new ManualClock(1000);
    const fired: [string, number][] = [];
    clock.setTimer(() => fired.push(['b', clock.nowMs()]), 20);
    clock.setTimer(() => fired.push(['a', clock.nowMs()]), 10);
    clock.setTimer(() => fired.push(['c', clock.nowMs()]), 20);
    const late = clock.setTimer(() => fired.push(['late', clock.nowMs()]), 31);
    await clock.advance(30);
    expect(fired).toEqual([
      ['a', 1010],
      ['b', 1020],
      ['c', 1020],
    ]);
    expect(clock.nowMs()).toBe(1030);
    clock.clearTimer(late);
    await clock.advance(100);
    expect(fired.length).toBe(3);
    expect(clock.pendingTimers).toBe(0);
  });

  it('timers set by a firing timer fire in the same advance when due', async () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    clock.setTimer(() => {
      fired.push(clock.nowMs());
      clock.setTimer(() => fired.push(clock.nowMs()), 5);
    }, 5);
    await clock.advance(10);
    expect(fired).toEqual([5, 10]);
  });

  it('lets promise continuations started by a timer finish before the next timer', async () => {
    const clock = new ManualClock(0);
    const order: string[] = [];
    clock.setTimer(() => {
      void Promise.resolve().then(() => order.push('continuation'));
    }, 1);
    clock.setTimer(() => order.push('second'), 2);
    await clock.advance(2);
    expect(order).toEqual(['continuation', 'second']);
  });

  it('fails loudly on a runaway timer loop', async () => {
    const clock = new ManualClock(0);
    const again = (): void => {
      clock.setTimer(again, 0);
    };
    clock.setTimer(again, 0);
    await expect(clock.advance(1)).rejects.toThrow(/too many timers/);
  });
});

describe('systemClock', () => {
  it('reads wall time and fires timers (long delays clamped to what setTimeout honours)', async () => {
    const before = Date.now();
    expect(systemClock.nowMs()).toBeGreaterThanOrEqual(before);
    await new Promise<void>((resolve) => systemClock.setTimer(resolve, 1));
    const never = systemClock.setTimer(() => {
      throw new Error('cleared timer fired');
    }, TIMER_DELAY_MAX_MS * 10);
    systemClock.clearTimer(never);
  });
});

describe('monotonicClock', () => {
  it('reads performance.now, not an epoch, and fires timers', async () => {
    const before = performance.now();
    const read = monotonicClock.nowMs();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThan(Date.now() / 2); // process uptime, far below any epoch time
    await new Promise<void>((resolve) => monotonicClock.setTimer(resolve, 1));
  });
});

describe('afterTurn', () => {
  it('runs after the current turn, once, after queued microtasks', async () => {
    const order: string[] = [];
    afterTurn(() => order.push('turn'));
    queueMicrotask(() => order.push('microtask'));
    order.push('now');
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['now', 'microtask', 'turn']);
  });
});

describe('repeatEvery', () => {
  it('runs every interval until stopped, and a tick may stop it', async () => {
    const clock = new ManualClock(0);
    const ticks: number[] = [];
    const stop = repeatEvery(clock, 10, () => ticks.push(clock.nowMs()));
    await clock.advance(35);
    expect(ticks).toEqual([10, 20, 30]);
    stop();
    await clock.advance(100);
    expect(ticks).toEqual([10, 20, 30]);
    expect(clock.pendingTimers).toBe(0);

    let runs = 0;
    const stopSelf: () => void = repeatEvery(clock, 5, () => {
      if (++runs === 2) stopSelf();
    });
    await clock.advance(50);
    expect(runs).toBe(2);
    expect(clock.pendingTimers).toBe(0);
  });
});
