import { describe, expect, it } from 'vitest';
import { ByteWriter, CodecError } from '../src/bytes.js';
import { writePlan, writeSettings } from '../src/command-codec.js';
import { MemoryPayloadStore } from '../src/memory-payloads.js';
import { PAYLOAD_MISSING, PayloadError } from '../src/payload-store.js';
import { SpoolEngine, internalState } from '../src/engine.js';
import { Where } from '../src/message.js';
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
    const bytes = encodeSnapshot(internalState(engine));
    const restored = decodeSnapshot(bytes, DEFAULT_PLAN);
    expect(encodeSnapshot(restored)).toEqual(bytes);
  });

  it('a restored engine serves: leases dropped, failed/delayed kept, dedup remembered, queue states kept', () => {
    const original = populated();
    const payloads = (internalState(original).payloads as MemoryPayloadStore).clone();
    const engine = SpoolEngine.fromSnapshot(original.snapshot(), DEFAULT_PLAN, payloads);
    engine.openPrimary(T0 + 10);
    const q = engine.queue('q')!;
    expect(counts(engine, q, T0 + 10)).toMatchObject({ total: 3, failed: 1, delayed: 1, visible: 1, pending: 0, addedTotal: 0 });
    expect(engine.queue('d')!.state).toBe('draining');
    const dup = engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: key(1), payload: new Uint8Array() }, T0 + 10);
    expect(dup).toEqual({ kind: 'duplicate', seq: 1 });
    expect(engine.payloadOf(engine.failureHead(q)!)).toEqual(new Uint8Array([0, 255, 7]));
    expect(receive(engine, q, T0 + 10).seq).toBe(3);
    expect(internalState(engine).nextSeq).toBe(internalState(original).nextSeq);
    expect(internalState(engine).nextQueueGen).toBe(internalState(original).nextQueueGen);
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

  it('decodes from chunks of any size, records straddling chunk boundaries', () => {
    const engine = populated();
    const bytes = encodeSnapshot(internalState(engine));
    for (const size of [1, 2, 3, 7, 13, 64, bytes.length - 1, bytes.length, bytes.length + 5]) {
      const restored = decodeSnapshot(chunksOf(bytes, size), DEFAULT_PLAN);
      expect(encodeSnapshot(restored)).toEqual(bytes);
    }
    // Empty chunks anywhere are skipped.
    const withEmpty = [new Uint8Array(0), ...chunksOf(bytes, 5), new Uint8Array(0)];
    expect(encodeSnapshot(decodeSnapshot(withEmpty, DEFAULT_PLAN))).toEqual(bytes);
  });

  it('refuses truncated or trailing chunked input, and a newer format, with CodecError', () => {
    const bytes = populated().snapshot();
    const cut = bytes.subarray(0, bytes.length - 1);
    expect(() => decodeSnapshot(chunksOf(cut, 7), DEFAULT_PLAN)).toThrow(/truncated/);
    const trailing = [...chunksOf(bytes, 7), new Uint8Array([1])];
    expect(() => decodeSnapshot(trailing, DEFAULT_PLAN)).toThrow(/trailing/);
    const newer = bytes.slice();
    newer[5] = 9;
    expect(() => decodeSnapshot(chunksOf(newer, 3), DEFAULT_PLAN)).toThrow(/format 9 is not one/);
  });

  it('migrates a version 3 snapshot read in chunks (payloads straddling them)', () => {
    const v3 = encodeVersion3([new Uint8Array([9, 8, 7]), new Uint8Array([6])]);
    const payloads = new MemoryPayloadStore('migrated');
    const state = decodeSnapshot(chunksOf(v3, 2), DEFAULT_PLAN, payloads);
    expect(payloads.count).toBe(2);
    expect(state.messageCount).toBe(2);
  });

  it('carries the plan set by setPlan; a restored engine enforces it', () => {
    const engine = populated();
    const plan = { ...DEFAULT_PLAN, queuesPerSpoolMax: 2, retentionLimitSeconds: 3600 };
    expect(engine.apply({ type: 'setPlan', plan, version: 7 }, T0 + 4).kind).toBe('ok');
    const restored = decodeSnapshot(encodeSnapshot(internalState(engine)), DEFAULT_PLAN);
    expect(restored.plan).toEqual(plan);
    expect(restored.planVersion).toBe(7);
    expect(encodeSnapshot(restored)).toEqual(encodeSnapshot(internalState(engine)));
  });

  it('an empty spool round-trips', () => {
    const engine = new SpoolEngine();
    const restored = SpoolEngine.fromSnapshot(engine.snapshot());
    expect(restored.snapshot()).toEqual(engine.snapshot());
    expect(internalState(restored).nextSeq).toBe(1);
  });

  it('holds metadata only: its buffer does not grow with the payload bytes stored', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const payload = new Uint8Array(1 << 20); // one buffer, referenced by 200 messages: 200 MiB
    for (let i = 0; i < 200; i++) send(engine, q, T0 + i, { payload });
    expect(internalState(engine).byteCount).toBe(200 << 20);
    const bytes = engine.snapshot();
    expect(bytes.buffer.byteLength).toBeLessThan(64 * 1024);
    const work = engine.beginSnapshot();
    for (let done = false; !done; ) {
      const slice = work.step(1024);
      expect(slice.chunk.buffer.byteLength).toBeLessThan(64 * 1024);
      done = slice.done;
    }
  });

  it('over another store, every payload is missing until fetched; removal still counts', () => {
    const original = populated();
    const other = new MemoryPayloadStore('another-replica');
    const engine = SpoolEngine.fromSnapshot(original.snapshot(), DEFAULT_PLAN, other);
    expect(internalState(engine).missingPayloads).toBe(internalState(engine).messageCount);
    engine.openPrimary(T0 + 10);
    // A failed message without its payload here reads unavailable, out of the failure head.
    expect(engine.failureHead(engine.queue('q')!)).toBeUndefined();
    const head = engine.queue('q')!.order.liveMessages().find((m) => m.where === Where.Failed)!;
    expect(engine.messageState(head, T0 + 10)).toBe('unavailable');
    expect(head.location).toBe(PAYLOAD_MISSING);
    expect(() => engine.payloadOf(head)).toThrow(PayloadError);
    const { gen, seq } = head;
    const queueGen = engine.queue('q')!.gen;
    engine.apply({ type: 'discard', queueGen, seq, gen }, T0 + 11);
    expect(internalState(engine).missingPayloads).toBe(internalState(engine).messageCount);
  });

  it('migrates a version 3 snapshot (payloads inside) into the store, and writes version 4', () => {
    const v3 = encodeVersion3([new Uint8Array([9, 8, 7]), new Uint8Array([6])]);
    const payloads = new MemoryPayloadStore('migrated');
    const engine = SpoolEngine.fromSnapshot(v3, DEFAULT_PLAN, payloads);
    expect(payloads.count).toBe(2);
    engine.openPrimary(T0 + 5);
    const q = engine.queue('q')!;
    expect(engine.payloadOf(receive(engine, q, T0 + 5))).toEqual(new Uint8Array([9, 8, 7]));
    expect(engine.payloadOf(receive(engine, q, T0 + 5))).toEqual(new Uint8Array([6]));
    const again = engine.snapshot();
    expect((again[4]! << 8) | again[5]!).toBe(4);
    const reread = SpoolEngine.fromSnapshot(again, DEFAULT_PLAN, payloads);
    expect(internalState(reread).missingPayloads).toBe(0);
  });

  it('refuses a format newer than it knows with one sentence', () => {
    const bytes = populated().snapshot();
    bytes[4] = 0;
    bytes[5] = 5;
    expect(() => decodeSnapshot(bytes, DEFAULT_PLAN)).toThrow(
      'engine codec: spool snapshot format 5 is not one this version reads (1 to 4); ' +
        'run the release that wrote it',
    );
  });
});

/** A version 3 snapshot (the previous format, payloads inside): one queue `q` holding them. */
function encodeVersion3(payloads: readonly Uint8Array[]): Uint8Array {
  const w = new ByteWriter();
  w.u32(0x4d51534e);
  w.u16(3);
  writePlan(w, DEFAULT_PLAN);
  w.f64(0); // planVersion
  w.f64(T0); // lastAppliedAtMs
  w.f64(payloads.length + 1); // nextSeq
  w.u32(2); // nextQueueGen
  w.u32(1);
  w.ascii('q');
  w.u32(1);
  w.f64(T0);
  w.u8(0);
  const source = newEngine();
  writeSettings(w, createQueue(source, 'q').settings);
  w.u32(0); // dedup entries
  w.u32(payloads.length);
  payloads.forEach((payload, i) => {
    w.f64(i + 1);
    for (let t = 0; t < 3; t++) w.f64(T0);
    w.u32(0);
    w.u32(0);
    w.u8(0);
    w.bytes(payload);
  });
  w.u32(0x454e4421);
  return w.finish();
}

/** `bytes` as a sequence of chunks of `size` bytes (the last shorter), as a file read yields. */
function* chunksOf(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
