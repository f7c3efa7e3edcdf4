// The memory watermark in `mq serve` and `mq member`: `--memory-high-percent`
// (MQ_MEMORY_HIGH_PERCENT), the share of the V8 heap limit above which the member refuses sends
// and queue creation with 503 unavailable (receive, ack and delete go on), and what the member
// shows of it: the `/readyz` detail, the `mq_member_memory_*` metrics and the operator log's
// lines when the alarm rises or clears (see packages/member/src/host/memory-watermark.ts). Also
// `--payload-cache` (MQ_PAYLOAD_CACHE): the budget of the member's cache of recent payloads, and
// `--log-memory` (MQ_LOG_MEMORY): the bytes of Raft log its spools keep in memory unsnapshotted,
// the other configured parts of its memory.

import { Families } from '@spoolmq/gateway';
import type {
  Member,
  MemberStatus,
  MemoryBoundsStatus,
  MemoryMonitorStatus,
} from '@spoolmq/member';
import { parseIntegerIn } from './args.js';
import { type Env, flagOrEnv } from './cluster-options.js';
import { parseSizeBytes } from './disk-options.js';
import { type MemberRow, addMemberRows } from './member-rows.js';
import type { OperatorEvent } from './operator-event.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const MEMORY_FLAGS = {
  'memory-high-percent': { type: 'string' },
  'payload-cache': { type: 'string' },
  'log-memory': { type: 'string' },
} as const;

export const MEMORY_USAGE = `\
  --memory-high-percent N
                      Share of the heap limit (node --max-old-space-size) in use above which
                      sends and queue creation answer 503 (receive, ack, delete go on);
                      cleared 10 points below. An integer 11-99, default 80.
                      Env MQ_MEMORY_HIGH_PERCENT.
  --payload-cache SIZE
                      Memory for recent payloads, so consumers that keep up read from memory;
                      each entry is charged its bytes plus 256. Bytes, or with KiB, MiB, GiB;
                      0 turns it off. Default 32MiB. Env MQ_PAYLOAD_CACHE.
  --log-memory SIZE   Memory for logged entries not yet covered by a snapshot, across spools
                      (each payload is held there until then); past it the spools holding
                      the most snapshot early. At least 1MiB. Default 64MiB. Env MQ_LOG_MEMORY.`;

export interface MemoryOptions {
  readonly memoryHighPercent?: number;
  readonly payloadCacheBytes?: number;
  readonly logMemoryBytes?: number;
}

/** The high mark, the cache budget and the log memory when given (flag over environment). */
export function memoryOf(flags: Flags, env: Env): MemoryOptions {
  const given = flagOrEnv(flags, 'memory-high-percent', env, 'MQ_MEMORY_HIGH_PERCENT');
  const cache = flagOrEnv(flags, 'payload-cache', env, 'MQ_PAYLOAD_CACHE');
  const log = flagOrEnv(flags, 'log-memory', env, 'MQ_LOG_MEMORY');
  const out: { -readonly [K in keyof MemoryOptions]: MemoryOptions[K] } = {};
  if (cache !== undefined) out.payloadCacheBytes = parseSizeBytes(cache.value, cache.source);
  if (log !== undefined) out.logMemoryBytes = logMemoryOf(log.value, log.source);
  if (given !== undefined) {
    out.memoryHighPercent = parseIntegerIn(given.value, given.source, 11, 99);
  }
  return out;
}

/** `--log-memory`: a size of at least 1 MiB (a smaller one would snapshot every few entries). */
function logMemoryOf(text: string, source: string): number {
  const bytes = parseSizeBytes(text, source);
  if (bytes < 1024 * 1024) throw new UsageError(`${source} must be at least 1MiB, got '${text}'`);
  return bytes;
}

/**
 * What `/readyz` adds about the member's heap. A member under the alarm stays ready (consumers
 * must reach it to drain it); the detail says why sends fail.
 */
export function memoryReadyDetailOf(member: Member): Readonly<Record<string, unknown>> {
  const { alarm, usedBytes, limitBytes, highBytes, clearBytes } = member.memoryStatus();
  return { memory: { alarm, usedBytes, limitBytes, highBytes, clearBytes } };
}

const MEMORY_METRICS: readonly MemberRow<MemoryMonitorStatus>[] = [
  ['mq_member_memory_alarm', 'gauge', 'Heap above its high mark: growth refused (503).', (m) =>
    m.alarm],
  ['mq_member_memory_used_bytes', 'gauge', 'V8 heap in use (latest sample).', (m) => m.usedBytes],
  ['mq_member_memory_limit_bytes', 'gauge', 'V8 heap size limit.', (m) => m.limitBytes],
  ['mq_member_memory_high_bytes', 'gauge', 'Heap in use above which growth is refused.', (m) =>
    m.highBytes],
  ['mq_member_memory_alarms_total', 'counter', 'Times the memory alarm was raised.', (m) =>
    m.raisedTotal],
  ['mq_member_memory_refused_total', 'counter', 'Calls refused on the memory alarm.', (m) =>
    m.refusedTotal],
];

const BOUNDS_METRICS: readonly MemberRow<MemoryBoundsStatus>[] = [
  ['mq_member_payload_cache_bytes', 'gauge', 'Bytes the payload cache holds (with overheads).',
    (b) => b.payloadCacheBytes],
  ['mq_member_payload_cache_max_bytes', 'gauge', 'Payload cache budget (--payload-cache).', (b) =>
    b.payloadCacheBytesMax],
  ['mq_member_payload_cache_hits_total', 'counter', 'Payload reads served from the cache.', (b) =>
    b.payloadCacheHits],
  ['mq_member_payload_cache_misses_total', 'counter', 'Payload reads that went to disk.', (b) =>
    b.payloadCacheMisses],
  ['mq_member_log_memory_bytes', 'gauge', 'Applied log bytes kept in memory unsnapshotted.',
    (b) => b.logBytes],
  ['mq_member_log_memory_max_bytes', 'gauge', 'Their shared budget (--log-memory).', (b) =>
    b.logBytesMax],
];

/**
 * Adds the heap watermark's and the memory bounds' families of a member's status (none for
 * what an older status lacks).
 */
export function addMemoryFamilies(out: Families, status: MemberStatus): void {
  if (status.memory !== undefined) addMemberRows(out, status.id, MEMORY_METRICS, status.memory);
  if (status.bounds !== undefined) addMemberRows(out, status.id, BOUNDS_METRICS, status.bounds);
}

/** The memory watermark's metrics alone (tests; /metrics renders them with the rest). */
export function renderMemoryMetrics(status: MemberStatus): string {
  const out = new Families();
  addMemoryFamilies(out, status);
  return out.text();
}

/**
 * The memory alarm's changes between two statuses of one member. `raisedTotal` also catches an
 * alarm raised and cleared between two polls, which the alarm flag alone would miss.
 */
export function memoryEvents(before: MemberStatus, after: MemberStatus): OperatorEvent[] {
  const now = after.memory;
  if (now === undefined) return [];
  const was = before.memory;
  const member = after.id;
  const raised = now.raisedTotal - (was?.raisedTotal ?? 0);
  const fields = {
    member,
    usedBytes: now.usedBytes,
    limitBytes: now.limitBytes,
    highBytes: now.highBytes,
    clearBytes: now.clearBytes,
  };
  const out: OperatorEvent[] = [];
  if (raised > 0) {
    const message =
      `memory alarm on ${member}: heap rose above ${now.highPercent}% of ` +
      `${now.limitBytes ?? '?'} bytes (now ${now.usedBytes ?? '?'}); sends and queue creation ` +
      'answer 503 until it is below the clear mark';
    out.push({ level: 'warn', fields: { event: 'memory_alarm_raised', ...fields }, message });
  }
  if (!now.alarm && (raised > 0 || was?.alarm === true)) {
    const message = `memory alarm on ${member} cleared: heap ${now.usedBytes ?? '?'} bytes`;
    out.push({ level: 'info', fields: { event: 'memory_alarm_cleared', ...fields }, message });
  }
  return out;
}
