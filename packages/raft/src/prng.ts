// Seeded pseudo-random numbers, the one generator of the project's simulations: the Raft
// simulator (raft/test/sim) and the chaos schedules and workloads (testkit/src/chaos) draw from
// it. xoshiro128** seeded through splitmix32, so one 32-bit seed replays a run bit for bit. Never
// Math.random.

import assert from 'node:assert/strict';
import { defined } from './core/assert.js';

function splitmix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** `seed` is any integer; only its low 32 bits matter. */
  constructor(seed: number) {
    const state = { s: seed | 0 };
    this.a = splitmix32(state);
    this.b = splitmix32(state);
    this.c = splitmix32(state);
    this.d = splitmix32(state);
  }

  /** Uniform 32-bit unsigned integer. */
  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextU32() / 4294967296;
  }

  /** Uniform integer in [0, n); n >= 1. */
  int(n: number): number {
    assert(Number.isInteger(n) && n >= 1, `Prng.int: n must be a positive integer, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi]; lo <= hi. */
  range(lo: number, hi: number): number {
    assert(lo <= hi, `Prng.range: empty range [${lo}, ${hi}]`);
    return lo + this.int(hi - lo + 1);
  }

  /** True with probability p in [0, 1]. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element, uniformly; the list must not be empty. */
  pick<T>(items: readonly T[]): T {
    assert(items.length > 0, 'Prng.pick: empty list');
    return defined(items[this.int(items.length)], 'index in range');
  }

  /** A copy of `items` in a uniformly random order (Fisher-Yates). */
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [defined(out[j], 'j in range'), defined(out[i], 'i in range')];
    }
    return out;
  }

  /** A new generator derived from this one (independent streams per purpose). */
  fork(): Prng {
    return new Prng(this.nextU32());
  }
}

/** Index into `weights` chosen with probability proportional to its weight; weights >= 0. */
export function pickWeighted(prng: Prng, weights: readonly number[]): number {
  let sum = 0;
  for (const weight of weights) {
    assert(weight >= 0 && Number.isFinite(weight), `pickWeighted: bad weight ${weight}`);
    sum += weight;
  }
  assert(sum > 0, 'pickWeighted: all weights are zero');
  let point = prng.next() * sum;
  for (let i = 0; i < weights.length; i += 1) {
    point -= defined(weights[i], 'weight');
    if (point < 0) return i;
  }
  // Rounding can leave point at exactly 0 past the last positive weight.
  for (let i = weights.length - 1; i >= 0; i -= 1) if (defined(weights[i], 'weight') > 0) return i;
  return 0;
}
