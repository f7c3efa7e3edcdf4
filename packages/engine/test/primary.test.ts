// Primary-local behaviour: receive order, leases and their resolution, rate limits, lease
// timeouts and retention decided by the primary, opening as a new primary, deadlines, appends.

import { describe, expect, it } from 'vitest';
import { internalState } from '../src/engine.js';
import { MqError } from '../src/errors.js';
import { type Message, Where } from '../src/message.js';
import { PAYLOAD_MISSING, PayloadError } from '../src/payload-store.js';
import { RATE_LIMITED } from '../src/primary.js';
import { encodeReplicatedState } from '../src/snapshot-writer.js';
import { T0, counts, createQueue, key, newEngine, receive, ref, send } from './helpers.js';

describe('receive', () => {
  it('hands out visible messages in send order, each to one receiver', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    for (let i = 0; i < 5; i++) send(engine, q, T0);
    const got = [1, 2, 3, 4, 5].map(() => receive(engine, q, T0).seq);
    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(engine.receive(q, T0)).toBeNull();
    expect(counts(engine, q, T0)).toMatchObject({ pending: 5, visible: 0 });
  });

  it('a nacked, released or timed-out message goes back to its place by seq, ahead of later sends', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 1 });
    for (let i = 0; i < 6; i++) send(engine, q, T0);
    const [m1, m2, m3] = [receive(engine, q, T0), receive(engine, q, T0), receive(engine, q, T0)];
    engine.apply({ type: 'nack', ...ref(q, m3!) }, T0);
    engine.releaseNow(q, m2!);
    const timedOut: Message[] = [];
    engine.collectTimedOutLeases(q, T0 + 1000, timedOut, 10);
    expect(timedOut).toEqual([m1]);
    engine.apply({ type: 'nack', ...ref(q, m1!) }, T0 + 1000);
    const order = [1, 2, 3, 4, 5, 6].map(() => receive(engine, q, T0 + 1000).seq);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('a delayed message whose delay elapsed takes its place by seq', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0, { delayMs: 10 });
    send(engine, q, T0);
    expect(receive(engine, q, T0).seq).toBe(2);
    expect(engine.receive(q, T0 + 9)).toBeNull();
    expect(receive(engine, q, T0 + 10).seq).toBe(1);
  });

  it('leases carry the lease timeout; no deadline when the queue has none', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 30 });
    const n = createQueue(engine, 'n', { leaseTimeoutSeconds: 0 });
    send(engine, q, T0);
    send(engine, n, T0);
    expect(receive(engine, q, T0).leaseExpiresAtMs).toBe(T0 + 30_000);
    const m = receive(engine, n, T0);
    expect(m.leaseExpiresAtMs).toBe(Infinity);
    expect(engine.messageView(n, m, T0)).not.toHaveProperty('leaseExpiresAtMs');
  });

  it('rate limit: a full bucket releases its burst, then refuses while messages are visible', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { recvRateLimit: { intervalMicros: 100_000, burst: 2 } });
    expect(engine.receive(q, T0)).toBeNull(); // nothing visible: no token spent
    for (let i = 0; i < 4; i++) send(engine, q, T0);
    receive(engine, q, T0);
    receive(engine, q, T0);
    expect(engine.receive(q, T0)).toBe(RATE_LIMITED);
    expect(engine.nextReceiveTokenAtMs(q, T0)).toBe(T0 + 100);
    expect(engine.receive(q, T0 + 99)).toBe(RATE_LIMITED);
    expect(receive(engine, q, T0 + 100).seq).toBe(3);
    expect(counts(engine, q, T0 + 100)).toMatchObject({ pending: 3, visible: 1 });
  });

  it('removing the rate limit lets receives through at once', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { recvRateLimit: { intervalMicros: 1_000_000, burst: 1 } });
    send(engine, q, T0);
    send(engine, q, T0);
    receive(engine, q, T0);
    expect(engine.receive(q, T0)).toBe(RATE_LIMITED);
    engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { recvRateLimit: null } }, T0);
    expect(receive(engine, q, T0).seq).toBe(2);
    expect(engine.nextReceiveTokenAtMs(q, T0)).toBe(T0);
  });

  it('never hands out a message past retention; it waits for the expire command', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 60 });
    send(engine, q, T0);
    send(engine, q, T0 + 30_000);
    expect(receive(engine, q, T0 + 60_000).seq).toBe(2);
    expect(counts(engine, q, T0 + 60_000)).toMatchObject({ visible: 1, pending: 1, total: 2 });
    const seqs: number[] = [];
    const gens: number[] = [];
    engine.collectExpired(q, T0 + 60_000, seqs, gens, 10);
    expect(seqs).toEqual([1]);
  });

  it('a retention increase makes held-back messages receivable again', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 60 });
    send(engine, q, T0);
    expect(engine.receive(q, T0 + 60_000)).toBeNull();
    engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { retentionSeconds: 120 } }, T0 + 60_000);
    expect(receive(engine, q, T0 + 60_000).seq).toBe(1);
  });
});

describe('lease resolution', () => {
  function leased(settings = {}) {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 10, ...settings });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    return { engine, q, m, delivery: m.deliveries };
  }

  it('a live lease resolves to its message', () => {
    const { engine, q, m, delivery } = leased();
    expect(engine.resolveLease(q.gen, m.seq, m.gen, delivery, T0 + 9_999)).toMatchObject({ seq: m.seq });
  });

  it('settled once acked, nacked, released (logged or not), failed or discarded', () => {
    for (const end of ['ack', 'nack', 'fail', 'discard', 'releaseNow', 'release'] as const) {
      const { engine, q, m, delivery } = leased();
      const r = ref(q, m);
      if (end === 'releaseNow') engine.releaseNow(q, m);
      else if (end === 'release') engine.apply({ type: 'release', ...r, delayMs: 5 }, T0);
      else engine.apply({ type: end, ...r }, T0);
      expect(engine.resolveLease(r.queueGen, r.seq, r.gen, delivery, T0)).toBe('settled');
    }
  });

  it('settled while its settlement is in the log (no second settlement can start)', () => {
    const { engine, q, m, delivery } = leased();
    engine.beginSettle(m);
    expect(engine.resolveLease(q.gen, m.seq, m.gen, delivery, T0)).toBe('settled');
    engine.endSettle(q, m);
    expect(engine.resolveLease(q.gen, m.seq, m.gen, delivery, T0)).toMatchObject({ seq: m.seq });
  });

  it('expired once its deadline passed, before and after the timeout is processed', () => {
    const { engine, q, m, delivery } = leased();
    const r = ref(q, m);
    expect(engine.resolveLease(r.queueGen, r.seq, r.gen, delivery, T0 + 10_000)).toBe('expired');
    const out: Message[] = [];
    engine.collectTimedOutLeases(q, T0 + 10_000, out, 10);
    expect(engine.resolveLease(r.queueGen, r.seq, r.gen, delivery, T0 + 10_000)).toBe('expired');
    engine.apply({ type: 'nack', ...r }, T0 + 10_000);
    expect(engine.resolveLease(r.queueGen, r.seq, r.gen, delivery, T0 + 10_000)).toBe('expired');
    // Redelivered: the old lease stays expired, the new one is live.
    const again = receive(engine, q, T0 + 10_000);
    expect(engine.resolveLease(r.queueGen, r.seq, r.gen, delivery, T0 + 10_000)).toBe('expired');
    expect(engine.resolveLease(q.gen, again.seq, again.gen, again.deliveries, T0 + 10_000)).toMatchObject({ seq: again.seq });
  });

  it('stale when the queue was deleted (and recreated)', () => {
    const { engine, q, m, delivery } = leased();
    engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'force' }, T0);
    createQueue(engine, 'q');
    expect(engine.resolveLease(q.gen, m.seq, m.gen, delivery, T0)).toBe('stale');
  });

  it('a redelivery fences the previous lease', () => {
    const { engine, q, m, delivery } = leased();
    engine.releaseNow(q, m);
    const again = receive(engine, q, T0);
    expect(again).toMatchObject({ seq: m.seq });
    expect(engine.resolveLease(q.gen, m.seq, m.gen, delivery, T0)).toBe('settled');
  });

  it('renew extends to now + lease timeout; without a timeout it changes nothing', () => {
    const { engine, q, m } = leased();
    expect(engine.renew(q, m, T0 + 9_000)).toBe(T0 + 19_000);
    expect(engine.resolveLease(q.gen, m.seq, m.gen, m.deliveries, T0 + 15_000)).toMatchObject({ seq: m.seq });
    const out: Message[] = [];
    engine.collectTimedOutLeases(q, T0 + 15_000, out, 10);
    expect(out).toEqual([]);
    engine.collectTimedOutLeases(q, T0 + 19_000, out, 10);
    expect(out).toEqual([m]);
    const none = leased({ leaseTimeoutSeconds: 0 });
    expect(none.engine.renew(none.q, none.m, T0 + 5)).toBe(Infinity);
  });

  it('a changed lease timeout applies to leases issued afterwards', () => {
    const { engine, q, m } = leased();
    engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { leaseTimeoutSeconds: 100 } }, T0);
    expect(m.leaseExpiresAtMs).toBe(T0 + 10_000);
    send(engine, q, T0);
    expect(receive(engine, q, T0).leaseExpiresAtMs).toBe(T0 + 100_000);
  });
});

describe('failure leases and handles', () => {
  it('a failure lease resolves while the message stays failed with the same generation', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.apply({ type: 'nack', ...ref(q, m) }, T0);
    expect(engine.failureHead(q)).toMatchObject({ seq: m.seq });
    expect(engine.resolveFailureLease(q.gen, m.seq, m.gen)).toMatchObject({ seq: m.seq });
    const gen = m.gen;
    engine.apply({ type: 'recover', ...ref(q, m), delayMs: 0 }, T0);
    expect(engine.resolveFailureLease(q.gen, m.seq, gen)).toBe('settled');
    expect(engine.resolveFailureLease(99, m.seq, gen)).toBe('stale');
    expect(engine.failureHead(q)).toBeUndefined();
  });

  it('the failure head is the oldest failed message in send order', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    for (let i = 0; i < 3; i++) send(engine, q, T0);
    const ms = [receive(engine, q, T0), receive(engine, q, T0), receive(engine, q, T0)];
    engine.apply({ type: 'fail', ...ref(q, ms[2]!) }, T0);
    engine.apply({ type: 'fail', ...ref(q, ms[1]!) }, T0);
    expect(engine.failureHead(q)).toMatchObject({ seq: ms[1]!.seq });
    engine.apply({ type: 'discard', ...ref(q, ms[1]!) }, T0);
    expect(engine.failureHead(q)).toMatchObject({ seq: ms[2]!.seq });
  });

  it('a handle minted before delivery is fenced by the delivery; a delayed message keeps it', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0, { delayMs: 5 });
    const m = q.order.find(1)!;
    const minted = [m.gen, m.deliveries, false] as const;
    expect(engine.resolveHandle(q.gen, 1, ...minted)).toMatchObject({ seq: m.seq });
    expect(engine.promote(q, T0 + 5)).toBe(1);
    expect(engine.resolveHandle(q.gen, 1, ...minted)).toMatchObject({ seq: m.seq });
    receive(engine, q, T0 + 5);
    expect(engine.resolveHandle(q.gen, 1, ...minted)).toBe('settled');
  });

  it('a handle minted while pending lasts for that delivery only', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    const minted = [m.gen, m.deliveries, true] as const;
    expect(engine.resolveHandle(q.gen, m.seq, ...minted)).toMatchObject({ seq: m.seq });
    engine.releaseNow(q, m);
    expect(engine.resolveHandle(q.gen, m.seq, ...minted)).toBe('settled');
  });
});

describe('timer work decided by the primary', () => {
  it('lease timeouts are collected once, oldest first, bounded by max', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 1 });
    for (let i = 0; i < 5; i++) send(engine, q, T0);
    const ms = [0, 1, 2, 3, 4].map((i) => receive(engine, q, T0 + i));
    const out: Message[] = [];
    engine.collectTimedOutLeases(q, T0 + 1002, out, 2);
    expect(out).toEqual([ms[0], ms[1]]);
    engine.collectTimedOutLeases(q, T0 + 1002, out, 10);
    expect(out).toEqual([ms[0], ms[1], ms[2]]);
    engine.collectTimedOutLeases(q, T0 + 1002, out, 10);
    expect(out.length).toBe(3);
  });

  it('a lease timeout is a nack: retry spent, failed when exhausted (counters too)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 1, maxRetries: 1 });
    send(engine, q, T0);
    let now = T0;
    for (let round = 0; round < 2; round++) {
      const m = receive(engine, q, now);
      now += 1000;
      const out: Message[] = [];
      engine.collectTimedOutLeases(q, now, out, 10);
      expect(out).toEqual([m]);
      expect(engine.apply({ type: 'nack', ...ref(q, m) }, now).kind).toBe('ok');
    }
    expect(counts(engine, q, now)).toMatchObject({ failed: 1, nackedTotal: 2, failedTotal: 1 });
  });

  it('expiry skips leased messages and picks them up when the lease returns them', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 60, leaseTimeoutSeconds: 0 });
    send(engine, q, T0);
    send(engine, q, T0);
    const held = receive(engine, q, T0);
    const seqs: number[] = [];
    const gens: number[] = [];
    engine.collectExpired(q, T0 + 60_000, seqs, gens, 10);
    expect(seqs).toEqual([2]);
    engine.apply({ type: 'expire', queueGen: q.gen, seqs, gens }, T0 + 60_000);
    expect(counts(engine, q, T0 + 60_000)).toMatchObject({ total: 1, pending: 1, expiredTotal: 1 });
    // Held past retention: still not expired while leased.
    const again: number[] = [];
    engine.collectExpired(q, T0 + 70_000, again, [], 10);
    expect(again).toEqual([]);
    engine.apply({ type: 'nack', ...ref(q, held) }, T0 + 70_000);
    engine.collectExpired(q, T0 + 70_000, again, [], 10);
    expect(again).toEqual([1]);
  });

  it('a message held past retention expires once any return ends its lease', () => {
    for (const end of ['nack', 'release0', 'releaseDelay', 'releaseNow', 'openPrimary'] as const) {
      const engine = newEngine();
      const q = createQueue(engine, 'q', { retentionSeconds: 60, leaseTimeoutSeconds: 0 });
      send(engine, q, T0);
      const m = receive(engine, q, T0);
      const seqs: number[] = [];
      engine.collectExpired(q, T0 + 61_000, seqs, [], 10);
      expect(seqs).toEqual([]);
      const at = T0 + 61_000;
      if (end === 'nack') engine.apply({ type: 'nack', ...ref(q, m) }, at);
      else if (end === 'release0') engine.apply({ type: 'release', ...ref(q, m), delayMs: 0 }, at);
      else if (end === 'releaseDelay') engine.apply({ type: 'release', ...ref(q, m), delayMs: 10 }, at);
      else if (end === 'releaseNow') engine.releaseNow(q, m);
      else engine.openPrimary(at);
      engine.collectExpired(q, at, seqs, [], 10);
      expect(seqs, end).toEqual([1]);
    }
  });

  it('expiry covers failed and delayed messages; failing restarts the clock', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 60, maxRetries: 0 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.apply({ type: 'nack', ...ref(q, m) }, T0 + 30_000);
    const seqs: number[] = [];
    engine.collectExpired(q, T0 + 60_000, seqs, [], 10);
    expect(seqs).toEqual([]);
    engine.collectExpired(q, T0 + 90_000, seqs, [], 10);
    expect(seqs).toEqual([1]);
  });

  it('retention 0 on a plan without a limit never expires', () => {
    const engine = newEngine({ retentionLimitSeconds: 0 });
    const q = createQueue(engine, 'q', { retentionSeconds: 0 });
    send(engine, q, T0);
    const seqs: number[] = [];
    engine.collectExpired(q, Number.MAX_SAFE_INTEGER, seqs, [], 10);
    expect(seqs).toEqual([]);
    expect(engine.messageView(q, q.order.find(1)!, T0)).not.toHaveProperty('expiresAtMs');
  });

  it('nextDeadlineMs: the earliest lease timeout, delay or retention deadline', () => {
    const engine = newEngine();
    expect(engine.nextDeadlineMs()).toBe(Infinity);
    const q = createQueue(engine, 'q', { retentionSeconds: 3600, leaseTimeoutSeconds: 100 });
    send(engine, q, T0);
    expect(engine.deadlineHintMs).toBeLessThanOrEqual(T0 + 3_600_000);
    expect(engine.nextDeadlineMs()).toBe(T0 + 3_600_000);
    send(engine, q, T0, { delayMs: 500 });
    expect(engine.deadlineHintMs).toBe(T0 + 500);
    receive(engine, q, T0);
    expect(engine.nextDeadlineMs()).toBe(T0 + 500);
    engine.promote(q, T0 + 500);
    expect(engine.nextDeadlineMs()).toBe(T0 + 100_000);
  });

  it('a refused settlement indexes the lease deadline again', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 1 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.beginSettle(m);
    expect(engine.nextDeadlineMs()).toBeGreaterThan(T0 + 1000); // the settling lease is not a deadline
    engine.endSettle(q, m);
    expect(engine.nextDeadlineMs()).toBe(T0 + 1000);
  });
});

describe('opening as a new primary', () => {
  it('drops every lease (pending messages visible again in send order) and restarts counters', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    for (let i = 0; i < 3; i++) send(engine, q, T0);
    const m1 = receive(engine, q, T0);
    receive(engine, q, T0);
    engine.apply({ type: 'ack', ...ref(q, m1) }, T0);
    engine.openPrimary(T0 + 10);
    expect(counts(engine, q, T0 + 10)).toMatchObject({ total: 2, visible: 2, pending: 0, addedTotal: 0, ackedTotal: 0 });
    expect(engine.describe('default', T0 + 10).stats.startedAtMs).toBe(T0 + 10);
    expect([receive(engine, q, T0 + 10).seq, receive(engine, q, T0 + 10).seq]).toEqual([2, 3]);
  });

  it('keeps failed and delayed messages as they are', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    send(engine, q, T0);
    send(engine, q, T0, { delayMs: 100 });
    engine.apply({ type: 'fail', ...ref(q, receive(engine, q, T0)) }, T0);
    engine.openPrimary(T0 + 1);
    expect(counts(engine, q, T0 + 1)).toMatchObject({ failed: 1, delayed: 1, visible: 0 });
    expect(engine.failureHead(q)?.seq).toBe(1);
  });
});

describe('appends on the primary', () => {
  it('precheck: duplicate seq, dedup_in_flight, dedup_disabled, draining, caps with in-flight appends', () => {
    const engine = newEngine({ messagesPerSpoolMax: 3 });
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 10 });
    const plain = createQueue(engine, 'p');
    const k1 = String.fromCharCode(...key(1));
    const k2 = String.fromCharCode(...key(2));
    send(engine, q, T0, { dedupKey: key(1) });
    expect(engine.precheckAppend(q, k1, 1, true, T0)).toBe(1);
    expect(engine.precheckAppend(q, k2, 1, true, T0)).toBeNull();
    engine.beginAppend(q, 1, k2);
    expect((engine.precheckAppend(q, k2, 1, true, T0) as MqError).kind).toBe('dedup_in_flight');
    expect(counts(engine, q, T0)).toMatchObject({ total: 2, dataBytes: 4 });
    engine.beginAppend(q, 1, null);
    expect((engine.precheckAppend(q, null, 1, true, T0) as MqError).kind).toBe('spool_full');
    expect(engine.precheckAppend(q, null, 1, false, T0)).toBeNull();
    engine.endAppend(q, 1, k2);
    engine.endAppend(q, 1, null);
    expect(engine.precheckAppend(q, k2, 1, true, T0)).toBeNull();
    expect((engine.precheckAppend(plain, k1, 1, true, T0) as MqError).kind).toBe('dedup_disabled');
    send(engine, plain, T0);
    engine.apply({ type: 'deleteQueue', queueGen: plain.gen, mode: 'drain' }, T0);
    expect((engine.precheckAppend(plain, null, 1, true, T0) as MqError).kind).toBe('queue_draining');
  });
});

describe('structures under churn', () => {
  it('stale heap entries are compacted: a long FIFO run keeps the heaps small', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 30 });
    for (let i = 0; i < 20_000; i++) {
      send(engine, q, T0 + i);
      let m = receive(engine, q, T0 + i);
      if (i % 3 === 0) {
        engine.apply({ type: 'nack', ...ref(q, m) }, T0 + i);
        m = receive(engine, q, T0 + i);
      }
      engine.apply({ type: 'ack', ...ref(q, m) }, T0 + i);
    }
    expect(q.leases.size).toBeLessThan(200);
    expect(q.expiry.size).toBeLessThan(200);
    expect(q.ready.size).toBeLessThan(200);
    expect(counts(engine, q, T0 + 20_000)).toMatchObject({ total: 0, ackedTotal: 20_000, nackedTotal: 6667 });
    expect(q.order.liveCount).toBe(q.total);
  });

  it('marks Where consistently', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    expect(m.where).toBe(Where.Leased);
    engine.apply({ type: 'ack', ...ref(q, m) }, T0);
    expect(m.where).toBe(Where.Removed);
    // The store let the payload go with the message.
    expect(m.location).toBe(PAYLOAD_MISSING);
    expect(() => engine.payloadOf(m)).toThrow(PayloadError);
  });
});

// A payload this replica cannot read: the message rests `unavailable` (replica-local), receive
// goes on to the next one, nothing is charged, and a fetched copy puts it back in its place.
describe('payloads this replica cannot read', () => {
  /** q with messages 1..n (payload [seq]); message `bad` leased by receive and found unreadable. */
  function withUnreadable(n: number, bad: number, settings = {}) {
    const engine = newEngine();
    const q = createQueue(engine, 'q', settings);
    for (let i = 1; i <= n; i++) send(engine, q, T0, { payload: new Uint8Array([i]) });
    for (let i = 1; i < bad; i++) engine.apply({ type: 'ack', ...ref(q, receive(engine, q, T0)) }, T0);
    const m = receive(engine, q, T0);
    expect(m.seq).toBe(bad);
    engine.withdrawUnreadable(q, m);
    return { engine, q, m };
  }

  it('a withdrawn lease leaves the message unavailable: no retry spent, no counter moved', () => {
    const { engine, q, m } = withUnreadable(3, 1, { maxRetries: 0 });
    expect(m.where).toBe(Where.Unavailable);
    expect(m.retries).toBe(0);
    expect(m.deliveries).toBe(0); // a send handle still names it
    expect(m.location).toBe(PAYLOAD_MISSING);
    expect(internalState(engine).missingPayloads).toBe(1);
    expect(counts(engine, q, T0)).toMatchObject({
      total: 3, visible: 2, pending: 0, failed: 0, unavailable: 1,
      nackedTotal: 0, releasedTotal: 0, failedTotal: 0,
    });
    expect(engine.messageState(m, T0)).toBe('unavailable');
    expect(engine.spoolCounts(T0).unavailable).toBe(1);
    // Its lease was withdrawn: nothing it could have minted settles it.
    expect(engine.resolveLease(q.gen, m.seq, m.gen, 1, T0)).toBe('settled');
    expect(engine.resolveHandle(q.gen, m.seq, m.gen, 0, false)).toMatchObject({ seq: m.seq });
  });

  it('receive goes on to the next message, and the message returns to its place once filled', () => {
    const { engine, q, m } = withUnreadable(3, 1);
    expect(receive(engine, q, T0).seq).toBe(2);
    expect(engine.fillPayload(q.gen, m.seq, new Uint8Array([1]))).toBe(true);
    expect(m.where).toBe(Where.Ready);
    expect(internalState(engine).missingPayloads).toBe(0);
    expect(counts(engine, q, T0)).toMatchObject({ visible: 2, pending: 1, unavailable: 0 });
    const again = receive(engine, q, T0);
    expect(again.seq).toBe(1); // ahead of message 3: its place by seq
    expect(engine.payloadOf(again)).toEqual(new Uint8Array([1]));
    expect(again.retries).toBe(0);
  });

  it('a lease issued again after the repair times out once, at its own deadline', () => {
    const { engine, q, m } = withUnreadable(1, 1, { leaseTimeoutSeconds: 30 });
    engine.fillPayload(q.gen, m.seq, new Uint8Array([1]));
    // Same instant: the withdrawn lease's deadline entry has the same key and delivery number.
    expect(receive(engine, q, T0)).toMatchObject({ seq: m.seq });
    const out: Message[] = [];
    engine.collectTimedOutLeases(q, T0 + 30_000, out, 10);
    expect(out).toEqual([m]);
    expect(engine.resolveLease(q.gen, m.seq, m.gen, 1, T0 + 30_000)).toBe('expired');
  });

  it('a fill of the wrong length, or for a message that has its payload, changes nothing', () => {
    const { engine, q, m } = withUnreadable(2, 1);
    expect(engine.fillPayload(q.gen, m.seq, new Uint8Array([1, 2]))).toBe(false);
    expect(engine.fillPayload(q.gen, 2, new Uint8Array([2]))).toBe(false);
    expect(m.where).toBe(Where.Unavailable);
  });

  it('a missing payload found by receive itself is held back the same way', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    send(engine, q, T0);
    engine.dropPayload(q, q.order.find(1)!);
    expect(receive(engine, q, T0).seq).toBe(2);
    expect(q.order.find(1)!.where).toBe(Where.Unavailable);
    expect(engine.receive(q, T0)).toBeNull();
  });

  it('replicated commands treat it as visible: discard, expiry and a drain remove it', () => {
    const { engine, q, m } = withUnreadable(2, 1, { retentionSeconds: 60 });
    // Retention keeps running while it is unavailable.
    const seqs: number[] = [];
    const gens: number[] = [];
    engine.collectExpired(q, T0 + 60_000, seqs, gens, 10);
    expect(seqs).toEqual([1, 2]);
    expect(engine.apply({ type: 'discard', ...ref(q, m) }, T0).kind).toBe('ok');
    expect(internalState(engine).missingPayloads).toBe(0);
    expect(counts(engine, q, T0)).toMatchObject({ total: 1, unavailable: 0, discardedTotal: 1 });
    expect(engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'drain' }, T0).kind).toBe('draining');
    expect(engine.apply({ type: 'expire', queueGen: q.gen, seqs: [2], gens: [0] }, T0 + 60_000).kind).toBe('expired');
    expect(engine.queue('q')).toBeUndefined();
  });

  it('a recover by an old handle cannot touch it (not failed), as on every replica', () => {
    const { engine, q, m } = withUnreadable(1, 1);
    expect(engine.apply({ type: 'recover', ...ref(q, m), delayMs: 0 }, T0).kind).toBe('gone');
    expect(engine.apply({ type: 'fail', ...ref(q, m) }, T0).kind).toBe('ok');
    // Failed in the replicated state; here, without its payload, it reads unavailable.
    expect(counts(engine, q, T0)).toMatchObject({ failed: 0, unavailable: 1 });
    expect(engine.messageState(m, T0)).toBe('unavailable');
  });

  it('a visible message whose copy is dropped (peek, a peer fetch) is held back at once', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = q.order.find(1)!;
    engine.dropPayload(q, m);
    expect(m.where).toBe(Where.Unavailable);
    expect(counts(engine, q, T0)).toMatchObject({ visible: 0, unavailable: 1 });
    engine.dropPayload(q, m); // already missing: nothing changes
    expect(internalState(engine).missingPayloads).toBe(1);
  });

  it('a failed message without its payload reads unavailable and leaves the failure head until filled', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    for (let i = 1; i <= 2; i++) send(engine, q, T0, { payload: new Uint8Array([i]) });
    for (let i = 1; i <= 2; i++) engine.apply({ type: 'nack', ...ref(q, receive(engine, q, T0)) }, T0);
    const [one, two] = [q.order.find(1)!, q.order.find(2)!];
    expect(engine.failureHead(q)).toMatchObject({ seq: one.seq });
    engine.dropPayload(q, one);
    expect(one.where).toBe(Where.Failed); // its replicated state
    expect(engine.messageState(one, T0)).toBe('unavailable');
    expect(counts(engine, q, T0)).toMatchObject({ failed: 1, unavailable: 1 });
    expect(engine.failureHead(q)).toMatchObject({ seq: two.seq });
    // A new primary keeps it out of the head too.
    engine.openPrimary(T0 + 1);
    expect(engine.failureHead(q)).toMatchObject({ seq: two.seq });
    expect(counts(engine, q, T0 + 1)).toMatchObject({ failed: 1, unavailable: 1 });
    // Replicated commands still see a failed message: a recover works on it.
    expect(engine.fillPayload(q.gen, 1, new Uint8Array([1]))).toBe(true);
    expect(engine.failureHead(q)).toMatchObject({ seq: one.seq });
    expect(counts(engine, q, T0 + 1)).toMatchObject({ failed: 2, unavailable: 0 });
    engine.dropPayload(q, two);
    expect(engine.apply({ type: 'recover', ...ref(q, two), delayMs: 0 }, T0 + 1).kind).toBe('ok');
    expect(counts(engine, q, T0 + 1)).toMatchObject({ failed: 1, visible: 0, unavailable: 1 });
    expect(two.where).toBe(Where.Unavailable); // visible, but not receivable here
    expect(engine.apply({ type: 'discard', ...ref(q, one) }, T0 + 1).kind).toBe('ok');
    expect(counts(engine, q, T0 + 1)).toMatchObject({ total: 1, failed: 0, unavailable: 1 });
  });

  it('a new primary decides afresh from its own store: a missing payload reads unavailable', () => {
    const { engine, q } = withUnreadable(3, 2);
    engine.openPrimary(T0 + 1);
    expect(counts(engine, q, T0 + 1)).toMatchObject({ visible: 1, unavailable: 1, pending: 0 });
    expect(receive(engine, q, T0 + 1).seq).toBe(3);
  });

  it('the snapshot holds it as visible: replicas encode the same bytes', () => {
    const { engine } = withUnreadable(2, 1);
    const clean = newEngine();
    const q = createQueue(clean, 'q');
    send(clean, q, T0, { payload: new Uint8Array([1]) });
    send(clean, q, T0, { payload: new Uint8Array([2]) });
    const strip = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
    expect(strip(encodeReplicatedState(internalState(engine)))).toBe(strip(encodeReplicatedState(internalState(clean))));
  });
});
