import { describe, expect, it } from 'vitest';
import { MemoryStorageEngine } from '../../src/storage/memory-storage.js';
import { isStorageError } from '../../src/storage/storage-error.js';
import { entries, storageConformance } from './conformance.js';

storageConformance<MemoryStorageEngine>('memory', {
  create: async (options) => new MemoryStorageEngine(options),
  // Everything awaited is durable; the crash hook drops the rest and the stale handles.
  restart: async (engine) => {
    engine.crash();
    return engine;
  },
  stats: (engine) => engine.stats(),
  dispose: (engine) => engine.close(),
});

const isCrashed = (error: unknown): boolean => isStorageError(error) && error.kind === 'crashed';

describe('MemoryStorageEngine crash hook', () => {
  it('loses what was not yet synced and keeps what was', async () => {
    const engine = new MemoryStorageEngine({ autoSync: false });
    const storage = engine.group('g');
    await storage.load();
    const durable = storage.save({ term: 1, vote: 'n1', commit: 0 }, entries(1, 3, 1));
    await engine.sync();
    await durable;
    const lost = storage.save({ term: 2, vote: 'n2', commit: 3 }, entries(4, 6, 2));
    expect(engine.stats().pendingCalls).toBe(1);
    engine.crash();
    await expect(lost).rejects.toSatisfy(isCrashed);
    const restored = await engine.group('g').load();
    expect(restored.hardState).toEqual({ term: 1, vote: 'n1', commit: 0 });
    expect(restored.entries.map((e) => e.index)).toEqual([1, 2, 3]);
  });

  it('fences handles from before the crash so a stale node cannot write', async () => {
    const engine = new MemoryStorageEngine();
    const stale = engine.group('g');
    await stale.load();
    await stale.save({ term: 1, vote: null, commit: 0 }, entries(1, 1, 1));
    engine.crash();
    await expect(stale.save(null, entries(2, 2, 1))).rejects.toSatisfy(isCrashed);
    const fresh = engine.group('g');
    expect(fresh).not.toBe(stale);
    expect((await fresh.load()).entries.length).toBe(1);
  });

  it('without autoSync nothing becomes durable until sync()', async () => {
    const engine = new MemoryStorageEngine({ autoSync: false });
    const storage = engine.group('g');
    await storage.load();
    let settled = false;
    const write = storage.save(null, entries(1, 2, 1)).then(() => {
      settled = true;
    });
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(engine.stats().fsyncs).toBe(0);
    await engine.sync();
    await write;
    expect(settled).toBe(true);
    expect(engine.stats().fsyncs).toBe(1);
  });
});
