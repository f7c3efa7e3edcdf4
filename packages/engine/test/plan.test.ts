import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN, resolvePlan } from '../src/plan.js';

describe('plan', () => {
  it('has the local defaults of decisions.md', () => {
    expect(DEFAULT_PLAN).toMatchObject({
      queuesPerSpoolMax: 1000,
      retentionLimitSeconds: 1_209_600,
      retentionDefaultSeconds: 345_600,
      messagesPerSpoolMax: 1_000_000,
      payloadBytesPerSpoolMax: 1_073_741_824,
      messageSizeMaxBytes: 1_048_576,
    });
  });

  it('overrides fields and refuses nonsense', () => {
    expect(resolvePlan({ queuesPerSpoolMax: 5 }).queuesPerSpoolMax).toBe(5);
    expect(() => resolvePlan({ queuesPerSpoolMax: 0 })).toThrow(/at least 1/);
    expect(() => resolvePlan({ messagesPerSpoolMax: -1 })).toThrow(/non-negative/);
    expect(() => resolvePlan({ retentionLimitSeconds: 1.5 })).toThrow(/non-negative integer/);
    expect(() => resolvePlan({ messageSizeMaxBytes: 10, payloadBytesPerSpoolMax: 5 })).toThrow(/exceeds/);
    expect(resolvePlan({ retentionLimitSeconds: 0 }).retentionLimitSeconds).toBe(0);
  });
});
