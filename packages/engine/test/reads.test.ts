// Views, counts and keyset listings.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageIdOf } from '../src/message.js';
import { T0, counts, createQueue, newEngine, receive, ref, send } from './helpers.js';

describe('counts', () => {
  it('every per-state count and counter, summed for the spool with its own counters', () => {
    const engine = newEngine();
    const a = createQueue(engine, 'a', { maxRetries: 0 });
    const b = createQueue(engine, 'b');
    send(engine, a, T0, { payload: new Uint8Array(1) });
    send(engine, a, T0, { payload: new Uint8Array(2), delayMs: 100 });
    send(engine, a, T0, { payload: new Uint8Array(4) });
    send(engine, b, T0, { payload: new Uint8Array(8) });
    send(engine, b, T0, { payload: new Uint8Array(16) });
    engine.apply({ type: 'nack', ...ref(a, receive(engine, a, T0)) }, T0); // a#1 failed
    receive(engine, a, T0); // a#3 pending
    engine.apply({ type: 'ack', ...ref(b, receive(engine, b, T0)) }, T0);
    expect(counts(engine, a, T0)).toEqual({
      total: 3, dataBytes: 7, delayed: 1, visible: 0, pending: 1, failed: 1, unavailable: 0,
      addedTotal: 3, ackedTotal: 0, nackedTotal: 1, releasedTotal: 0, failedTotal: 1, discardedTotal: 0, expiredTotal: 0,
    });
    expect(engine.describe('default', T0)).toEqual({
      name: 'default',
      queueCount: 2,
      stats: {
        total: 4, dataBytes: 23, delayed: 1, visible: 1, pending: 1, failed: 1, unavailable: 0,
        addedTotal: 5, ackedTotal: 1, nackedTotal: 1, releasedTotal: 0, failedTotal: 1, discardedTotal: 0, expiredTotal: 0,
        sampledAtMs: T0, startedAtMs: T0,
      },
    });
    // A delay elapsing moves the message from delayed to visible in the counts.
    expect(counts(engine, a, T0 + 100)).toMatchObject({ delayed: 0, visible: 1 });
  });
});

describe('message views', () => {
  it('pending with a lease timeout shows leaseExpiresAt; delayed shows visibleAt; retention shows expiresAt', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { leaseTimeoutSeconds: 5, retentionSeconds: 60 });
    send(engine, q, T0);
    send(engine, q, T0, { delayMs: 10 });
    const m = receive(engine, q, T0);
    expect(engine.messageView(q, m, T0)).toEqual({
      id: messageIdOf(1), state: 'pending', retries: 0, createdAtMs: T0, leaseExpiresAtMs: T0 + 5000, expiresAtMs: T0 + 60_000,
    });
    const d = q.order.find(2)!;
    expect(engine.messageView(q, d, T0)).toEqual({
      id: messageIdOf(2), state: 'delayed', retries: 0, createdAtMs: T0, visibleAtMs: T0 + 10, expiresAtMs: T0 + 60_010,
    });
    // Reads as visible once its delay elapsed, even before anything promoted it.
    expect(engine.messageState(d, T0 + 10)).toBe('visible');
  });
});

describe('queue selection', () => {
  function withQueues(names: string[]) {
    const engine = newEngine();
    for (const name of names) createQueue(engine, name);
    return engine;
  }
  const page = (engine: ReturnType<typeof newEngine>, selection: Parameters<ReturnType<typeof newEngine>['selectQueues']>[0]) => {
    const result = engine.selectQueues(selection);
    return { names: result.queues.map((q) => q.name), more: result.more };
  };

  it('byte order of names, keyset after a name, more when the selection continues', () => {
    const engine = withQueues(['b', 'a', 'B', 'a:1', 'a-1', 'z']);
    expect(page(engine, { limit: 10 })).toEqual({ names: ['B', 'a', 'a-1', 'a:1', 'b', 'z'], more: false });
    expect(page(engine, { limit: 2 })).toEqual({ names: ['B', 'a'], more: true });
    expect(page(engine, { limit: 2, afterName: 'a' })).toEqual({ names: ['a-1', 'a:1'], more: true });
    expect(page(engine, { limit: 2, afterName: 'a:1' })).toEqual({ names: ['b', 'z'], more: false });
    // A cursor name that no longer exists still resumes in place.
    expect(page(engine, { limit: 10, afterName: 'a0' })).toEqual({ names: ['a:1', 'b', 'z'], more: false });
  });

  it('names and match select; paging walks selected names only', () => {
    const engine = withQueues(['x1', 'x2', 'y1', 'x3']);
    const match = (name: string) => name.startsWith('x');
    expect(page(engine, { limit: 2, match })).toEqual({ names: ['x1', 'x2'], more: true });
    expect(page(engine, { limit: 2, match, afterName: 'x2' })).toEqual({ names: ['x3'], more: false });
    expect(page(engine, { limit: 10, names: ['y1', 'nope', 'x3'] })).toEqual({ names: ['x3', 'y1'], more: false });
    expect(page(engine, { limit: 1, names: ['x1', 'x2'] })).toEqual({ names: ['x1'], more: true });
  });
});

describe('message selection', () => {
  it('send order, state filter, keyset after a seq', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    for (let i = 0; i < 6; i++) send(engine, q, T0);
    engine.apply({ type: 'nack', ...ref(q, receive(engine, q, T0)) }, T0); // 1 failed
    receive(engine, q, T0); // 2 pending
    const sel = (state: 'visible' | 'failed' | 'pending' | 'unavailable' | undefined, limit: number, afterSeq = 0) => {
      const result = engine.selectMessages(q, T0, { state, limit, afterSeq });
      return { seqs: result.messages.map((m) => m.seq), more: result.more };
    };
    expect(sel(undefined, 10)).toEqual({ seqs: [1, 2, 3, 4, 5, 6], more: false });
    expect(sel('visible', 2)).toEqual({ seqs: [3, 4], more: true });
    expect(sel('visible', 2, 4)).toEqual({ seqs: [5, 6], more: false });
    expect(sel('failed', 10)).toEqual({ seqs: [1], more: false });
    expect(sel('pending', 1)).toEqual({ seqs: [2], more: false });
    expect(sel('unavailable', 10)).toEqual({ seqs: [], more: false });
    // 3's payload is unreadable here: it is held back and the next receive takes 4.
    const three = receive(engine, q, T0);
    expect(three.seq).toBe(3);
    engine.withdrawUnreadable(q, three);
    expect(receive(engine, q, T0).seq).toBe(4);
    expect(sel('unavailable', 10)).toEqual({ seqs: [3], more: false });
    expect(sel('visible', 10)).toEqual({ seqs: [5, 6], more: false });
    expect(engine.messageView(q, three, T0).state).toBe('unavailable');
  });

  it('a paged walk never repeats or skips a message that exists throughout (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.tuple(fc.boolean(), fc.nat()), { maxLength: 60 }),
        (initial, limit, churn) => {
          const engine = newEngine();
          const q = createQueue(engine, 'q');
          for (let i = 0; i < initial; i++) send(engine, q, T0);
          const removed = new Set<number>();
          const seen: number[] = [];
          let afterSeq = 0;
          let step = 0;
          for (let pages = 0; pages < 200; pages++) {
            const result = engine.selectMessages(q, T0, { limit, afterSeq });
            seen.push(...result.messages.map((m) => m.seq));
            if (!result.more) break;
            afterSeq = result.messages[result.messages.length - 1]!.seq;
            // Between pages, add or remove messages.
            for (let k = 0; k < 3 && step < churn.length; k++, step++) {
              const [add, pick] = churn[step]!;
              if (add) send(engine, q, T0);
              else {
                const live = q.order.liveMessages();
                if (live.length === 0) continue;
                const victim = live[pick % live.length]!;
                engine.apply({ type: 'discard', ...ref(q, victim) }, T0);
                removed.add(victim.seq);
              }
            }
          }
          expect(new Set(seen).size).toBe(seen.length);
          expect([...seen].sort((x, y) => x - y)).toEqual(seen);
          for (let seq = 1; seq <= initial; seq++) if (!removed.has(seq)) expect(seen).toContain(seq);
        },
      ),
      { numRuns: 100 },
    );
  });
});
