// The leases a primary took over: which earlier-term tokens they accept, and the term a held
// lease's token carries.

import { describe, expect, it } from 'vitest';
import { AdoptedLeases } from '../../src/host/adopted-leases.js';

describe('AdoptedLeases', () => {
  const adopted = new AdoptedLeases([
    { queueGen: 1, seq: 10, gen: 0, delivery: 2, deadlineMs: Infinity, term: 4 },
    { queueGen: 2, seq: 10, gen: 3, delivery: 1, deadlineMs: 5, term: 3 },
  ]);

  it('accepts exactly the term and delivery of an adopted lease', () => {
    expect(adopted.size).toBe(2);
    expect(adopted.accepts(4, 1, 10, 2)).toBe(true);
    expect(adopted.accepts(3, 2, 10, 1)).toBe(true);
    expect(adopted.accepts(3, 1, 10, 2)).toBe(false); // another term
    expect(adopted.accepts(4, 1, 10, 1)).toBe(false); // an earlier delivery
    expect(adopted.accepts(4, 1, 11, 2)).toBe(false); // another message
    expect(new AdoptedLeases().accepts(4, 1, 10, 2)).toBe(false);
  });

  it('names the term of the token of a held lease: adopted, or minted by this primary', () => {
    expect(adopted.termOf(1, 10, 2, 9)).toBe(4);
    expect(adopted.termOf(1, 10, 3, 9)).toBe(9); // delivered again by this primary
    expect(adopted.termOf(5, 1, 1, 9)).toBe(9);
  });

  it('accepts failure leases of the handed-off term only', () => {
    const handedOff = new AdoptedLeases([], 6);
    expect(handedOff.acceptsFailureLease(6)).toBe(true);
    expect(handedOff.acceptsFailureLease(5)).toBe(false);
    expect(handedOff.acceptsFailureLease(7)).toBe(false);
    expect(adopted.acceptsFailureLease(4)).toBe(false); // no term given: no hand-off term
    expect(new AdoptedLeases().acceptsFailureLease(0)).toBe(false);
  });
});
