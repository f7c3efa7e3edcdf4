import { describe, expect, it } from 'vitest';
import { MESSAGE_SIZE_MAX_BYTES_DEFAULT, MESSAGE_SIZE_MAX_BYTES_LIMIT, resolveOptions } from '../src/options.js';

describe('resolveOptions', () => {
  it('applies the defaults', () => {
    const resolved = resolveOptions();
    expect(resolved.messageSizeMaxBytes).toBe(MESSAGE_SIZE_MAX_BYTES_DEFAULT);
    expect(resolved.messageSizeMaxBytes).toBe(1_048_576);
    expect(resolved.metricsPublic).toBe(true);
    expect(resolved.authenticate).toBeUndefined();
    expect(resolved.shutdownSignal).toBeUndefined();
  });

  it('refuses message size limits outside 1..64 MiB', () => {
    for (const bad of [0, -1, 1.5, MESSAGE_SIZE_MAX_BYTES_LIMIT + 1, Number.NaN]) {
      expect(() => resolveOptions({ messageSizeMaxBytes: bad })).toThrow();
    }
    expect(resolveOptions({ messageSizeMaxBytes: 1 }).messageSizeMaxBytes).toBe(1);
  });
});
