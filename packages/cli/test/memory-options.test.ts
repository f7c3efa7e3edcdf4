import { describe, expect, it } from 'vitest';
import type { MemberStatus, MemoryMonitorStatus } from '@spoolmq/member';
import { memoryEvents, memoryOf, renderMemoryMetrics } from '../src/memory-options.js';

function memory(alarm: boolean, raisedTotal: number, usedBytes: number): MemoryMonitorStatus {
  return {
    alarm,
    usedBytes,
    limitBytes: 1000,
    highPercent: 80,
    highBytes: 800,
    clearBytes: 700,
    raisedTotal,
    refusedTotal: 3,
  };
}

/** A status with only what the memory code reads (and no groups). */
function status(mem?: MemoryMonitorStatus): MemberStatus {
  return { id: 'n1', spools: [], meta: null, ...(mem === undefined ? {} : { memory: mem }) } as
    unknown as MemberStatus;
}

const kinds = (before: MemberStatus, after: MemberStatus) =>
  memoryEvents(before, after).map((e) => [e.level, e.fields['event']]);

describe('memory options', () => {
  it('reads the high mark from the flag over the environment', () => {
    expect(memoryOf({ 'memory-high-percent': '60' }, { MQ_MEMORY_HIGH_PERCENT: '90' })).toEqual({
      memoryHighPercent: 60,
    });
    expect(memoryOf({}, {})).toEqual({});
    expect(() => memoryOf({}, { MQ_MEMORY_HIGH_PERCENT: '5' })).toThrow(/MQ_MEMORY_HIGH_PERCENT/);
  });

  it('reads the payload cache budget as a size, the flag over the environment', () => {
    expect(memoryOf({ 'payload-cache': '8MiB' }, { MQ_PAYLOAD_CACHE: '1GiB' })).toEqual({
      payloadCacheBytes: 8 * 1024 * 1024,
    });
    expect(memoryOf({}, { MQ_PAYLOAD_CACHE: '0' })).toEqual({ payloadCacheBytes: 0 });
    expect(() => memoryOf({ 'payload-cache': 'lots' }, {})).toThrow(/--payload-cache/);
  });

  it('reads the log memory budget as a size of at least 1MiB, the flag over the environment', () => {
    expect(memoryOf({ 'log-memory': '32MiB' }, { MQ_LOG_MEMORY: '1GiB' })).toEqual({
      logMemoryBytes: 32 * 1024 * 1024,
    });
    expect(memoryOf({}, { MQ_LOG_MEMORY: '1MiB' })).toEqual({ logMemoryBytes: 1024 * 1024 });
    expect(() => memoryOf({}, { MQ_LOG_MEMORY: '1023KiB' })).toThrow(/MQ_LOG_MEMORY.*1MiB/);
    expect(() => memoryOf({ 'log-memory': '0' }, {})).toThrow(/--log-memory/);
  });

  it('logs the memory alarm raised (warn) and cleared (info), also both between two polls', () => {
    const ok = status(memory(false, 0, 500));
    const high = status(memory(true, 1, 850));
    const back = status(memory(false, 1, 600));
    const blip = status(memory(false, 2, 600));
    expect(kinds(ok, high)).toEqual([['warn', 'memory_alarm_raised']]);
    expect(memoryEvents(ok, high)[0]?.message).toMatch(/above 80% of 1000 bytes \(now 850\).*503/);
    expect(kinds(high, high)).toEqual([]);
    expect(kinds(high, back)).toEqual([['info', 'memory_alarm_cleared']]);
    expect(kinds(back, blip)).toEqual([
      ['warn', 'memory_alarm_raised'],
      ['info', 'memory_alarm_cleared'],
    ]);
    expect(kinds(status(), status())).toEqual([]); // a status from before the watermark
  });

  it('renders the mq_member_memory_* families', () => {
    const text = renderMemoryMetrics(status(memory(true, 2, 850)));
    expect(text).toContain('mq_member_memory_alarm{member="n1"} 1\n');
    expect(text).toContain('mq_member_memory_used_bytes{member="n1"} 850\n');
    expect(text).toContain('mq_member_memory_limit_bytes{member="n1"} 1000\n');
    expect(text).toContain('mq_member_memory_high_bytes{member="n1"} 800\n');
    expect(text).toMatch(/# TYPE mq_member_memory_alarms_total counter\nmq_member_memory_alarms_total\{member="n1"\} 2\n/);
    expect(text).toContain('mq_member_memory_refused_total{member="n1"} 3\n');
    expect(renderMemoryMetrics(status())).toBe('');
  });

  it('renders the payload cache and the log budget against their bounds', () => {
    const bounds = {
      payloadCacheBytes: 1234,
      payloadCacheBytesMax: 4096,
      payloadCacheHits: 7,
      payloadCacheMisses: 2,
      logBytes: 567,
      logBytesMax: 8192,
    };
    const text = renderMemoryMetrics({ ...status(), bounds });
    expect(text).toContain('mq_member_payload_cache_bytes{member="n1"} 1234\n');
    expect(text).toContain('mq_member_payload_cache_max_bytes{member="n1"} 4096\n');
    expect(text).toMatch(/# TYPE mq_member_payload_cache_hits_total counter\n.*\} 7\n/);
    expect(text).toContain('mq_member_payload_cache_misses_total{member="n1"} 2\n');
    expect(text).toContain('mq_member_log_memory_bytes{member="n1"} 567\n');
    expect(text).toContain('mq_member_log_memory_max_bytes{member="n1"} 8192\n');
    expect(text).not.toContain('mq_member_memory_alarm'); // no watermark in this status
  });
});
