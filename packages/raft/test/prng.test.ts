// The seeded generator: same seed, same stream; ranges respected; weighted picks follow weights.

import { describe, expect, it } from 'vitest';
import { Prng, pickWeighted } from '../src/prng.js';

describe('Prng', () => {
  it('replays a stream from its seed and differs across seeds', () => {
    const draw = (seed: number): number[] => {
      const prng = new Prng(seed);
      return Array.from({ length: 20 }, () => prng.nextU32());
    };
    expect(draw(42)).toEqual(draw(42));
    expect(draw(43)).not.toEqual(draw(42));
  });

  it('keeps range, int and shuffle within bounds', () => {
    const prng = new Prng(1);
    for (let i = 0; i < 1_000; i += 1) {
      const value = prng.range(-3, 3);
      expect(value).toBeGreaterThanOrEqual(-3);
      expect(value).toBeLessThanOrEqual(3);
      expect(Number.isInteger(value)).toBe(true);
    }
    expect(prng.shuffle([1, 2, 3, 4, 5]).sort()).toEqual([1, 2, 3, 4, 5]);
    expect(() => prng.int(0)).toThrow(/positive integer/);
    expect(() => prng.pick([])).toThrow(/empty/);
  });

  it('picks by weight and never a zero weight', () => {
    const prng = new Prng(7);
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i += 1) counts[pickWeighted(prng, [1, 0, 2])]! += 1;
    expect(counts[1]).toBe(0);
    expect(counts[2]!).toBeGreaterThan(counts[0]!);
    expect(() => pickWeighted(prng, [0, 0])).toThrow(/all weights are zero/);
  });
});
