import { describe, expect, it } from 'vitest';
import { MemoryPayloadStore, SpoolEngine, resolveSettings } from '@spoolmq/engine';
import {
  FETCH_CHUNK_BYTES,
  FETCH_ITEMS_MAX,
  parseFetchItems,
  servePayloadChunks,
} from '../../src/cluster/payload-fetch.js';

const T0 = 1_800_000_000_000;

function engineWith(count: number, bytes: number): SpoolEngine {
  const engine = SpoolEngine.over(new MemoryPayloadStore());
  const settings = resolveSettings({}, engine.plan);
  if (settings instanceof Error) throw settings;
  engine.apply({ type: 'createQueue', name: 'q', settings }, T0);
  const queueGen = engine.queue('q')!.gen;
  for (let i = 0; i < count; i++) {
    const payload = new Uint8Array(bytes).fill(i);
    engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload }, T0);
  }
  return engine;
}

describe('servePayloadChunks', () => {
  it('answers at most one chunk of bytes however much is asked, from each offset', () => {
    const engine = engineWith(10, 300 * 1024); // 3 MiB asked
    const gen = engine.queue('q')!.gen;
    const items = Array.from({ length: 10 }, (_, i) => [gen, i + 1, i === 0 ? 1000 : 0] as const);
    const chunks = servePayloadChunks(engine, items);
    const sizes = chunks.map((c) => (c === null ? 0 : Buffer.from(c, 'base64').byteLength));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(FETCH_CHUNK_BYTES);
    expect(sizes[0]).toBe(300 * 1024 - 1000);
    expect(sizes[1]).toBe(FETCH_CHUNK_BYTES - sizes[0]!);
    expect(chunks.slice(2)).toEqual(Array(8).fill(null));
    expect(Buffer.from(chunks[1]!, 'base64')[0]).toBe(1);
  });

  it('answers null for messages it does not hold', () => {
    const engine = engineWith(1, 10);
    const gen = engine.queue('q')!.gen;
    expect(servePayloadChunks(engine, [[gen, 2, 0], [gen + 1, 1, 0], [gen, 1, 0]])).toEqual([
      null,
      null,
      Buffer.alloc(10).toString('base64'),
    ]);
  });
});

describe('parseFetchItems', () => {
  it('takes triples of non-negative integers, at most FETCH_ITEMS_MAX', () => {
    expect(parseFetchItems([[1, 2, 3]])).toEqual([[1, 2, 3]]);
    expect(parseFetchItems([[1, 2]])).toBeNull();
    expect(parseFetchItems([[1, -2, 0]])).toBeNull();
    expect(parseFetchItems([[1, 2.5, 0]])).toBeNull();
    expect(parseFetchItems('x')).toBeNull();
    expect(parseFetchItems(Array(FETCH_ITEMS_MAX + 1).fill([1, 1, 0]))).toBeNull();
  });
});
