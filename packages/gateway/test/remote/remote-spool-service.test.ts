// Primary following, failure handling and receive cancellation of RemoteSpoolService, against
// fake members served over real gRPC on 127.0.0.1. No timing assertions: bounds are injected
// small and only the outcome's kind is checked.

import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { MqError, type SpoolService } from '@spoolmq/engine';
import { createLocalService, type LocalService, type MemberRpcServer } from '@spoolmq/member';
import {
  RemoteSpoolService,
  type RemoteSpoolServiceOptions,
  insecureCredentials,
} from '../../src/remote/remote-spool-service.js';
import { ManualClock, settle, writeAnswer } from '@spoolmq/protocol';
import { notPrimaryError } from '@spoolmq/protocol';
import {
  deadAddress,
  loggedService,
  notPrimaryService,
  serve,
  serviceOf,
  signal,
  startRawMember,
  startRefusingMember,
  type RawFrameHandler,
  type RawMember,
} from './fake-members.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function rawMember(onFrame: RawFrameHandler): Promise<RawMember> {
  const server = await startRawMember(onFrame);
  cleanups.push(() => server.close());
  return server;
}

async function member(service: SpoolService): Promise<MemberRpcServer> {
  const server = await serve(service);
  cleanups.push(() => server.close());
  return server;
}

function local(): LocalService {
  const service = createLocalService();
  cleanups.push(() => service.close());
  return service;
}

/** Options as each test gives them; the links are loopback, insecure by choice. */
function remote(options: Omit<RemoteSpoolServiceOptions, 'credentials'>): RemoteSpoolService {
  const service = new RemoteSpoolService({ probeSpools: [], credentials: insecureCredentials, ...options });
  cleanups.push(() => service.close());
  return service;
}

function sendRequest() {
  return { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false };
}

async function rejection(promise: Promise<unknown>): Promise<MqError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MqError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('RemoteSpoolService primary following', () => {
  it('follows a not-primary hint to the named member, then goes there directly', async () => {
    const log: string[] = [];
    const a = await member(notPrimaryService('b', log, 'a'));
    const b = await member(loggedService(local(), log, 'b'));
    const service = remote({ members: { a: a.address, b: b.address } });
    const created = await service.createQueue('default', 'jobs', {});
    expect(created.name).toBe('jobs');
    await service.send('default', 'jobs', { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false });
    expect(log).toEqual(['a:createQueue', 'b:createQueue', 'b:send']);
    const metrics = service.metrics();
    expect(metrics.members['a']).toMatchObject({ calls: 1, retries: 0 });
    expect(metrics.members['b']).toMatchObject({ calls: 2, retries: 1 });
    expect(service.ready()).toBe(true);
  });

  it('without a hint tries the members in turn', async () => {
    const log: string[] = [];
    const a = await member(notPrimaryService(undefined, log, 'a'));
    const b = await member(notPrimaryService(undefined, log, 'b'));
    const c = await member(loggedService(local(), log, 'c'));
    const service = remote({ members: { a: a.address, b: b.address, c: c.address } });
    const view = await service.describeSpool('default');
    expect(view.name).toBe('default');
    expect(log).toEqual(['a:describeSpool', 'b:describeSpool', 'c:describeSpool']);
  });

  it('tries the replicas a member names when it names no leader', async () => {
    const log: string[] = [];
    const a = await member(
      serviceOf(async (method) => {
        log.push(`a:${method}`);
        throw notPrimaryError('default', undefined, ['x', 'c']);
      }),
    );
    const b = await member(notPrimaryService(undefined, log, 'b'));
    const c = await member(loggedService(local(), log, 'c'));
    const service = remote({ members: { a: a.address, b: b.address, c: c.address } });
    await service.describeSpool('default');
    expect(log).toEqual(['a:describeSpool', 'c:describeSpool']);
  });

  it('answers 503 unavailable, without routing details, when no primary answers in time', async () => {
    const a = await member(notPrimaryService(undefined));
    const service = remote({ members: { a: a.address, b: await deadAddress() }, unavailableAfterMs: 300 });
    const error = await rejection(
      service.send('default', 'jobs', { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false }),
    );
    expect(error.kind).toBe('unavailable');
    expect(error.details).toStrictEqual({});
    expect(service.metrics().unavailable).toBe(1);
    expect(service.ready()).toBe(false);
  });

  it('passes the primary\'s own errors through unchanged, operation_unconfirmed included', async () => {
    const failing = serviceOf(async (method) => {
      if (method === 'ack') throw new MqError('operation_unconfirmed', 'lost quorum');
      throw new MqError('gone', 'token no longer settles anything (stale)', { reason: 'stale' });
    });
    const a = await member(failing);
    const service = remote({ members: { a: a.address } });
    const unconfirmed = await rejection(service.ack('default', 'lease_aaaaaaaaaaaaaaaa'));
    expect(unconfirmed).toMatchObject({ kind: 'operation_unconfirmed', status: 500, message: 'lost quorum' });
    const gone = await rejection(service.nack('default', 'lease_aaaaaaaaaaaaaaaa'));
    expect(gone).toMatchObject({ kind: 'gone', details: { reason: 'stale' } });
    expect(service.metrics().members['a']).toMatchObject({ calls: 2, retries: 0 });
  });

  it('calls the member it runs inside in-process when that member is the primary', async () => {
    const log: string[] = [];
    const inside = loggedService(local(), log, 'self');
    const other = await member(notPrimaryService('self', log, 'other'));
    const service = remote({
      members: { other: other.address, self: await deadAddress() },
      local: { id: 'self', service: inside },
    });
    await service.createQueue('default', 'jobs', {});
    await service.describeQueue('default', 'jobs');
    expect(log).toEqual(['other:createQueue', 'self:createQueue', 'self:describeQueue']);
    expect(service.metrics().members['self']!.link).toBeUndefined();
  });

  it('leaves the in-process member when it says another is the primary', async () => {
    const log: string[] = [];
    const primary = await member(loggedService(local(), log, 'primary'));
    const service = remote({
      members: { primary: primary.address },
      local: { id: 'self', service: notPrimaryService('primary', log, 'self') },
    });
    await service.describeSpool('default');
    await service.describeSpool('default');
    expect(log).toEqual(['self:describeSpool', 'primary:describeSpool', 'primary:describeSpool']);
  });

  it('is ready once the probe of `default` found the primary', async () => {
    const a = await member(local());
    const service = new RemoteSpoolService({ members: { a: a.address }, credentials: insecureCredentials });
    cleanups.push(() => service.close());
    expect(await service.probeNow()).toBe(true);
    expect(service.ready()).toBe(true);
    const down = new RemoteSpoolService({
      members: { a: await deadAddress() },
      unavailableAfterMs: 200,
      credentials: insecureCredentials,
    });
    cleanups.push(() => down.close());
    expect(await down.probeNow()).toBe(false);
  });
});

describe('RemoteSpoolService when the link breaks', () => {
  it('answers operation_unconfirmed for a write whose answer was lost', async () => {
    const arrived = signal();
    const hanging = serviceOf(async (method) => {
      if (method === 'send') {
        arrived.resolve();
        return new Promise(() => undefined);
      }
      throw new MqError('internal', 'unexpected');
    });
    const a = await serve(hanging);
    const service = remote({ members: { a: a.address } });
    const sending = rejection(service.send('default', 'jobs', { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false }));
    await arrived.promise;
    await a.close();
    const error = await sending;
    expect(error.kind).toBe('operation_unconfirmed');
    expect(service.metrics().unconfirmed).toBe(1);
  });

  it('a member draining before it stops answers its write in flight and sends the next one on', async () => {
    const log: string[] = [];
    const arrived = signal();
    const hold = signal();
    const stopping = local();
    await stopping.createQueue('default', 'jobs', {});
    const a = await member(
      serviceOf(async (method, args) => {
        log.push(`a:${method}`);
        if (method === 'send') {
          arrived.resolve();
          await hold.promise;
        }
        const fn = (stopping as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
        return fn.apply(stopping, args);
      }),
    );
    const serving = local();
    await serving.createQueue('default', 'jobs', {});
    const b = await member(loggedService(serving, log, 'b'));
    const service = remote({ members: { a: a.address, b: b.address } });
    const request = { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false };
    const first = service.send('default', 'jobs', request);
    await arrived.promise;
    const drained = a.drain(30_000);
    // Refused by a's stream as going away (nothing done there), then sent to b.
    const second = service.send('default', 'jobs', request);
    await expect.poll(() => log).toEqual(['a:send', 'b:send']);
    hold.resolve();
    await drained;
    await a.close();
    expect((await first).messageId).toMatch(/./);
    expect((await second).messageId).toMatch(/./);
    expect(log).toEqual(['a:send', 'b:send']);
    expect(service.metrics().unconfirmed).toBe(0);
  });

  it('sends a write on when the member ends the stream with it unread (going away)', async () => {
    const log: string[] = [];
    // A member that drained and ended its stream as this call was on the wire: it never ran it.
    const a = await rawMember((frame, _reply, end) => {
      for (const { call } of frame.calls) log.push(`a:${call.op}`);
      end();
    });
    const serving = local();
    await serving.createQueue('default', 'jobs', {});
    const b = await member(loggedService(serving, log, 'b'));
    const service = remote({ members: { a: a.address, b: b.address } });
    const request = { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false };
    expect((await service.send('default', 'jobs', request)).messageId).toMatch(/./);
    expect(log).toEqual(['a:send', 'b:send']);
    expect(service.metrics().unconfirmed).toBe(0);
  });

  it('retries a read whose answer was lost, on the next member', async () => {
    const log: string[] = [];
    const arrived = signal();
    const hanging = serviceOf(async (method) => {
      log.push(`a:${method}`);
      arrived.resolve();
      return new Promise(() => undefined);
    });
    const a = await serve(hanging);
    const b = await member(loggedService(local(), log, 'b'));
    const service = remote({ members: { a: a.address, b: b.address } });
    const reading = service.describeSpool('default');
    await arrived.promise;
    await a.close();
    expect((await reading).name).toBe('default');
    expect(log).toEqual(['a:describeSpool', 'b:describeSpool']);
    expect(service.metrics().members['b']).toMatchObject({ calls: 1, retries: 1 });
  });

  it('retries a receive whose link broke on the next member, waiting only what is left', async () => {
    const arrived = signal();
    const a = await serve(
      serviceOf(() => {
        arrived.resolve();
        return new Promise(() => undefined);
      }),
    );
    const waits: number[] = [];
    const b = await member(
      serviceOf(async (method, args) => {
        if (method === 'receive') waits.push((args[2] as { waitMs: number }).waitMs);
        return null;
      }),
    );
    const service = remote({ members: { a: a.address, b: b.address } });
    const receiving = service.receive('default', 'jobs', { waitMs: 20_000 });
    await arrived.promise;
    await a.close();
    expect(await receiving).toBeNull();
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThan(20_000);
  });

  it('answers unavailable, not unconfirmed, when the member refuses this gateway at the door', async () => {
    // A revoked gateway certificate: the member's guard ends each stream before its handler
    // runs, so the send was never run and may be reported as not done.
    const refusing = await startRefusingMember(grpc.status.UNAUTHENTICATED, 'at-once');
    cleanups.push(() => refusing.close());
    const service = remote({ members: { a: refusing.address }, unavailableAfterMs: 300 });
    const error = await rejection(service.send('default', 'jobs', sendRequest()));
    expect(error.kind).toBe('unavailable');
  });

  it('answers operation_unconfirmed when a stream already let in is cut under a write', async () => {
    const cut = await startRefusingMember(grpc.status.ABORTED, 'after-first-frame');
    cleanups.push(() => cut.close());
    const service = remote({ members: { a: cut.address }, unavailableAfterMs: 300 });
    const error = await rejection(service.send('default', 'jobs', sendRequest()));
    expect(error.kind).toBe('operation_unconfirmed');
  });

  it('answers operation_unconfirmed for a write with no answer within the answer timeout', async () => {
    const hanging = serviceOf(() => new Promise(() => undefined));
    const a = await member(hanging);
    const service = remote({ members: { a: a.address }, answerTimeoutMs: 50, connectTimeoutMs: 100 });
    const error = await rejection(service.ack('default', 'lease_aaaaaaaaaaaaaaaa'));
    expect(error.kind).toBe('operation_unconfirmed');
  });
});

describe('RemoteSpoolService receive cancellation', () => {
  it('aborts the member\'s long poll when the client goes away: the message is receivable at once', async () => {
    const inner = local();
    await inner.createQueue('default', 'jobs', {});
    const started = signal();
    const aborted = signal();
    const watching = serviceOf((method, args) => {
      const fn = (inner as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
      if (method === 'receive') {
        const request = args[2] as { signal?: AbortSignal };
        request.signal?.addEventListener('abort', () => aborted.resolve());
        started.resolve();
      }
      return fn.apply(inner, args);
    });
    const a = await member(watching);
    const service = remote({ members: { a: a.address } });
    await service.describeQueue('default', 'jobs'); // the link is up
    const client = new AbortController();
    const receiving = service.receive('default', 'jobs', { waitMs: 20_000, signal: client.signal });
    await started.promise; // the member is waiting
    client.abort();
    expect(await receiving).toBeNull();
    await aborted.promise;
    await inner.send('default', 'jobs', { payload: new Uint8Array([7]), delayMs: 0, wantHandle: false });
    const delivery = await inner.receive('default', 'jobs', { waitMs: 0 });
    expect(delivery?.payload).toEqual(new Uint8Array([7]));
  });

  it('has the member release a delivery it obtained after the cancel', async () => {
    const inner = local();
    await inner.createQueue('default', 'jobs', {});
    const started = signal();
    const released = signal<unknown[]>();
    const late = serviceOf(async (method, args) => {
      const fn = (inner as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!;
      if (method === 'receive') {
        // A racy host: it hands out a message after the wait was aborted.
        started.resolve();
        const request = args[2] as { signal: AbortSignal };
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
        await inner.send('default', 'jobs', { payload: new Uint8Array([8]), delayMs: 0, wantHandle: false });
        return inner.receive('default', 'jobs', { waitMs: 0 });
      }
      const result = await fn.apply(inner, args);
      if (method === 'release') released.resolve(args);
      return result;
    });
    const a = await member(late);
    const service = remote({ members: { a: a.address } });
    await service.describeQueue('default', 'jobs');
    const client = new AbortController();
    const receiving = service.receive('default', 'jobs', { waitMs: 20_000, signal: client.signal });
    await started.promise;
    client.abort();
    expect(await receiving).toBeNull();
    const [spool, , delayMs] = await released.promise;
    expect([spool, delayMs]).toEqual(['default', 0]);
    const again = await inner.receive('default', 'jobs', { waitMs: 0 });
    expect(again?.payload).toEqual(new Uint8Array([8]));
    expect(again?.retries).toBe(0);
    expect(a.stats().orphansReleased).toBe(1);
  });

  it('releases, itself, a delivery answered after it sent the cancel', async () => {
    // A raw member whose answer crosses the cancel: it answers the receive with a delivery only
    // once the cancel arrived, as if both were in flight at once.
    const releasedLease = signal<string>();
    const lease = 'lease_cccccccccccccccc';
    let receiveId = 0;
    const raw = await rawMember((frame, reply) => {
      for (const { id, call } of frame.calls) {
        if (call.op === 'receive') receiveId = id;
        else if (call.op === 'release') {
          releasedLease.resolve(call.lease);
          reply((w) => writeAnswer(w, id, 'release', undefined));
        } else reply((w) => writeAnswer(w, id, 'checkTarget', undefined));
      }
      if (frame.cancels.includes(receiveId)) {
        reply((w) => writeAnswer(w, receiveId, 'receive', { payload: new Uint8Array([1]), lease, messageId: 'm-1', retries: 0 }));
      }
    });
    const service = remote({ members: { a: raw.address } });
    await service.checkTarget('default');
    const client = new AbortController();
    const receiving = service.receive('default', 'jobs', { waitMs: 20_000, signal: client.signal });
    await raw.callArrived('receive');
    client.abort();
    expect(await receiving).toBeNull();
    expect(await releasedLease.promise).toBe(lease);
  });
});

describe('RemoteSpoolService waits on its clock', () => {
  /** A member run in-process that answers 503 until `up` (nothing on a socket, no real time). */
  function flakyMember(clock: ManualClock) {
    const state = { up: false, attemptsAtMs: [] as number[], probesAtMs: [] as number[] };
    const startMs = clock.nowMs();
    const service = serviceOf(async (method) => {
      const atMs = clock.nowMs() - startMs;
      if (method === 'checkTarget') state.probesAtMs.push(atMs);
      else state.attemptsAtMs.push(atMs);
      if (!state.up) throw new MqError('unavailable', 'not yet');
      return method === 'checkTarget' ? undefined : { name: 'default' };
    });
    return { state, service };
  }

  /** A RemoteSpoolService on a manual clock whose only member is a `flakyMember`. */
  function flakyRemote(options: Partial<Omit<RemoteSpoolServiceOptions, 'credentials'>> = {}) {
    const clock = new ManualClock();
    const { state, service: member } = flakyMember(clock);
    const local = { id: 'm1', service: member };
    return { clock, state, service: remote({ members: {}, local, clock, ...options }) };
  }

  it('backs off between rounds by the clock, doubling, and answers 503 at unavailableAfterMs', async () => {
    const { clock, state, service } = flakyRemote({
      unavailableAfterMs: 1_000,
      retryBackoffMsMin: 20,
      retryBackoffMsMax: 80,
    });
    const outcome = service.describeSpool('default').catch((error: unknown) => error);
    await settle();
    expect(state.attemptsAtMs).toEqual([0]);
    await clock.advance(19);
    expect(state.attemptsAtMs).toEqual([0]);
    await clock.advance(1);
    expect(state.attemptsAtMs).toEqual([0, 20]);
    await clock.advance(39);
    expect(state.attemptsAtMs).toEqual([0, 20]);
    await clock.advance(1);
    expect(state.attemptsAtMs).toEqual([0, 20, 60]);
    // Then 80 ms apart (the cap), the last pause cut to the deadline at 1,000 ms.
    await clock.advance(940);
    expect(state.attemptsAtMs).toEqual([0, 20, 60, 140, 220, 300, 380, 460, 540, 620, 700, 780, 860, 940, 1_000]);
    expect(await outcome).toMatchObject({ kind: 'unavailable', message: expect.stringContaining('within 1000 ms') });
  });

  it('answers once the primary does, after a backoff on the clock', async () => {
    const { clock, state, service } = flakyRemote({ retryBackoffMsMin: 50 });
    const outcome = service.describeSpool('default');
    await settle();
    state.up = true;
    await clock.advance(50);
    expect(await outcome).toEqual({ name: 'default' });
    expect(state.attemptsAtMs).toEqual([0, 50]);
  });

  it('probes at start and again PROBE_INTERVAL_MS after a failed round, until ready', async () => {
    const { clock, state, service } = flakyRemote({
      probeSpools: ['default'],
      unavailableAfterMs: 100,
      retryBackoffMsMin: 50,
      retryBackoffMsMax: 50,
    });
    await settle();
    expect(state.probesAtMs).toEqual([]); // the first probe is a timer of 0 ms on the clock
    await clock.advance(0);
    expect(state.probesAtMs).toEqual([0]);
    // The round's call retries on the backoff until its deadline at 100 ms, then the next round
    // waits 1,000 ms.
    await clock.advance(1_099);
    expect(state.probesAtMs).toEqual([0, 50, 100]);
    expect(service.ready()).toBe(false);
    await clock.advance(1);
    expect(state.probesAtMs).toEqual([0, 50, 100, 1_100]);
    state.up = true;
    await clock.advance(50);
    expect(state.probesAtMs).toEqual([0, 50, 100, 1_100, 1_150]);
    expect(service.ready()).toBe(true);
    await clock.advance(10_000);
    expect(state.probesAtMs).toHaveLength(5); // ready: no more probes
    expect(clock.pendingTimers).toBe(0);
  });
});
