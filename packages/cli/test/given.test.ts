import { describe, expect, it } from 'vitest';
import { given } from '../src/given.js';

describe('given', () => {
  it('keeps the named entries whose value is given, and nothing else', () => {
    const options = { a: 1, b: undefined as number | undefined, c: 0, d: 'x' };
    expect(given(options, ['a', 'b', 'c'])).toEqual({ a: 1, c: 0 });
    expect('b' in given(options, ['b'])).toBe(false);
  });
});
