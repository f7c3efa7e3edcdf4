import { describe, expect, it } from 'vitest';
import { messageJson, pageJson, queueJson, spoolJson, statsPageJson, timestamp } from '../src/views.js';
import { counts, queueView, T0_MS } from './fake-service.js';

const T0 = '2026-11-21T10:00:00.000Z';

describe('views', () => {
  it('renders timestamps as RFC 3339 UTC with milliseconds', () => {
    expect(timestamp(T0_MS)).toBe(T0);
    expect(timestamp(T0_MS + 7)).toBe('2026-11-21T10:00:00.007Z');
    expect(() => timestamp(Number.NaN)).toThrow();
  });

  it('renders a queue with createdAt and every setting, nothing else', () => {
    const extra = { ...queueView('jobs'), internal: 'secret' };
    expect(queueJson(extra)).toEqual({
      name: 'jobs',
      createdAt: T0,
      state: 'active',
      settings: {
        leaseTimeoutSeconds: 300,
        maxRetries: 10,
        dedupWindowSeconds: 0,
        retentionSeconds: 345_600,
        effectiveRetentionSeconds: 345_600,
        recvRateLimit: { intervalMicros: 0, burst: 0 },
      },
    });
  });

  it('renders a spool with sampledAt and startedAt in its stats', () => {
    const json = spoolJson({ name: 'default', queueCount: 2, stats: { ...counts(), sampledAtMs: T0_MS + 1000, startedAtMs: T0_MS } });
    expect(json).toEqual({
      name: 'default',
      queueCount: 2,
      stats: { ...counts(), sampledAt: '2026-11-21T10:00:01.000Z', startedAt: T0 },
    });
  });

  it('renders the stats page with per-queue stats and next only when given', () => {
    const page = statsPageJson({ queueCount: 1, stats: counts(), queues: { items: [{ ...queueView(), stats: counts(5) }] } });
    expect(page).toEqual({
      queueCount: 1,
      stats: counts(),
      queues: { items: [{ ...(queueJson(queueView()) as object), stats: counts(5) }] },
    });
    expect(pageJson({ items: [1], next: 'c' }, (n) => ({ n }))).toEqual({ items: [{ n: 1 }], next: 'c' });
  });

  it('renders messages with optional times and handle only when present', () => {
    expect(messageJson({ id: 'm', state: 'visible', retries: 0, createdAtMs: T0_MS })).toEqual({ id: 'm', state: 'visible', retries: 0, createdAt: T0 });
    expect(
      messageJson({ id: 'm', state: 'pending', retries: 1, createdAtMs: T0_MS, visibleAtMs: T0_MS + 1, leaseExpiresAtMs: T0_MS + 2, expiresAtMs: T0_MS + 3, handle: 'h'.repeat(16) }),
    ).toEqual({
      id: 'm',
      state: 'pending',
      retries: 1,
      createdAt: T0,
      visibleAt: '2026-11-21T10:00:00.001Z',
      leaseExpiresAt: '2026-11-21T10:00:00.002Z',
      expiresAt: '2026-11-21T10:00:00.003Z',
      handle: 'h'.repeat(16),
    });
  });
});
