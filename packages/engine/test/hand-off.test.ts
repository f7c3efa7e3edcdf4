// Leases across a planned change of primary: the old primary lists what it holds, a replica that
// opens as the next primary takes the leases over; whatever was logged since voids a lease.

import { describe, expect, it } from 'vitest';
import { SpoolEngine } from '../src/engine.js';
import { Where } from '../src/message.js';
import type { Message } from '../src/message.js';
import { T0, counts, createQueue, newEngine, receive, ref, send } from './helpers.js';

/** A replica of `engine` as it would be on another member: the replicated state only. */
function replicaOf(engine: SpoolEngine): SpoolEngine {
  return SpoolEngine.fromSnapshot(engine.snapshot(), engine.plan);
}

describe('outstandingLeases', () => {
  it('lists every lease with its generation, delivery and deadline, none of other states', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 30 });
    const n = createQueue(engine, 'n', { leaseTimeoutSeconds: 0 });
    for (let i = 0; i < 4; i++) send(engine, q, T0);
    send(engine, n, T0);
    const first = receive(engine, q, T0);
    const second = receive(engine, q, T0 + 5);
    engine.releaseNow(q, second);
    const again = receive(engine, q, T0 + 6);
    expect(again.seq).toBe(second.seq);
    const unbounded = receive(engine, n, T0);
    expect(engine.outstandingLeases()).toEqual([
      { queueGen: q.gen, seq: first.seq, gen: 0, delivery: 1, deadlineMs: T0 + 30_000 },
      { queueGen: q.gen, seq: again.seq, gen: 0, delivery: 2, deadlineMs: T0 + 30_006 },
      { queueGen: n.gen, seq: unbounded.seq, gen: 0, delivery: 1, deadlineMs: Infinity },
    ]);
  });
});

describe('adoptLeases', () => {
  it('the next primary holds the same leases: nothing handed out twice, deadlines kept', () => {
    const old = newEngine();
    const q = createQueue(old, 'q', { leaseTimeoutSeconds: 30 });
    for (let i = 0; i < 3; i++) send(old, q, T0);
    const held = receive(old, q, T0);
    const leases = old.outstandingLeases();

    const next = replicaOf(old);
    next.openPrimary(T0 + 1_000);
    expect(next.adoptLeases(leases, T0 + 1_000)).toEqual(leases);
    const nq = next.queue('q')!;
    expect(counts(next, nq, T0 + 1_000)).toMatchObject({ pending: 1, visible: 2 });
    const found = next.resolveLease(q.gen, held.seq, held.gen, held.deliveries, T0 + 1_000);
    expect((found as Message).seq).toBe(held.seq);
    expect((found as Message).leaseExpiresAtMs).toBe(T0 + 30_000);
    // The held message is not handed out again; the others are, in send order.
    expect([receive(next, nq, T0 + 1_000).seq, receive(next, nq, T0 + 1_000).seq]).toEqual([2, 3]);
    expect(next.receive(nq, T0 + 1_000)).toBeNull();
    // Its next delivery gets the next number, so the adopted lease's token does not match it.
    const settled = next.apply({ type: 'nack', ...ref(nq, found as Message) }, T0 + 2_000);
    expect(settled.kind).toBe('ok');
    expect(receive(next, nq, T0 + 2_000).deliveries).toBe(2);
  });

  it('skips leases whose message was settled or moved by a command logged after them', () => {
    const old = newEngine();
    const q = createQueue(old, 'q', { leaseTimeoutSeconds: 30, maxRetries: 5 });
    for (let i = 0; i < 4; i++) send(old, q, T0);
    const [acked, nacked, failed, kept] = [0, 1, 2, 3].map(() => receive(old, q, T0));
    const leases = old.outstandingLeases();
    expect(leases).toHaveLength(4);
    // Settling commands already in the log when the leases were recorded.
    const next = replicaOf(old);
    for (const [type, m] of [['ack', acked], ['nack', nacked], ['fail', failed]] as const) {
      expect(next.apply({ type, ...ref(q, m!) }, T0 + 10).kind).toBe('ok');
    }
    next.openPrimary(T0 + 20);
    const adopted = next.adoptLeases(leases, T0 + 20);
    expect(adopted.map((l) => l.seq)).toEqual([kept!.seq]);
    const nq = next.queue('q')!;
    expect(counts(next, nq, T0 + 20)).toMatchObject({ total: 3, pending: 1, visible: 1, failed: 1 });
    expect(receive(next, nq, T0 + 20).seq).toBe(nacked!.seq);
  });

  it('a lease past its deadline times out at once on the next primary (retry spent)', () => {
    const old = newEngine();
    const q = createQueue(old, 'q', { leaseTimeoutSeconds: 1 });
    send(old, q, T0);
    receive(old, q, T0);
    const leases = old.outstandingLeases();
    const next = replicaOf(old);
    next.openPrimary(T0 + 5_000);
    next.adoptLeases(leases, T0 + 5_000);
    expect(next.nextDeadlineMs()).toBe(T0 + 1_000);
    const nq = next.queue('q')!;
    const due: Message[] = [];
    next.collectTimedOutLeases(nq, T0 + 5_000, due, 10);
    expect(due.map((m) => m.seq)).toEqual([1]);
    expect(next.resolveLease(q.gen, 1, 0, 1, T0 + 5_000)).toBe('expired');
  });

  it('a lease without a deadline keeps none, even if the queue has a timeout now', () => {
    const old = newEngine();
    const q = createQueue(old, 'q', { leaseTimeoutSeconds: 0 });
    send(old, q, T0);
    receive(old, q, T0);
    const leases = old.outstandingLeases();
    expect(old.apply({ type: 'updateQueue', queueGen: q.gen, change: { leaseTimeoutSeconds: 9 } }, T0).kind)
      .toBe('queue');
    const next = replicaOf(old);
    next.openPrimary(T0);
    next.adoptLeases(leases, T0);
    const message = next.resolveLease(q.gen, 1, 0, 1, T0 + 60_000) as Message;
    expect(message.where).toBe(Where.Leased);
    expect(message.leaseExpiresAtMs).toBe(Infinity);
    const due: Message[] = [];
    next.collectTimedOutLeases(next.queue('q')!, T0 + 3_600_000, due, 10);
    expect(due).toEqual([]);
  });

  it('ignores leases naming nothing it can take: unknown queue or seq, bad delivery, leased twice', () => {
    const old = newEngine();
    const q = createQueue(old, 'q');
    send(old, q, T0);
    const m = receive(old, q, T0);
    const next = replicaOf(old);
    next.openPrimary(T0);
    const lease = { queueGen: q.gen, seq: m.seq, gen: 0, delivery: 1, deadlineMs: Infinity };
    const adopted = next.adoptLeases(
      [
        { ...lease, queueGen: q.gen + 7 },
        { ...lease, seq: 99 },
        { ...lease, delivery: 0 },
        { ...lease, gen: 3 },
        lease,
        lease,
      ],
      T0,
    );
    expect(adopted).toEqual([lease]);
    expect(counts(next, next.queue('q')!, T0)).toMatchObject({ pending: 1, visible: 0 });
  });
});
