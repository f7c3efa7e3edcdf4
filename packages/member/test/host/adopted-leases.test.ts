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

  it('accepts failure leases of the hand-off chain\'s terms only, and names its first term', () => {
    const handedOff = new AdoptedLeases([], { term: 6, failureFromTerm: 4 });
    expect([3, 4, 5, 6, 7].map((term) => handedOff.acceptsFailureLease(term))).toEqual([false, true, true, true, false]);
    expect(handedOff.failureLeasesFromTerm(8)).toBe(4);
    expect(adopted.acceptsFailureLease(4)).toBe(false); // no hand-off given: no term accepted
    expect(adopted.failureLeasesFromTerm(8)).toBe(8);
    expect(new AdoptedLeases().acceptsFailureLease(0)).toBe(false);
  });
});
