import { describe, expect, it } from 'vitest';
import { RaftAssertionError, assert, defined } from '../../src/core/assert.js';

describe('assert and defined', () => {
  it('pass a holding invariant through and fail loudly with the message otherwise', () => {
    expect(() => assert(true, 'holds')).not.toThrow();
    expect(() => assert(false, 'term went back')).toThrow(RaftAssertionError);
    expect(() => assert(false, 'term went back')).toThrow(/assertion failed: term went back/);
    expect(defined([7, 8][1], 'in range')).toBe(8);
    expect(defined<number | null>(null, 'null is a value')).toBeNull();
    expect(() => defined([7][3], 'entry in log')).toThrow(/assertion failed: entry in log/);
  });
});
