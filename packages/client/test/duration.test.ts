import { describe, expect, it } from 'vitest';
import { DELAY_MS_MAX, formatDelay } from '../src/index.js';

describe('formatDelay', () => {
  it('writes one integer and unit pair', () => {
    expect(formatDelay(0)).toBe('0');
    expect(formatDelay(500)).toBe('500ms');
    expect(formatDelay(90_000)).toBe('90s');
    expect(formatDelay(1_500)).toBe('1500ms');
    expect(formatDelay(DELAY_MS_MAX)).toBe('604800s');
  });

  it('refuses what the interface cannot carry', () => {
    expect(() => formatDelay(-1)).toThrow(RangeError);
    expect(() => formatDelay(1.5)).toThrow(RangeError);
    expect(() => formatDelay(DELAY_MS_MAX + 1)).toThrow(RangeError);
  });
});
