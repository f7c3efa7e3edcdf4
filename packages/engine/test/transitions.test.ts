// Every row of the interface's transition tables, applied as replicated commands, with the
// counters decisions.md "Counters" defines.

import { describe, expect, it } from 'vitest';
import { internalState } from '../src/engine.js';
import type { ApplyResult } from '../src/commands.js';
import { MqError } from '../src/errors.js';
import { Where, messageIdOf } from '../src/message.js';
import { resolveSettings } from '../src/settings.js';
import { T0, counts, createQueue, key, newEngine, receive, ref, send } from './helpers.js';

function refusedKind(result: ApplyResult): string {
  if (result.kind !== 'refused') throw new Error(`expected refused, got ${result.kind}`);
  return result.error.kind;
}

describe('send', () => {
  it('without delay: visible, retention clock starts now, addedTotal', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 60 });
    const seq = send(engine, q, T0 + 5, { payload: new Uint8Array(10) });
    expect(seq).toBe(1);
    const m = q.order.find(seq)!;
    expect(engine.messageState(m, T0 + 5)).toBe('visible');
    expect(m.retentionStartMs).toBe(T0 + 5);
    expect(engine.messageView(q, m, T0 + 5)).toEqual({
      id: messageIdOf(1),
      state: 'visible',
      retries: 0,
      createdAtMs: T0 + 5,
      expiresAtMs: T0 + 5 + 60_000,
    });
    expect(counts(engine, q, T0 + 5)).toMatchObject({ total: 1, dataBytes: 10, visible: 1, addedTotal: 1 });
  });

  it('with delay: delayed until it elapses, retention clock starts at visibility', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 60 });
    const seq = send(engine, q, T0, { delayMs: 1000 });
    const m = q.order.find(seq)!;
    expect(engine.messageView(q, m, T0)).toMatchObject({ state: 'delayed', visibleAtMs: T0 + 1000, expiresAtMs: T0 + 61_000 });
    expect(counts(engine, q, T0 + 999)).toMatchObject({ delayed: 1, visible: 0 });
    expect(engine.receive(q, T0 + 999)).toBeNull();
    expect(counts(engine, q, T0 + 1000)).toMatchObject({ delayed: 0, visible: 1 });
    expect(receive(engine, q, T0 + 1000).seq).toBe(seq);
  });

  it('seqs increase across queues of the spool', () => {
    const engine = newEngine();
    const a = createQueue(engine, 'a');
    const b = createQueue(engine, 'b');
    expect([send(engine, a, T0), send(engine, b, T0), send(engine, a, T0)]).toEqual([1, 2, 3]);
  });

  it('to a missing queue generation: 404 queue_not_found', () => {
    const engine = newEngine();
    const result = engine.apply({ type: 'send', queueGen: 42, delayMs: 0, dedupKey: null, payload: new Uint8Array() }, T0);
    expect(refusedKind(result)).toBe('queue_not_found');
  });
});

describe('settling a delivery', () => {
  it('ack removes it and counts ackedTotal; a second ack is gone', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0, { payload: new Uint8Array(4) });
    const m = receive(engine, q, T0);
    const r = ref(q, m);
    expect(engine.apply({ type: 'ack', ...r }, T0).kind).toBe('ok');
    expect(counts(engine, q, T0)).toMatchObject({ total: 0, dataBytes: 0, pending: 0, ackedTotal: 1 });
    expect(engine.apply({ type: 'ack', ...r }, T0).kind).toBe('gone');
    expect(internalState(engine).counters.acked).toBe(1);
  });

  it('nack below maxRetries: visible again with a retry counted (nackedTotal)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 2 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    expect(engine.apply({ type: 'nack', ...ref(q, m) }, T0).kind).toBe('ok');
    expect(m.retries).toBe(1);
    expect(engine.messageState(m, T0)).toBe('visible');
    expect(counts(engine, q, T0)).toMatchObject({ visible: 1, pending: 0, nackedTotal: 1, failedTotal: 0 });
  });

  it('nack once maxRetries redeliveries are done: failed (nackedTotal and failedTotal)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 2 });
    send(engine, q, T0);
    for (let i = 0; i < 2; i++) {
      const m = receive(engine, q, T0);
      engine.apply({ type: 'nack', ...ref(q, m) }, T0);
    }
    const m = receive(engine, q, T0 + 7);
    expect(m.retries).toBe(2);
    expect(engine.apply({ type: 'nack', ...ref(q, m) }, T0 + 7).kind).toBe('ok');
    expect(engine.messageState(m, T0 + 7)).toBe('failed');
    expect(m.retries).toBe(2);
    expect(m.retentionStartMs).toBe(T0 + 7);
    expect(counts(engine, q, T0 + 7)).toMatchObject({ failed: 1, visible: 0, nackedTotal: 3, failedTotal: 1 });
  });

  it('nack with maxRetries 0 fails at once', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.apply({ type: 'nack', ...ref(q, m) }, T0);
    expect(engine.messageState(m, T0)).toBe('failed');
    expect(m.retries).toBe(0);
  });

  it('release without delay: visible, no retry spent (releasedTotal)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    expect(engine.apply({ type: 'release', ...ref(q, m), delayMs: 0 }, T0).kind).toBe('ok');
    expect(m.retries).toBe(0);
    expect(counts(engine, q, T0)).toMatchObject({ visible: 1, releasedTotal: 1, nackedTotal: 0 });
  });

  it('release with delay: delayed, retention clock kept', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 600 });
    send(engine, q, T0);
    const m = receive(engine, q, T0 + 10);
    engine.apply({ type: 'release', ...ref(q, m), delayMs: 5000 }, T0 + 10);
    expect(engine.messageView(q, m, T0 + 10)).toMatchObject({ state: 'delayed', visibleAtMs: T0 + 5010, expiresAtMs: T0 + 600_000 });
    expect(counts(engine, q, T0 + 10)).toMatchObject({ delayed: 1, releasedTotal: 1 });
    expect(engine.receive(q, T0 + 5009)).toBeNull();
    expect(receive(engine, q, T0 + 5010)).toMatchObject({ seq: m.seq });
  });

  it('fail: failed at once, retries unchanged, retention clock restarts (failedTotal)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0 + 3);
    expect(engine.apply({ type: 'fail', ...ref(q, m) }, T0 + 3).kind).toBe('ok');
    expect(engine.messageState(m, T0 + 3)).toBe('failed');
    expect(m.retentionStartMs).toBe(T0 + 3);
    expect(counts(engine, q, T0 + 3)).toMatchObject({ failed: 1, failedTotal: 1 });
  });

  it('discard with a lease: removed, counted as discarded, not acked', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    expect(engine.apply({ type: 'discard', ...ref(q, m) }, T0).kind).toBe('ok');
    expect(counts(engine, q, T0)).toMatchObject({ total: 0, discardedTotal: 1, ackedTotal: 0 });
  });

  it('every settlement of a moved-on message is gone, and changes nothing', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    const stale = ref(q, m);
    engine.apply({ type: 'nack', ...stale }, T0); // gen moves on
    const before = engine.snapshot();
    for (const type of ['ack', 'nack', 'fail', 'discard'] as const) {
      expect(engine.apply({ type, ...stale }, T0).kind).toBe('gone');
    }
    expect(engine.apply({ type: 'release', ...stale, delayMs: 0 }, T0).kind).toBe('gone');
    expect(engine.apply({ type: 'recover', ...stale, delayMs: 0 }, T0).kind).toBe('gone');
    expect(engine.apply({ type: 'ack', ...stale, queueGen: 99 }, T0).kind).toBe('gone');
    expect(engine.snapshot()).toEqual(before);
  });
});

describe('failed messages', () => {
  function failedMessage(retentionSeconds = 600) {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds, maxRetries: 0 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.apply({ type: 'nack', ...ref(q, m) }, T0);
    return { engine, q, m };
  }

  it('recover: visible again, retries reset, retention clock restarts', () => {
    const { engine, q, m } = failedMessage();
    m.retries = 3; // as if it had spent retries before failing
    expect(engine.apply({ type: 'recover', ...ref(q, m), delayMs: 0 }, T0 + 50).kind).toBe('ok');
    expect(m.retries).toBe(0);
    expect(m.retentionStartMs).toBe(T0 + 50);
    expect(engine.messageState(m, T0 + 50)).toBe('visible');
    expect(counts(engine, q, T0 + 50)).toMatchObject({ visible: 1, failed: 0 });
    expect(receive(engine, q, T0 + 50)).toMatchObject({ seq: m.seq });
  });

  it('recover with delay: delayed; retention restarts when it becomes visible', () => {
    const { engine, q, m } = failedMessage();
    engine.apply({ type: 'recover', ...ref(q, m), delayMs: 2000 }, T0 + 50);
    expect(engine.messageView(q, m, T0 + 50)).toMatchObject({ state: 'delayed', visibleAtMs: T0 + 2050, expiresAtMs: T0 + 2050 + 600_000 });
  });

  it('recover of a message that is not failed is gone', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = q.order.find(1)!;
    expect(engine.apply({ type: 'recover', ...ref(q, m), delayMs: 0 }, T0).kind).toBe('gone');
  });

  it('discard (by handle or failure lease): removed, discardedTotal', () => {
    const { engine, q, m } = failedMessage();
    expect(engine.apply({ type: 'discard', ...ref(q, m) }, T0).kind).toBe('ok');
    expect(counts(engine, q, T0)).toMatchObject({ total: 0, failed: 0, discardedTotal: 1 });
  });

  it('ack, nack, release and fail never apply to a failed message', () => {
    const { engine, q, m } = failedMessage();
    for (const type of ['ack', 'nack', 'fail'] as const) expect(engine.apply({ type, ...ref(q, m) }, T0).kind).toBe('gone');
    expect(engine.apply({ type: 'release', ...ref(q, m), delayMs: 0 }, T0).kind).toBe('gone');
  });
});

describe('discard by handle before delivery', () => {
  it('cancels a visible or delayed message', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const a = send(engine, q, T0);
    const b = send(engine, q, T0, { delayMs: 10_000 });
    for (const seq of [a, b]) {
      const m = q.order.find(seq)!;
      expect(engine.apply({ type: 'discard', ...ref(q, m) }, T0).kind).toBe('ok');
    }
    expect(counts(engine, q, T0)).toMatchObject({ total: 0, delayed: 0, visible: 0, discardedTotal: 2 });
    expect(engine.receive(q, T0 + 20_000)).toBeNull();
  });
});

describe('ack-and-send', () => {
  it('acks the source and appends to the target atomically (ackedTotal on source, addedTotal on target)', () => {
    const engine = newEngine();
    const src = createQueue(engine, 'src');
    const dst = createQueue(engine, 'dst');
    send(engine, src, T0);
    const m = receive(engine, src, T0);
    const result = engine.apply(
      { type: 'ackAndSend', ...ref(src, m), targetGen: dst.gen, delayMs: 0, dedupKey: null, payload: new Uint8Array([7]) },
      T0,
    );
    expect(result).toEqual({ kind: 'appended', queueGen: dst.gen, seq: 2 });
    expect(counts(engine, src, T0)).toMatchObject({ total: 0, ackedTotal: 1, addedTotal: 1 });
    expect(counts(engine, dst, T0)).toMatchObject({ total: 1, visible: 1, addedTotal: 1, ackedTotal: 0 });
  });

  it('into the same queue, with a delay', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.apply({ type: 'ackAndSend', ...ref(q, m), targetGen: q.gen, delayMs: 100, dedupKey: null, payload: new Uint8Array() }, T0);
    expect(counts(engine, q, T0)).toMatchObject({ total: 1, delayed: 1, ackedTotal: 1, addedTotal: 2 });
  });

  it('a dedup hit refuses the whole call: 409 dedup_claimed with the original id, nothing acked', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 60 });
    const original = send(engine, q, T0, { dedupKey: key(1) });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    const result = engine.apply({ type: 'ackAndSend', ...ref(q, m), targetGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0);
    expect(result.kind).toBe('refused');
    const error = (result as { error: MqError }).error;
    expect(error.kind).toBe('dedup_claimed');
    expect(error.details).toEqual({ messageId: messageIdOf(original) });
    expect(m.where).toBe(Where.Leased);
    expect(counts(engine, q, T0)).toMatchObject({ total: 2, ackedTotal: 0 });
  });

  it('a retry of a committed call is gone and appends nothing', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    const command = { type: 'ackAndSend' as const, ...ref(q, m), targetGen: q.gen, delayMs: 0, dedupKey: null, payload: new Uint8Array() };
    expect(engine.apply(command, T0).kind).toBe('appended');
    expect(engine.apply(command, T0).kind).toBe('gone');
    expect(counts(engine, q, T0).total).toBe(1);
  });

  it('into a draining queue: 409 queue_draining; to a missing queue: 404', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const d = createQueue(engine, 'd');
    send(engine, q, T0);
    send(engine, d, T0);
    engine.apply({ type: 'deleteQueue', queueGen: d.gen, mode: 'drain' }, T0);
    const m = receive(engine, q, T0);
    const base = { type: 'ackAndSend' as const, ...ref(q, m), delayMs: 0, dedupKey: null, payload: new Uint8Array() };
    expect(refusedKind(engine.apply({ ...base, targetGen: d.gen }, T0))).toBe('queue_draining');
    expect(refusedKind(engine.apply({ ...base, targetGen: 99 }, T0))).toBe('queue_not_found');
  });

  it('caps: the message cap does not apply; the byte cap refuses only growth past it', () => {
    const engine = newEngine({ messagesPerSpoolMax: 1, payloadBytesPerSpoolMax: 10, messageSizeMaxBytes: 10 });
    const q = createQueue(engine, 'q');
    send(engine, q, T0, { payload: new Uint8Array(6) });
    const m = receive(engine, q, T0);
    const base = { type: 'ackAndSend' as const, ...ref(q, m), targetGen: q.gen, delayMs: 0, dedupKey: null };
    expect(refusedKind(engine.apply({ ...base, payload: new Uint8Array(11) }, T0))).toBe('spool_full');
    expect(engine.apply({ ...base, payload: new Uint8Array(10) }, T0).kind).toBe('appended');
  });
});

describe('retention expiry (expire command)', () => {
  it('removes the named messages whose generation matches (expiredTotal)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const a = send(engine, q, T0);
    const b = send(engine, q, T0);
    const mb = q.order.find(b)!;
    const result = engine.apply({ type: 'expire', queueGen: q.gen, seqs: [a, b], gens: [0, mb.gen + 1] }, T0);
    expect(result).toEqual({ kind: 'expired', count: 1 });
    expect(counts(engine, q, T0)).toMatchObject({ total: 1, expiredTotal: 1 });
    expect(engine.apply({ type: 'expire', queueGen: 77, seqs: [b], gens: [0] }, T0)).toEqual({ kind: 'expired', count: 0 });
  });
});

describe('dedup', () => {
  it('a repeat inside the window is a duplicate of the original; after it, a new message', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 10 });
    const first = send(engine, q, T0, { dedupKey: key(1) });
    const repeat = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0 + 9999);
    expect(repeat).toEqual({ kind: 'duplicate', seq: first });
    expect(counts(engine, q, T0 + 9999)).toMatchObject({ total: 1, addedTotal: 1 });
    expect(send(engine, q, T0 + 10_000, { dedupKey: key(1) })).toBe(2);
  });

  it('keys are per queue', () => {
    const engine = newEngine();
    const a = createQueue(engine, 'a', { dedupWindowSeconds: 10 });
    const b = createQueue(engine, 'b', { dedupWindowSeconds: 10 });
    send(engine, a, T0, { dedupKey: key(1) });
    expect(send(engine, b, T0, { dedupKey: key(1) })).toBe(2);
  });

  it('the window answers whether the key landed, not whether the message exists', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 10 });
    const first = send(engine, q, T0, { dedupKey: key(1) });
    engine.apply({ type: 'discard', queueGen: q.gen, seq: first, gen: 0 }, T0);
    const repeat = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0 + 1);
    expect(repeat).toEqual({ kind: 'duplicate', seq: first });
  });

  it('a dedup key on a queue without a window: 400 dedup_disabled', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const result = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0);
    expect(refusedKind(result)).toBe('dedup_disabled');
  });

  it('a refused send does not claim its key', () => {
    const engine = newEngine({ payloadBytesPerSpoolMax: 4, messageSizeMaxBytes: 4 });
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 10 });
    const big = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array(5) }, T0);
    expect(refusedKind(big)).toBe('spool_full');
    expect(send(engine, q, T0, { dedupKey: key(1), payload: new Uint8Array(1) })).toBe(1);
  });

  it('changing the window forgets every key; setting the same value changes nothing', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 10 });
    send(engine, q, T0, { dedupKey: key(1) });
    engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { dedupWindowSeconds: 10 } }, T0);
    expect(engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0).kind).toBe('duplicate');
    engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { dedupWindowSeconds: 20 } }, T0);
    expect(engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0).kind).toBe('appended');
    expect(internalState(engine).dedupKeyCount).toBe(1);
  });

  it('expired keys are purged as later keys arrive', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 1 });
    for (let i = 0; i < 10; i++) send(engine, q, T0 + i * 1000, { dedupKey: key(i) });
    expect(q.dedup.size).toBe(1);
    expect(internalState(engine).dedupKeyCount).toBe(1);
  });

  it('the dedup key bound refuses new keys with 507', () => {
    const engine = newEngine({ dedupKeysPerSpoolMax: 1 });
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 10 });
    send(engine, q, T0, { dedupKey: key(1) });
    const result = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(2), payload: new Uint8Array() }, T0);
    expect(refusedKind(result)).toBe('spool_full');
    send(engine, q, T0); // without a key still fine
  });
});

describe('spool caps', () => {
  it('stored messages: 507 spool_full before appending', () => {
    const engine = newEngine({ messagesPerSpoolMax: 2 });
    const a = createQueue(engine, 'a');
    const b = createQueue(engine, 'b');
    send(engine, a, T0);
    send(engine, b, T0);
    const result = engine.apply({ type: 'send', queueGen: a.gen, delayMs: 0, dedupKey: null, payload: new Uint8Array() }, T0);
    expect(refusedKind(result)).toBe('spool_full');
    expect(internalState(engine).messageCount).toBe(2);
    expect(internalState(engine).nextSeq).toBe(3);
  });

  it('payload bytes: 507 spool_full; exactly at the cap is fine', () => {
    const engine = newEngine({ payloadBytesPerSpoolMax: 10, messageSizeMaxBytes: 10 });
    const q = createQueue(engine, 'q');
    send(engine, q, T0, { payload: new Uint8Array(6) });
    const result = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: null, payload: new Uint8Array(5) }, T0);
    expect(refusedKind(result)).toBe('spool_full');
    send(engine, q, T0, { payload: new Uint8Array(4) });
  });
});

describe('queues', () => {
  it('create: createdAt is the apply time; an existing name is 409 queue_exists', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', {}, T0 + 5);
    expect(engine.queueView(q)).toMatchObject({ name: 'q', createdAtMs: T0 + 5, state: 'active' });
    const settings = resolveSettings({}, engine.plan) as never;
    expect(refusedKind(engine.apply({ type: 'createQueue', name: 'q', settings }, T0))).toBe('queue_exists');
  });

  it('create beyond the plan queue limit: 403 queue_limit', () => {
    const engine = newEngine({ queuesPerSpoolMax: 2 });
    createQueue(engine, 'a');
    createQueue(engine, 'b');
    const settings = resolveSettings({}, engine.plan) as never;
    expect(refusedKind(engine.apply({ type: 'createQueue', name: 'c', settings }, T0))).toBe('queue_limit');
  });

  it('create with settings out of range is refused (the engine guards its log)', () => {
    const engine = newEngine();
    const settings = { ...(resolveSettings({}, engine.plan) as object), retentionSeconds: 10 } as never;
    expect(refusedKind(engine.apply({ type: 'createQueue', name: 'a', settings }, T0))).toBe('invalid_argument');
  });

  it('update: changes settings, 403 retention_limit above the plan, 404 for a missing queue', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    expect(engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { maxRetries: 1, recvRateLimit: { intervalMicros: 10_000, burst: 1 } } }, T0).kind).toBe('queue');
    expect(engine.queueView(q).settings).toMatchObject({ maxRetries: 1, recvRateLimit: { intervalMicros: 10_000, burst: 1 } });
    expect(refusedKind(engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { retentionSeconds: 2_000_000 } }, T0))).toBe('retention_limit');
    expect(refusedKind(engine.apply({ type: 'updateQueue', queueGen: 9, change: {} }, T0))).toBe('queue_not_found');
  });

  it('force delete: everything gone at once, the name free; the spool counters keep counting', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    send(engine, q, T0);
    receive(engine, q, T0);
    expect(engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'force' }, T0)).toEqual({ kind: 'deleted' });
    expect(engine.queue('q')).toBeUndefined();
    expect(internalState(engine).messageCount).toBe(0);
    expect(engine.spoolCounts(T0)).toMatchObject({ total: 0, pending: 0, addedTotal: 2 });
    const again = createQueue(engine, 'q');
    expect(again.gen).not.toBe(q.gen);
    expect(counts(engine, again, T0).total).toBe(0);
  });

  it('drain of an empty queue deletes at once', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    expect(engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'drain' }, T0)).toEqual({ kind: 'deleted' });
    expect(engine.queue('q')).toBeUndefined();
  });

  it('drain: refuses sends (409 queue_draining), stays consumable, deleted with its last message', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    send(engine, q, T0);
    send(engine, q, T0);
    expect(engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'drain' }, T0)).toEqual({ kind: 'draining' });
    expect(engine.queueView(q).state).toBe('draining');
    const refused = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: null, payload: new Uint8Array() }, T0);
    expect(refusedKind(refused)).toBe('queue_draining');
    expect(engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { maxRetries: 0 } }, T0).kind).toBe('queue');
    const a = receive(engine, q, T0);
    engine.apply({ type: 'ack', ...ref(q, a) }, T0);
    expect(engine.queue('q')).toBe(q);
    const b = receive(engine, q, T0);
    engine.apply({ type: 'ack', ...ref(q, b) }, T0);
    expect(engine.queue('q')).toBeUndefined();
  });

  it('drain: a retried send whose key landed still learns it (duplicate before queue_draining)', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { dedupWindowSeconds: 60 });
    const seq = send(engine, q, T0, { dedupKey: key(3) });
    engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'drain' }, T0);
    const retry = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(3), payload: new Uint8Array() }, T0);
    expect(retry).toEqual({ kind: 'duplicate', seq });
    const fresh = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(4), payload: new Uint8Array() }, T0);
    expect(refusedKind(fresh)).toBe('queue_draining');
  });

  it('drain: failed messages block it until discarded or recovered', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { maxRetries: 0 });
    send(engine, q, T0);
    const m = receive(engine, q, T0);
    engine.apply({ type: 'nack', ...ref(q, m) }, T0);
    engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'drain' }, T0);
    expect(engine.queue('q')).toBe(q);
    engine.apply({ type: 'recover', ...ref(q, m), delayMs: 0 }, T0);
    const again = receive(engine, q, T0);
    engine.apply({ type: 'discard', ...ref(q, again) }, T0);
    expect(engine.queue('q')).toBeUndefined();
  });

  it('drain completes through expiry too', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const seq = send(engine, q, T0);
    engine.apply({ type: 'deleteQueue', queueGen: q.gen, mode: 'drain' }, T0);
    engine.apply({ type: 'expire', queueGen: q.gen, seqs: [seq], gens: [0] }, T0);
    expect(engine.queue('q')).toBeUndefined();
  });
});

describe('apply time', () => {
  it('never goes backwards: an earlier entry time applies at the latest time seen', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', {}, T0 + 100);
    const seq = send(engine, q, T0);
    expect(q.order.find(seq)!.createdAtMs).toBe(T0 + 100);
  });
});

describe('on a replica (no leases)', () => {
  it('applies lease-ending commands to messages it holds as visible', () => {
    const primary = newEngine();
    const replica = newEngine();
    const pq = createQueue(primary, 'q', { maxRetries: 1 });
    const rq = createQueue(replica, 'q', { maxRetries: 1 });
    for (const engine of [primary, replica]) for (let i = 0; i < 4; i++) send(engine, engine.queue('q')!, T0);
    const commands = [
      { type: 'nack' as const, ...ref(pq, receive(primary, pq, T0)) },
      { type: 'release' as const, ...ref(pq, receive(primary, pq, T0)), delayMs: 50 },
      { type: 'fail' as const, ...ref(pq, receive(primary, pq, T0)) },
      { type: 'ack' as const, ...ref(pq, receive(primary, pq, T0)) },
    ];
    for (const command of commands) {
      expect(primary.apply(command, T0 + 1)).toEqual(replica.apply(command, T0 + 1));
    }
    expect(replica.snapshot()).toEqual(primary.snapshot());
    expect(counts(replica, rq, T0 + 1)).toMatchObject({ total: 3, visible: 1, delayed: 1, failed: 1, pending: 0 });
    expect(counts(primary, pq, T0 + 1)).toMatchObject({ total: 3, visible: 1, delayed: 1, failed: 1, pending: 0 });
  });
});

describe('setPlan', () => {
  it('caps later creations and appends, keeps what is stored, bounds retention at once', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q', { retentionSeconds: 0 });
    send(engine, q, T0);
    send(engine, q, T0);
    expect(q.retentionMs).toBe(14 * 24 * 3600 * 1000);
    const plan = { ...engine.plan, queuesPerSpoolMax: 1, messagesPerSpoolMax: 2, retentionLimitSeconds: 600 };
    expect(engine.apply({ type: 'setPlan', plan, version: 5 }, T0 + 1)).toEqual({ kind: 'ok' });
    expect(engine.plan).toEqual(plan);
    // A setPlan decided earlier (a lagging proposer) changes nothing.
    expect(engine.apply({ type: 'setPlan', plan: { ...plan, queuesPerSpoolMax: 50 }, version: 4 }, T0 + 1)).toEqual({ kind: 'ok' });
    expect(engine.plan).toEqual(plan);
    expect(q.retentionMs).toBe(600_000);
    expect(engine.queueView(q).settings.effectiveRetentionSeconds).toBe(600);
    expect(counts(engine, q, T0 + 1).total).toBe(2);
    const settings = resolveSettings({}, engine.plan);
    if (settings instanceof MqError) throw settings;
    expect(refusedKind(engine.apply({ type: 'createQueue', name: 'r', settings }, T0 + 2))).toBe('queue_limit');
    const sent = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: null, payload: new Uint8Array(1) }, T0 + 3);
    expect(refusedKind(sent)).toBe('spool_full');
    expect(refusedKind(engine.apply({ type: 'updateQueue', queueGen: q.gen, change: { retentionSeconds: 601 } }, T0 + 4))).toBe('retention_limit');
  });
});
