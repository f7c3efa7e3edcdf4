import type { Delivery } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { Waiter, WaiterList } from '../../src/host/waiters.js';

function delivery(id: string): Delivery {
  return { payload: new Uint8Array(), lease: 'L'.repeat(16), messageId: id, retries: 0 };
}

function waiter(results: (string | null)[]): Waiter {
  return new Waiter((d) => results.push(d === null ? null : d.messageId));
}

describe('WaiterList', () => {
  it('delivers to waiters in arrival order', () => {
    const clock = new ManualClock(0);
    const list = new WaiterList(10, clock);
    const results: (string | null)[] = [];
    list.add(waiter(results), 1000, undefined);
    list.add(waiter(results), 1000, undefined);
    expect(list.deliverToFirst(delivery('1'))).toBe(true);
    expect(list.deliverToFirst(delivery('2'))).toBe(true);
    expect(list.deliverToFirst(delivery('3'))).toBe(false);
    expect(results).toEqual(['1', '2']);
    expect(clock.pendingTimers).toBe(0);
  });

  it('ends a waiter with null when its wait elapses; it is skipped afterwards', async () => {
    const clock = new ManualClock(0);
    const list = new WaiterList(10, clock);
    const results: (string | null)[] = [];
    list.add(waiter(results), 100, undefined);
    list.add(waiter(results), 500, undefined);
    await clock.advance(100);
    expect(results).toEqual([null]);
    expect(list.size).toBe(1);
    list.deliverToFirst(delivery('x'));
    expect(results).toEqual([null, 'x']);
  });

  it('ends a waiter with null when its signal aborts, and removes the listener when it ends otherwise', () => {
    const clock = new ManualClock(0);
    const list = new WaiterList(10, clock);
    const results: (string | null)[] = [];
    const aborted = new AbortController();
    const kept = new AbortController();
    list.add(waiter(results), 1000, aborted.signal);
    list.add(waiter(results), 1000, kept.signal);
    aborted.abort();
    expect(results).toEqual([null]);
    list.deliverToFirst(delivery('y'));
    kept.abort();
    expect(results).toEqual([null, 'y']);
    expect(list.size).toBe(0);
  });

  it('is bounded, and finishAll ends everyone with null once', () => {
    const clock = new ManualClock(0);
    const list = new WaiterList(2, clock);
    const results: (string | null)[] = [];
    expect(list.add(waiter(results), 10, undefined)).toBe(true);
    expect(list.add(waiter(results), 10, undefined)).toBe(true);
    expect(list.add(waiter(results), 10, undefined)).toBe(false);
    list.finishAll();
    expect(results).toEqual([null, null]);
    expect(list.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });
});
