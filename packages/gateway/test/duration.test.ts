import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { DELAY_MAX_MS, parseDurationMs } from '../src/duration.js';

describe('parseDurationMs', () => {
  it('parses Go-style integer+unit pairs into milliseconds', () => {
    const cases: [string, number][] = [
      ['0', 0],
      ['0s', 0],
      ['500ms', 500],
      ['90s', 90_000],
      ['1m', 60_000],
      ['1h30m', 5_400_000],
      ['1h30m15s250ms', 5_415_250],
      ['168h', DELAY_MAX_MS],
      ['10080m', DELAY_MAX_MS],
      ['604800000ms', DELAY_MAX_MS],
      ['30m1h', 5_400_000],
    ];
    for (const [text, ms] of cases) expect(parseDurationMs('Svc-Delay', text), text).toBe(ms);
  });

  it('refuses fractions, other units, signs, spaces, bare numbers and more than 168h', () => {
    for (const text of ['', '1.5s', '10us', '1ns', '-1s', '+1s', '5', '00', '1h 30m', ' 1s', '1s ', 's', 'ms', '1H', '1d', '168h1ms', '169h', '99999999999h', '1m5']) {
      let error: unknown;
      try {
        parseDurationMs('Svc-Delay', text);
      } catch (caught) {
        error = caught;
      }
      expect(error, text).toBeInstanceOf(MqError);
      expect((error as MqError).kind).toBe('invalid_argument');
      expect((error as MqError).details).toEqual({ field: 'Svc-Delay' });
    }
  });

  it('round-trips any h/m/s/ms composition within the bound', () => {
    fc.assert(
      fc.property(
        fc.nat(168),
        fc.nat(59),
        fc.nat(59),
        fc.nat(999),
        (h, m, s, ms) => {
          const total = ((h * 60 + m) * 60 + s) * 1000 + ms;
          fc.pre(total <= DELAY_MAX_MS);
          expect(parseDurationMs('d', `${h}h${m}m${s}s${ms}ms`)).toBe(total);
        },
      ),
      { numRuns: 200 },
    );
  });
});
