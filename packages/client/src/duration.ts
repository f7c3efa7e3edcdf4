// The `Svc-Delay` Duration syntax (release, ack-and-send): integer and unit pairs as in Go's
// time.ParseDuration, at most 168h. The client always writes one pair.

/** Longest delay the interface accepts: 168 hours, in milliseconds. */
export const DELAY_MS_MAX = 604_800_000;

/**
 * Formats a delay in whole milliseconds (0 .. 604,800,000) as a Duration: `0`, `90s`, `1500ms`.
 * Throws RangeError for a negative, fractional or too large value.
 */
export function formatDelay(delayMs: number): string {
  if (!Number.isInteger(delayMs) || delayMs < 0 || delayMs > DELAY_MS_MAX) {
    throw new RangeError(`delayMs must be an integer in 0..${DELAY_MS_MAX}, got ${delayMs}`);
  }
  if (delayMs === 0) return '0';
  return delayMs % 1000 === 0 ? `${delayMs / 1000}s` : `${delayMs}ms`;
}
