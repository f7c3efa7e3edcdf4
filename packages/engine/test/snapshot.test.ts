import { describe, expect, it } from 'vitest';
import { CodecError } from '../src/bytes.js';
import { SpoolEngine } from '../src/engine.js';
import { DEFAULT_PLAN } from '../src/plan.js';
import { decodeSnapshot } from '../src/snapshot.js';
import { encodeSnapshot } from '../src/snapshot-writer.js';
import { T0, counts, createQueue, key, newEngine, receive, ref, send } from './helpers.js';

function populated() {
  const engine = newEngine();
  const q = createQueue(engine, 'q', { dedupWindowSeconds: 60, maxRetries: 0, recvRateLimit: { intervalMicros: 20_000, burst: 3 } });
  const d = createQueue(engine, 'd');
  send(engine, q, T0, { payload: new Uint8Array([0, 255, 7]), dedupKey: key(1) });
  send(engine, q, T0, { delayMs: 5000 });
  send(engine, q, T0);
  send(engine, d, T0);
  engine.apply({ type: 'fail', ...ref(q, receive(engine, q, T0)) }, T0 + 1);
  receive(engine, q, T0 + 2); // leased: encoded as visible
  engine.apply({ type: 'deleteQueue', queueGen: d.gen, mode: 'drain' }, T0 + 3);
  return engine;
}

describe('snapshot', () => {
  it('round-trips the replicated state byte for byte', () => {
    const engine = populated();
    const bytes = encodeSnapshot(engine.state);
    const restored = decodeSnapshot(bytes, DEFAULT_PLAN);
    expect(encodeSnapshot(restored)).toEqual(bytes);
  });

  it('a restored engine serves: leases dropped, failed/delayed kept, dedup remembered, queue states kept', () => {
    const original = populated();
    const engine = SpoolEngine.fromSnapshot(original.snapshot());
    engine.openPrimary(T0 + 10);
    const q = engine.queue('q')!;
    expect(counts(engine, q, T0 + 10)).toMatchObject({ total: 3, failed: 1, delayed: 1, visible: 1, pending: 0, addedTotal: 0 });
    expect(engine.queue('d')!.state).toBe('draining');
    const dup = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0 + 10);
    expect(dup).toEqual({ kind: 'duplicate', seq: 1 });
    expect(engine.failureHead(q)!.payload).toEqual(new Uint8Array([0, 255, 7]));
    expect(receive(engine, q, T0 + 10).seq).toBe(3);
    expect(engine.state.nextSeq).toBe(original.state.nextSeq);
    expect(engine.state.nextQueueGen).toBe(original.state.nextQueueGen);
    expect(engine.queueView(q)).toEqual(original.queueView(original.queue('q')!));
  });

  it('a leased message is encoded as visible: the same bytes as a replica that never leased it', () => {
    const a = newEngine();
    const b = newEngine();
    for (const engine of [a, b]) send(engine, createQueue(engine, 'q'), T0);
    receive(a, a.queue('q')!, T0);
    expect(a.snapshot()).toEqual(b.snapshot());
  });

  it('refuses foreign, truncated or corrupted bytes with CodecError', () => {
    const bytes = populated().snapshot();
    expect(() => decodeSnapshot(bytes.subarray(0, bytes.length - 1), DEFAULT_PLAN)).toThrow(CodecError);
    const wrongMagic = bytes.slice();
    wrongMagic[0] = 0;
    expect(() => decodeSnapshot(wrongMagic, DEFAULT_PLAN)).toThrow(/not a spool snapshot/);
    const wrongVersion = bytes.slice();
    wrongVersion[5] = 9;
    expect(() => decodeSnapshot(wrongVersion, DEFAULT_PLAN)).toThrow(/version/);
    expect(() => decodeSnapshot(new Uint8Array([...bytes, 1]), DEFAULT_PLAN)).toThrow(CodecError);
  });

  it('carries the plan set by setPlan; a restored engine enforces it', () => {
    const engine = populated();
    const plan = { ...DEFAULT_PLAN, queuesPerSpoolMax: 2, retentionLimitSeconds: 3600 };
    expect(engine.apply({ type: 'setPlan', plan, version: 7 }, T0 + 4).kind).toBe('ok');
    const restored = decodeSnapshot(encodeSnapshot(engine.state), DEFAULT_PLAN);
    expect(restored.plan).toEqual(plan);
    expect(restored.planVersion).toBe(7);
    expect(encodeSnapshot(restored)).toEqual(encodeSnapshot(engine.state));
  });

  it('an empty spool round-trips', () => {
    const engine = new SpoolEngine();
    const restored = SpoolEngine.fromSnapshot(engine.snapshot());
    expect(restored.snapshot()).toEqual(engine.snapshot());
    expect(restored.state.nextSeq).toBe(1);
  });
});
