// Sample calls and results for the member-protocol codec tests: every operation, with optional
// fields both present and absent, extreme numbers, and payloads holding all 256 byte values.

import type { Counts, QueueView, SettingsView } from '@spoolmq/engine';
import type { Call, Op, OpResults } from '../../src/member/calls.js';

export const T0_MS = Date.UTC(2026, 10, 21, 10, 0, 0, 123);
export const LEASE = 'lease_aaaaaaaaaaaaaaaa';
export const HANDLE = 'handle-bbbbbbbbbbbbbbbb';

/** Every byte value once, then again reversed: 512 bytes. */
export const ALL_BYTES = new Uint8Array(512).map((_, i) => (i < 256 ? i : 511 - i));
export const DEDUP_KEY = new Uint8Array(16).map((_, i) => 255 - i * 7);

export function settings(overrides: Partial<SettingsView> = {}): SettingsView {
  return {
    leaseTimeoutSeconds: 31_536_000,
    maxRetries: 65_535,
    dedupWindowSeconds: 300,
    retentionSeconds: 0,
    effectiveRetentionSeconds: 1_209_600,
    recvRateLimit: { intervalMicros: 10_000, burst: 2_147_483_647 },
    ...overrides,
  };
}

export function queueView(name = 'jobs', state: QueueView['state'] = 'active'): QueueView {
  return { name, createdAtMs: T0_MS, state, settings: settings() };
}

export function counts(seed = 0): Counts {
  return {
    total: seed + 1,
    dataBytes: seed + 2 ** 40,
    delayed: seed + 3,
    visible: seed,
    pending: seed + 5,
    failed: seed + 6,
    unavailable: seed + 7,
    addedTotal: Number.MAX_SAFE_INTEGER - seed,
    ackedTotal: seed + 9,
    nackedTotal: seed + 10,
    releasedTotal: seed + 11,
    failedTotal: seed + 12,
    discardedTotal: seed + 13,
    expiredTotal: seed + 14,
  };
}

export function sampleCalls(): Call[] {
  const spool = 'tenant:a_b-1';
  return [
    { op: 'checkTarget', spool },
    { op: 'checkTarget', spool, queue: 'jobs' },
    { op: 'describeSpool', spool: 'default' },
    { op: 'spoolStats', spool, query: { limit: 100 } },
    { op: 'spoolStats', spool, query: { limit: 1000, after: 'c'.repeat(256), match: '^jobs-[0-9]+$', queues: ['a', 'b'] } },
    { op: 'spoolStats', spool, query: { limit: 1, queues: [] } },
    { op: 'listQueues', spool, query: { limit: 7, match: '' } },
    { op: 'describeQueue', spool, queue: 'q'.repeat(63) },
    { op: 'createQueue', spool, queue: 'jobs', settings: {} },
    {
      op: 'createQueue',
      spool,
      queue: 'jobs',
      settings: {
        leaseTimeoutSeconds: 0,
        maxRetries: 0,
        dedupWindowSeconds: 300,
        retentionSeconds: 60,
        recvRateLimit: { intervalMicros: 10_000, burst: 1 },
      },
    },
    { op: 'updateQueue', spool, queue: 'jobs', settings: { recvRateLimit: null } },
    { op: 'updateQueue', spool, queue: 'jobs', settings: { maxRetries: 3 } },
    { op: 'deleteQueue', spool, queue: 'jobs', mode: 'force' },
    { op: 'deleteQueue', spool, queue: 'jobs', mode: 'drain' },
    { op: 'send', spool, queue: 'jobs', request: { payload: ALL_BYTES, delayMs: 0, wantHandle: false } },
    {
      op: 'send',
      spool,
      queue: 'jobs',
      request: { payload: new Uint8Array(0), delayMs: 604_800_000, dedupKey: DEDUP_KEY, wantHandle: true },
    },
    { op: 'receive', spool, queue: 'jobs', waitMs: 20_000 },
    { op: 'receive', spool, queue: 'jobs', waitMs: 0 },
    { op: 'ack', spool, lease: LEASE },
    { op: 'nack', spool, lease: LEASE },
    { op: 'release', spool, lease: LEASE, delayMs: 0 },
    { op: 'release', spool, lease: LEASE, delayMs: 1_500 },
    { op: 'fail', spool, lease: LEASE },
    { op: 'renew', spool, lease: LEASE },
    { op: 'peek', spool, handle: HANDLE },
    { op: 'recover', spool, token: { handle: HANDLE }, delayMs: 0 },
    { op: 'recover', spool, token: { lease: LEASE }, delayMs: 604_800_000 },
    { op: 'discard', spool, token: { lease: LEASE } },
    { op: 'discard', spool, token: { handle: HANDLE } },
    { op: 'listMessages', spool, queue: 'jobs', query: { limit: 100, withHandles: false } },
    {
      op: 'listMessages',
      spool,
      queue: 'jobs',
      query: { state: 'unavailable', limit: 1000, after: 'cursor_1', withHandles: true },
    },
    { op: 'failureHead', spool, queue: 'jobs' },
    {
      op: 'ackAndSend',
      spool,
      lease: LEASE,
      queue: 'next',
      request: { payload: ALL_BYTES, delayMs: 90_000, dedupKey: DEDUP_KEY, wantHandle: true },
    },
  ];
}

export interface SampleResult<O extends Op = Op> {
  readonly op: O;
  readonly value: OpResults[O];
}

function sample<O extends Op>(op: O, value: OpResults[O]): SampleResult {
  return { op, value } as SampleResult;
}

export function sampleResults(): SampleResult[] {
  const delivery = { payload: ALL_BYTES, lease: LEASE, messageId: 'm-000001', retries: 65_535 };
  return [
    sample('checkTarget', undefined),
    sample('describeSpool', {
      name: 'default',
      queueCount: 1000,
      stats: { ...counts(), sampledAtMs: T0_MS + 1, startedAtMs: T0_MS },
    }),
    sample('spoolStats', { queueCount: 0, stats: counts(0), queues: { items: [] } }),
    sample('spoolStats', {
      queueCount: 3,
      stats: counts(1),
      queues: {
        items: [
          { ...queueView('a', 'draining'), stats: counts(2) },
          { ...queueView('b', 'deleting'), stats: counts(3) },
        ],
        next: 'n'.repeat(256),
      },
    }),
    sample('listQueues', { items: [queueView('a'), queueView('b')], next: 'cursor' }),
    sample('listQueues', { items: [] }),
    sample('describeQueue', queueView()),
    sample('createQueue', { ...queueView(), settings: settings({ recvRateLimit: { intervalMicros: 0, burst: 0 } }) }),
    sample('updateQueue', queueView('x', 'draining')),
    sample('deleteQueue', 'deleted'),
    sample('deleteQueue', 'accepted'),
    sample('send', { messageId: 'm-1', duplicate: false }),
    sample('send', { messageId: 'm-1', handle: HANDLE, duplicate: false }),
    sample('send', { messageId: 'm-0', duplicate: true }),
    sample('receive', null),
    sample('receive', delivery),
    sample('receive', { ...delivery, payload: new Uint8Array(0), leaseExpiresAtMs: T0_MS + 300_000 }),
    sample('ack', undefined),
    sample('nack', undefined),
    sample('release', undefined),
    sample('fail', undefined),
    sample('renew', {}),
    sample('renew', { leaseExpiresAtMs: T0_MS + 600_000 }),
    sample('peek', { payload: ALL_BYTES, messageId: 'm-9', state: 'failed', retries: 4 }),
    sample('peek', { payload: new Uint8Array(0), messageId: 'm-9', state: 'delayed', retries: 0 }),
    sample('recover', undefined),
    sample('discard', undefined),
    sample('listMessages', { items: [] }),
    sample('listMessages', {
      items: [
        { id: 'm-1', state: 'delayed', retries: 0, createdAtMs: T0_MS, visibleAtMs: T0_MS + 5, expiresAtMs: T0_MS + 9 },
        { id: 'm-2', state: 'pending', retries: 3, createdAtMs: T0_MS, leaseExpiresAtMs: T0_MS + 7, handle: HANDLE },
        { id: 'm-3', state: 'visible', retries: 0, createdAtMs: 0 },
        { id: 'm-4', state: 'failed', retries: 10, createdAtMs: T0_MS },
        { id: 'm-5', state: 'unavailable', retries: 1, createdAtMs: T0_MS },
      ],
      next: 'cursor-2',
    }),
    sample('failureHead', null),
    sample('failureHead', delivery),
    sample('ackAndSend', { messageId: 'm-2', handle: HANDLE, duplicate: false }),
  ];
}
