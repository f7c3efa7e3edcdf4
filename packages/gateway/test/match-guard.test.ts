import { afterAll, describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { ManualClock } from '@spoolmq/protocol';
import { MATCH_CHECK_TIMEOUT_MS, MatchGuard } from '../src/match-guard.js';
import { MATCH_PATTERN_MAX_CHARS } from '../src/options.js';

// A manual clock that is never advanced here: no check times out while the worker answers.
const guard = new MatchGuard(new ManualClock());
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
    const clock = new ManualClock(1_000_000);
    const own = new MatchGuard(clock);
    try {
      for (let i = 0; i < 20; i++) await own.check(`unique-${i}`, 'flooder');
      await expect(own.check('unique-20', 'flooder')).rejects.toMatchObject({
        kind: 'rate_limited',
        details: { retryAfterMs: 200 },
      });
      // A pattern judged before costs nothing, and other accounts have budgets of their own.
      await own.check('unique-3', 'flooder');
      await own.check('unique-20', 'neighbour');
      await clock.advance(200);
      await own.check('unique-21', 'flooder');
    } finally {
      await own.close();
    }
  });
});

describe('the check timeout, on a manual clock', () => {
  it('fails a check the worker has not answered by the timeout with 503, then starts afresh', async () => {
    const clock = new ManualClock();
    const own = new MatchGuard(clock);
    try {
      // The timer is armed when the check is sent; advancing fires it before the worker (a real
      // thread, still starting) can answer, as a stuck worker would never answer.
      const stuck = own.check('^never-answered$').catch((error: unknown) => error);
      expect(clock.pendingTimers).toBe(1);
      await clock.advance(MATCH_CHECK_TIMEOUT_MS);
      expect(await stuck).toMatchObject({
        kind: 'unavailable',
        message: 'the match checker did not answer; retry',
      });
      expect(clock.pendingTimers).toBe(0);
      // The worker was retired; the next check gets a fresh one, which answers.
      await own.check('^answered$');
      expect(clock.pendingTimers).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('clears the timer of a check answered in time', async () => {
    const clock = new ManualClock();
    const own = new MatchGuard(clock);
    try {
      await own.check('^quick$');
      expect(clock.pendingTimers).toBe(0);
      await clock.advance(MATCH_CHECK_TIMEOUT_MS); // nothing left to fire
    } finally {
      await own.close();
    }
  });
});
