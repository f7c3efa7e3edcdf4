// Duration values of `Svc-Delay` (release, ack-and-send): Go `time.ParseDuration` syntax limited
// to non-negative integers and the units ms, s, m, h, e.g. `0`, `500ms`, `90s`, `1h30m`.

import { invalidArgument } from '@spoolmq/engine';

/** Largest delay any operation accepts: 168 hours, in milliseconds. */
export const DELAY_MAX_MS = 604_800_000;

const MS_PER_UNIT: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
/** Digits in one number: ten are already far beyond 168h in any unit. */
const NUMBER_DIGITS_MAX = 10;

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** Reads the unit starting at `at`: `ms`, `s`, `m` or `h`; returns it or undefined. */
function unitAt(text: string, at: number): string | undefined {
  if (text.startsWith('ms', at)) return 'ms';
  const unit = text[at];
  return unit === 's' || unit === 'm' || unit === 'h' ? unit : undefined;
}

/**
 * Parses a duration into milliseconds, 0 .. 604,800,000. A bare `0` is allowed; otherwise one or
 * more integer+unit pairs (`1h30m`, `250ms`). Fractions, signs, spaces, other units, a number
 * without a unit and anything above 168h throw invalid_argument naming `field`.
 */
export function parseDurationMs(field: string, text: string): number {
  if (text === '0') return 0;
  const bad = (): never => {
    const message = `${field} must be a duration such as 500ms, 90s or 1h30m, at most 168h`;
    throw invalidArgument(field, message);
  };
  if (text.length === 0) bad();
  let totalMs = 0;
  let at = 0;
  while (at < text.length) {
    const start = at;
    while (at < text.length && isDigit(text.charCodeAt(at))) at += 1;
    if (at === start || at - start > NUMBER_DIGITS_MAX) bad();
    const unit = unitAt(text, at);
    if (unit === undefined) return bad();
    totalMs += Number(text.slice(start, at)) * (MS_PER_UNIT[unit] as number);
    if (totalMs > DELAY_MAX_MS) bad();
    at += unit.length;
  }
  return totalMs;
}
