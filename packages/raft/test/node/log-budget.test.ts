import { describe, expect, it } from 'vitest';
import { RaftConfigError } from '../../src/core/config.js';
import { LogBudget } from '../../src/node/log-budget.js';

describe('LogBudget', () => {
  it('sums what its holders keep, and forgets a removed one', () => {
    const budget = new LogBudget(1000);
    const a = {};
    const b = {};
    budget.set(a, 300);
    budget.set(b, 500);
    budget.set(a, 400); // replaces a's count, does not add to it
    expect([budget.heldBytes, budget.holders]).toEqual([900, 2]);
    budget.remove(a);
    budget.remove(a);
    expect([budget.heldBytes, budget.holders]).toEqual([500, 1]);
  });

  it('makes due only a holder with at least its share, once the total is over', () => {
    const budget = new LogBudget(1000);
    const big = {};
    const small = {};
    const empty = {};
    budget.set(big, 700);
    budget.set(small, 300);
    budget.set(empty, 0);
    expect(budget.due(big)).toBe(false); // 1000 is not over 1000
    budget.set(small, 301);
    expect([budget.due(big), budget.due(small), budget.due(empty)]).toEqual([true, false, false]);
    budget.set(big, 0); // it snapshotted
    expect(budget.due(small)).toBe(false); // 301 is under budget again
    budget.set(small, 1001);
    expect(budget.due(small)).toBe(true);
    expect(budget.due({})).toBe(false); // not a holder
  });

  it('refuses a budget that is not a positive integer', () => {
    for (const bytes of [0, -1, 1.5, Number.NaN]) {
      expect(() => new LogBudget(bytes)).toThrow(RaftConfigError);
    }
  });
});
