import { afterAll, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { MatchGuard } from '../src/match-guard.js';
import { MATCH_PATTERN_MAX_CHARS } from '../src/options.js';

const guard = new MatchGuard();
afterAll(() => guard.close());

async function verdictOf(pattern: string): Promise<string> {
  try {
    await guard.check(pattern);
    return 'ok';
  } catch (error) {
    expect(error).toBeInstanceOf(MqError);
    expect((error as MqError).details).toEqual({ field: 'match' });
    return (error as MqError).kind;
  }
}

describe('MatchGuard', () => {
  it('accepts RE2 patterns', async () => {
    for (const pattern of ['^jobs-', 'a|b', '^[a-z]+-[0-9]{1,3}$', '(?i)JOBS', '(?P<n>x)', '.{1000}']) {
      expect(await verdictOf(pattern), pattern).toBe('ok');
    }
  });

  it('refuses invalid syntax, lookaround and backreferences', async () => {
    for (const pattern of ['[', '(?=x)', '(?!x)y', '(?<=a)b', '(a)\\1', 'a{1001}']) {
      expect(await verdictOf(pattern), pattern).toBe('invalid_argument');
    }
  });

  it('refuses patterns too costly to compile, and keeps working afterwards', async () => {
    // \p{L}{100} exhausts re2-wasm's fixed heap; the worker that tried it is replaced.
    expect(await verdictOf('\\p{L}{100}')).toBe('invalid_argument');
    expect(await verdictOf('\\p{L}{1000}x')).toBe('invalid_argument');
    expect(await verdictOf('^still-fine$')).toBe('ok');
  });

  it('answers concurrent checks, including ones queued behind a heap abort', async () => {
    const patterns = ['^a', '\\p{L}{300}', '^b', '(', '^c'];
    const verdicts = await Promise.all(patterns.map((pattern) => verdictOf(`${pattern}`)));
    expect(verdicts).toEqual(['ok', 'invalid_argument', 'ok', 'invalid_argument', 'ok']);
  });

  it('refuses patterns longer than the bound without compiling', async () => {
    expect(await verdictOf('a'.repeat(MATCH_PATTERN_MAX_CHARS + 1))).toBe('invalid_argument');
  });
});

describe('new patterns per account', () => {
  it('lets an account check 20 new patterns at once and then one per 200 ms; repeats are free', async () => {
    const own = new MatchGuard();
    try {
      const t0 = 1_000_000;
      for (let i = 0; i < 20; i++) await own.check(`unique-${i}`, 'flooder', t0);
      await expect(own.check('unique-20', 'flooder', t0)).rejects.toMatchObject({
        kind: 'rate_limited',
        details: { retryAfterMs: 200 },
      });
      // A pattern judged before costs nothing, and other accounts have budgets of their own.
      await own.check('unique-3', 'flooder', t0);
      await own.check('unique-20', 'neighbour', t0);
      await own.check('unique-21', 'flooder', t0 + 200);
    } finally {
      await own.close();
    }
  });
});
