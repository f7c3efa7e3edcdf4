import { describe, expect, it } from 'vitest';
import { internalState } from '../src/engine.js';
import { decodeSnapshot } from '../src/snapshot.js';
import { encodeSnapshot, type SnapshotWriter } from '../src/snapshot-writer.js';
import { T0, createQueue, newEngine, receive, ref, send } from './helpers.js';

function backlog(messages: number) {
  const engine = newEngine();
  const q = createQueue(engine, 'q', { maxRetries: 5 });
  const r = createQueue(engine, 'r');
  for (let i = 0; i < messages; i++) send(engine, i % 3 === 0 ? r : q, T0 + i, { payload: new Uint8Array(100).fill(i & 0xff) });
  return { engine, q, r };
}

/** Steps `work` to its end with `budgetBytes`; its chunks, each as it was handed out. */
function drain(work: SnapshotWriter, budgetBytes: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { chunk, done } = work.step(budgetBytes);
    chunks.push(chunk);
    if (done) return chunks;
  }
}

function joined(chunks: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(chunks));
}

describe('SnapshotWriter', () => {
  it('encodes in several slices the same bytes as an encode at once', () => {
    const { engine } = backlog(300);
    const expected = encodeSnapshot(internalState(engine));
    const chunks = drain(engine.beginSnapshot(), 500);
    expect(chunks.length).toBeGreaterThan(20);
    expect(joined(chunks)).toEqual(expected);
    expect(internalState(engine).snapshotGuard).toBeNull();
  });

  it('keeps what messages were at its start: changed, removed, a queue deleted, later sends', () => {
    const { engine, q, r } = backlog(60);
    const atStart = encodeSnapshot(internalState(engine));
    const work = engine.beginSnapshot();
    const first300 = work.step(300); // a few messages of q written, most not
    expect(first300.done).toBe(false);
    const first = receive(engine, q, T0 + 100);
    engine.apply({ type: 'ack', ...ref(q, first) }, T0 + 101);
    const second = receive(engine, q, T0 + 102);
    engine.apply({ type: 'nack', ...ref(q, second) }, T0 + 103);
    const third = receive(engine, q, T0 + 104);
    engine.apply({ type: 'fail', ...ref(q, third) }, T0 + 105);
    engine.apply({ type: 'deleteQueue', queueGen: r.gen, mode: 'force' }, T0 + 106);
    send(engine, q, T0 + 107, { payload: new Uint8Array([1]) });
    createQueue(engine, 'r', {}, T0 + 108);
    const bytes = joined([first300.chunk, ...drain(work, 300)]);
    expect(bytes).toEqual(atStart);
    expect(decodeSnapshot(bytes, engine.plan).messageCount).toBe(60);
  });

  it('works one at a time; cancel lets the next begin and leaves the state unguarded', () => {
    const { engine } = backlog(10);
    const work = engine.beginSnapshot();
    expect(() => engine.beginSnapshot()).toThrow(/already working/);
    // An encode at once needs no guard and may run beside the writer.
    expect(encodeSnapshot(internalState(engine)).length).toBeGreaterThan(500);
    work.cancel();
    expect(internalState(engine).snapshotGuard).toBeNull();
    expect(() => work.step(100)).toThrow(/already ended/);
    const next = engine.beginSnapshot();
    expect(next.step(Infinity)).toEqual({ chunk: encodeSnapshot(internalState(engine)), done: true });
  });

  it('hands each step its own chunk, about its budget, and the decoder reads them as they are', () => {
    const { engine } = backlog(3000);
    const expected = encodeSnapshot(internalState(engine));
    const chunks = drain(engine.beginSnapshot(), 4096);
    // Each chunk is one step's bytes in a buffer of its own, never a view of a whole image.
    for (const chunk of chunks) {
      expect(chunk.byteLength).toBeLessThanOrEqual(4096 + 256);
      expect(chunk.buffer.byteLength).toBeLessThanOrEqual(2 * 4096 + 4096);
    }
    expect(joined(chunks)).toEqual(expected);
    expect(decodeSnapshot(chunks, engine.plan).messageCount).toBe(3000);
  });
});
