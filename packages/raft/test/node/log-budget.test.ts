import { describe, expect, it } from 'vitest';
import { RaftConfigError } from '../../src/core/config.js';
import { LogBudget } from '../../src/node/log-budget.js';

describe('LogBudget', () => {
  it('sums what its shares keep, and forgets a share that left', () => {
    const budget = new LogBudget(1000);
    const a = budget.join();
    const b = budget.join();
    a.set(300);
    b.set(500);
    a.set(400); // replaces a's count, does not add to it
    expect([budget.heldBytes, budget.holders]).toEqual([900, 2]);
    a.leave();
    a.leave();
    a.set(700); // a share that left counts nothing
    expect([budget.heldBytes, budget.holders]).toEqual([500, 1]);
  });

  it('makes due only a share holding at least the mean, once the total is over', () => {
    const budget = new LogBudget(1000);
    const big = budget.join();
    const small = budget.join();
    const empty = budget.join();
    big.set(700);
    small.set(300);
    expect(big.due()).toBe(false); // 1000 is not over 1000
    small.set(301);
    expect([big.due(), small.due(), empty.due()]).toEqual([true, false, false]);
    big.set(0); // it snapshotted
    expect(small.due()).toBe(false); // 301 is under budget again
    small.set(1001);
    expect(small.due()).toBe(true);
    small.leave();
    expect(small.due()).toBe(false); // no longer a share
  });

  it('refuses a budget that is not a positive integer', () => {
    for (const bytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => new LogBudget(bytes)).toThrow(RaftConfigError);
    }
  });
});
