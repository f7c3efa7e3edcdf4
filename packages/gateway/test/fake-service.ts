// A recording fake of SpoolService for gateway tests: every call is logged with its arguments,
// each method answers a plausible default and can be replaced per test. `checkTarget` knows a
// fixed set of spools and queues so 404 ordering can be tested.

import {
  MqError,
  type Counts,
  type Delivery,
  type QueueView,
  type SettingsView,
  type SpoolService,
} from '@spoolmq/engine';

export type Method = keyof SpoolService;

export interface Call {
  readonly method: Method;
  readonly args: readonly unknown[];
}

export const T0_MS = Date.UTC(2026, 10, 21, 10, 0, 0, 0);
export const LEASE = 'lease_aaaaaaaaaaaaaaaa';
export const HANDLE = 'handle-bbbbbbbbbbbbbbbb';

export function settings(overrides: Partial<SettingsView> = {}): SettingsView {
  return {
    leaseTimeoutSeconds: 300,
    maxRetries: 10,
    dedupWindowSeconds: 0,
    retentionSeconds: 345_600,
    effectiveRetentionSeconds: 345_600,
    recvRateLimit: { intervalMicros: 0, burst: 0 },
    ...overrides,
  };
}

export function queueView(name = 'jobs'): QueueView {
  return { name, createdAtMs: T0_MS, state: 'active', settings: settings() };
}

export function counts(seed = 0): Counts {
  return {
    total: seed + 1,
    dataBytes: seed + 2,
    delayed: seed + 3,
    visible: seed + 4,
    pending: seed + 5,
    failed: seed + 6,
    unavailable: seed + 7,
    addedTotal: seed + 8,
    ackedTotal: seed + 9,
    nackedTotal: seed + 10,
    releasedTotal: seed + 11,
    failedTotal: seed + 12,
    discardedTotal: seed + 13,
    expiredTotal: seed + 14,
  };
}

export function delivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    payload: new Uint8Array([1, 2, 3]),
    lease: LEASE,
    messageId: 'msg-1',
    retries: 2,
    leaseExpiresAtMs: T0_MS + 300_000,
    ...overrides,
  };
}

type Impl = { [K in Method]: SpoolService[K] };

export class FakeService implements SpoolService {
  readonly calls: Call[] = [];
  readonly spools = new Set(['default']);
  readonly queues = new Set(['default/jobs', 'default/other']);
  readyNow = true;
  private readonly overrides: Partial<Impl> = {};

  /** Replaces one method's behaviour (the call is still recorded). */
  on<K extends Method>(method: K, impl: Impl[K]): this {
    (this.overrides as Record<Method, unknown>)[method] = impl;
    return this;
  }

  /** Makes one method reject with `error`. */
  failWith(method: Method, error: MqError): this {
    (this.overrides as Record<Method, unknown>)[method] = () => Promise.reject(error);
    return this;
  }

  /** Calls recorded for `method`, excluding checkTarget unless asked. */
  callsOf(method: Method): readonly (readonly unknown[])[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  /** Calls other than the 404 probe and readiness. */
  operations(): readonly Call[] {
    return this.calls.filter((c) => c.method !== 'checkTarget' && c.method !== 'ready');
  }

  private invoke<K extends Method>(method: K, args: unknown[], fallback: () => ReturnType<Impl[K]>): ReturnType<Impl[K]> {
    this.calls.push({ method, args });
    const override = this.overrides[method] as ((...a: unknown[]) => ReturnType<Impl[K]>) | undefined;
    return override !== undefined ? override(...args) : fallback();
  }

  checkTarget(spool: string, queue?: string): Promise<void> {
    return this.invoke('checkTarget', [spool, queue], async () => {
      if (!this.spools.has(spool)) throw new MqError('spool_not_found', `no spool ${spool}`);
      if (queue !== undefined && !this.queues.has(`${spool}/${queue}`)) {
        throw new MqError('queue_not_found', `no queue ${queue}`);
      }
    });
  }

  ready(): boolean {
    this.calls.push({ method: 'ready', args: [] });
    return this.readyNow;
  }

  describeSpool: SpoolService['describeSpool'] = (...args) =>
    this.invoke('describeSpool', args, async () => ({
      name: args[0],
      queueCount: 2,
      stats: { ...counts(), sampledAtMs: T0_MS + 1, startedAtMs: T0_MS },
    }));

  spoolStats: SpoolService['spoolStats'] = (...args) =>
    this.invoke('spoolStats', args, async () => ({
      queueCount: 2,
      stats: counts(),
      queues: { items: [{ ...queueView(), stats: counts(100) }] },
    }));

  listQueues: SpoolService['listQueues'] = (...args) =>
    this.invoke('listQueues', args, async () => ({ items: [queueView()], next: 'cursor-1' }));

  describeQueue: SpoolService['describeQueue'] = (...args) =>
    this.invoke('describeQueue', args, async () => queueView(args[1]));

  createQueue: SpoolService['createQueue'] = (...args) =>
    this.invoke('createQueue', args, async () => queueView(args[1]));

  updateQueue: SpoolService['updateQueue'] = (...args) =>
    this.invoke('updateQueue', args, async () => queueView(args[1]));

  deleteQueue: SpoolService['deleteQueue'] = (...args) =>
    this.invoke('deleteQueue', args, async () => (args[2] === 'force' ? 'deleted' : 'accepted'));

  send: SpoolService['send'] = (...args) =>
    this.invoke('send', args, async () =>
      args[2].wantHandle
        ? { messageId: 'msg-new', handle: HANDLE, duplicate: false }
        : { messageId: 'msg-new', duplicate: false },
    );

  receive: SpoolService['receive'] = (...args) => this.invoke('receive', args, async () => null);
  ack: SpoolService['ack'] = (...args) => this.invoke('ack', args, async () => undefined);
  nack: SpoolService['nack'] = (...args) => this.invoke('nack', args, async () => undefined);
  release: SpoolService['release'] = (...args) => this.invoke('release', args, async () => undefined);
  fail: SpoolService['fail'] = (...args) => this.invoke('fail', args, async () => undefined);

  renew: SpoolService['renew'] = (...args) =>
    this.invoke('renew', args, async () => ({ leaseExpiresAtMs: T0_MS + 600_000 }));

  peek: SpoolService['peek'] = (...args) =>
    this.invoke('peek', args, async () => ({
      payload: new Uint8Array([9, 8, 7]),
      messageId: 'msg-9',
      state: 'failed' as const,
      retries: 4,
    }));

  recover: SpoolService['recover'] = (...args) => this.invoke('recover', args, async () => undefined);
  discard: SpoolService['discard'] = (...args) => this.invoke('discard', args, async () => undefined);

  listMessages: SpoolService['listMessages'] = (...args) =>
    this.invoke('listMessages', args, async () => ({
      items: [{ id: 'msg-1', state: 'visible' as const, retries: 0, createdAtMs: T0_MS }],
    }));

  failureHead: SpoolService['failureHead'] = (...args) =>
    this.invoke('failureHead', args, async () => null);

  ackAndSend: SpoolService['ackAndSend'] = (...args) =>
    this.invoke('ackAndSend', args, async () =>
      args[3].wantHandle
        ? { messageId: 'msg-next', handle: HANDLE, duplicate: false }
        : { messageId: 'msg-next', duplicate: false },
    );
}
