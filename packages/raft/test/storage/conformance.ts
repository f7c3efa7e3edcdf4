// One conformance suite for every StorageEngine (memory and LevelDB): both must behave the same
// way for save/load, truncation, snapshots, compaction, destroy, isolation, group commit and
// restart. Each backend's test file calls `storageConformance` with its harness.

import { afterEach, describe, expect, it } from 'vitest';
import {
  EntryType,
  type Entry,
  type GroupStorage,
  type HardState,
  type Snapshot,
  snapshotOf,
  type StorageEngine,
} from '../../src/types.js';
import { joinChunks } from '../chunks.js';
import { isStorageError } from '../../src/storage/storage-error.js';
import type { StorageStats } from '../../src/storage/storage-stats.js';

export interface EngineOptions {
  readonly pendingBytesMax?: number;
}

export interface StorageHarness<E extends StorageEngine> {
  /** A fresh, empty engine. */
  create(options?: EngineOptions): Promise<E>;
  /** The process restarts: an engine that sees exactly what was durable in `engine`. */
  restart(engine: E): Promise<E>;
  stats(engine: E): StorageStats;
  /** Releases the engine and whatever it stored. */
  dispose(engine: E): Promise<void>;
}

const encoder = new TextEncoder();

export function entry(index: number, term: number, text = `e${index}t${term}`): Entry {
  return { index, term, type: EntryType.Normal, data: encoder.encode(text) };
}

export function entries(from: number, to: number, term: number): Entry[] {
  const list: Entry[] = [];
  for (let index = from; index <= to; index++) list.push(entry(index, term));
  return list;
}

function summary(list: readonly Entry[]): string[] {
  return list.map((e) => `${e.index}/${e.term}/${e.type}/${Buffer.from(e.data).toString('hex')}`);
}

function snapshotAt(index: number, term: number, text: string): Snapshot {
  const meta = { index, term, config: { voters: ['n1', 'n2', 'n3'], learners: ['n4'] } };
  // In two chunks: storage keeps them apart or not, but returns the same bytes.
  const bytes = encoder.encode(text);
  return snapshotOf(meta, [bytes.subarray(0, 2), bytes.subarray(2)]);
}

async function loaded(engine: StorageEngine, group: string): Promise<GroupStorage> {
  const storage = engine.group(group);
  await storage.load();
  return storage;
}

export function storageConformance<E extends StorageEngine>(name: string, harness: StorageHarness<E>): void {
  describe(`${name} storage conformance`, () => {
    const engines: E[] = [];
    const create = async (options?: EngineOptions): Promise<E> => {
      const engine = await harness.create(options);
      engines.push(engine);
      return engine;
    };
    const restart = async (engine: E): Promise<E> => {
      const next = await harness.restart(engine);
      engines.push(next);
      return next;
    };
    afterEach(async () => {
      for (const engine of new Set(engines.splice(0))) await harness.dispose(engine);
    });

    it('loads an empty group as term 0, no vote, no snapshot, no entries', async () => {
      const engine = await create();
      expect(await engine.group('g').load()).toEqual({
        hardState: { term: 0, vote: null, commit: 0 },
        snapshot: null,
        entries: [],
      });
      expect(await engine.groups()).toEqual([]);
    });

    it('round-trips hard state and entries of every type across a restart', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'spool:a');
      const log: Entry[] = [
        { index: 1, term: 1, type: EntryType.Noop, data: new Uint8Array(0) },
        { index: 2, term: 1, type: EntryType.Normal, data: new Uint8Array([0, 255, 1, 254]) },
        { index: 3, term: 2, type: EntryType.ConfChange, data: encoder.encode('conf') },
      ];
      const hardState: HardState = { term: 2, vote: 'member-2', commit: 2 };
      await storage.save(hardState, log);
      engine = await restart(engine);
      const restored = await engine.group('spool:a').load();
      expect(restored.hardState).toEqual(hardState);
      expect(restored.snapshot).toBeNull();
      expect(summary(restored.entries)).toEqual(summary(log));
      expect(await engine.groups()).toEqual(['spool:a']);
    });

    it('keeps a null vote and later hard states replace earlier ones', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 1, vote: 'n1', commit: 0 }, entries(1, 2, 1));
      await storage.save({ term: 3, vote: null, commit: 2 }, []);
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.hardState).toEqual({ term: 3, vote: null, commit: 2 });
      expect(restored.entries.length).toBe(2);
    });

    it('appends across calls and replaces a conflicting suffix (log truncation)', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 1, vote: 'n1', commit: 0 }, entries(1, 5, 1));
      await storage.save(null, entries(6, 7, 1));
      // A new leader of term 2 overwrites from index 4: 5, 6 and 7 of term 1 must go.
      await storage.save({ term: 2, vote: 'n2', commit: 3 }, [entry(4, 2), entry(5, 2)]);
      const expected = [...entries(1, 3, 1), entry(4, 2), entry(5, 2)];
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(summary(restored.entries)).toEqual(summary(expected));
      expect(restored.hardState).toEqual({ term: 2, vote: 'n2', commit: 3 });
    });

    it('calls made without waiting keep their order', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      const writes = [
        storage.save({ term: 1, vote: 'n1', commit: 0 }, entries(1, 4, 1)),
        storage.save(null, entries(3, 6, 2)),
        storage.saveSnapshot(snapshotAt(4, 2, 'state@4')),
        storage.save({ term: 2, vote: 'n1', commit: 5 }, entries(7, 8, 2)),
        storage.compact(4),
      ];
      await Promise.all(writes);
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.snapshot?.meta.index).toBe(4);
      expect(summary(restored.entries)).toEqual(summary(entries(5, 8, 2)));
      expect(restored.hardState.commit).toBe(5);
    });

    it('a snapshot whose term matches the log keeps the entries after it', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 2, vote: 'n1', commit: 6 }, [...entries(1, 3, 1), ...entries(4, 8, 2)]);
      const snapshot = snapshotAt(5, 2, 'state@5');
      await storage.saveSnapshot(snapshot);
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.snapshot?.meta).toEqual(snapshot.meta);
      expect(Buffer.from(joinChunks(restored.snapshot!.data)).toString()).toBe('state@5');
      expect(summary(restored.entries)).toEqual(summary(entries(6, 8, 2)));
      expect(restored.hardState).toEqual({ term: 2, vote: 'n1', commit: 6 });
    });

    it('a snapshot that conflicts with the log discards the whole log (Raft figure 13)', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 2, vote: 'n1', commit: 2 }, [...entries(1, 2, 1), ...entries(3, 9, 2)]);
      // The leader's entry 5 has term 3: this follower's 5..9 (term 2) are not part of that log.
      await storage.saveSnapshot(snapshotAt(5, 3, 'leader-state@5'));
      await storage.save({ term: 3, vote: null, commit: 6 }, entries(6, 6, 3));
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.snapshot?.meta.term).toBe(3);
      expect(summary(restored.entries)).toEqual(summary(entries(6, 6, 3)));
    });

    it('entries saved right after a conflicting snapshot, without waiting, survive a restart', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 2, vote: 'n1', commit: 2 }, [...entries(1, 2, 1), ...entries(3, 9, 2)]);
      const writes = [
        storage.saveSnapshot(snapshotAt(5, 3, 'leader-state@5')),
        storage.save({ term: 3, vote: null, commit: 6 }, entries(6, 7, 3)),
        storage.save(null, entries(8, 8, 3)),
      ];
      await Promise.all(writes);
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.snapshot?.meta).toMatchObject({ index: 5, term: 3 });
      expect(summary(restored.entries)).toEqual(summary(entries(6, 8, 3)));
    });

    it('a snapshot past the end of the log leaves an empty log that continues after it', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 1, vote: null, commit: 2 }, entries(1, 3, 1));
      await storage.saveSnapshot(snapshotAt(100, 4, 'far'));
      await storage.save(null, entries(101, 102, 4));
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.snapshot?.meta.index).toBe(100);
      expect(summary(restored.entries)).toEqual(summary(entries(101, 102, 4)));
    });

    it('a newer snapshot replaces the older one', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 1, vote: null, commit: 10 }, entries(1, 10, 1));
      await storage.saveSnapshot(snapshotAt(3, 1, 'old'));
      await storage.saveSnapshot(snapshotAt(7, 1, 'new'));
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.snapshot?.meta.index).toBe(7);
      expect(Buffer.from(joinChunks(restored.snapshot!.data)).toString()).toBe('new');
      expect(summary(restored.entries)).toEqual(summary(entries(8, 10, 1)));
    });

    it('compaction up to the snapshot succeeds; past it is a bug that throws', async () => {
      const engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 1, vote: null, commit: 5 }, entries(1, 6, 1));
      await storage.saveSnapshot(snapshotAt(4, 1, 's'));
      await storage.compact(4);
      await storage.compact(2);
      expect(() => storage.compact(5)).toThrow(/beyond the snapshot/);
      const restored = await engine.group('g').load();
      expect(summary(restored.entries)).toEqual(summary(entries(5, 6, 1)));
    });

    it('rejects writes that break the log as bugs (gap, term going down, before load)', async () => {
      const engine = await create();
      expect(() => engine.group('unloaded').save(null, entries(1, 1, 1))).toThrow(/load\(\) before writing/);
      const storage = await loaded(engine, 'g');
      await storage.save(null, entries(1, 3, 2));
      expect(() => storage.save(null, entries(5, 5, 2))).toThrow(/outside/);
      expect(() => storage.save(null, [entry(4, 1)])).toThrow(/term goes down/);
      expect(() => storage.save(null, [entry(4, 2), entry(6, 2)])).toThrow(/not contiguous/);
      const restored = await storage.load();
      expect(summary(restored.entries)).toEqual(summary(entries(1, 3, 2)));
    });

    it('destroy removes the group durably and leaves it usable', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      await storage.save({ term: 4, vote: 'n1', commit: 2 }, entries(1, 3, 4));
      await storage.saveSnapshot(snapshotAt(2, 4, 'snap'));
      await storage.destroy();
      expect(await engine.groups()).toEqual([]);
      expect(await storage.load()).toEqual({ hardState: { term: 0, vote: null, commit: 0 }, snapshot: null, entries: [] });
      await storage.save({ term: 9, vote: null, commit: 0 }, entries(1, 1, 9));
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.hardState.term).toBe(9);
      expect(restored.snapshot).toBeNull();
      expect(summary(restored.entries)).toEqual(summary(entries(1, 1, 9)));
    });

    it('keeps groups apart, including ids that are prefixes of each other', async () => {
      let engine = await create();
      const ids = ['g', 'g1', 'spool:a', 'spool:a:b', 'meta'];
      for (const [n, id] of ids.entries()) {
        const storage = await loaded(engine, id);
        await storage.save({ term: n + 1, vote: id, commit: 0 }, entries(1, n + 2, n + 1));
      }
      await engine.group('spool:a').saveSnapshot(snapshotAt(2, 3, 'a'));
      await engine.group('g').destroy();
      engine = await restart(engine);
      expect(await engine.groups()).toEqual(['g1', 'meta', 'spool:a', 'spool:a:b']);
      for (const [n, id] of ids.entries()) {
        const restored = await engine.group(id).load();
        if (id === 'g') {
          expect(restored.entries).toEqual([]);
          continue;
        }
        expect(restored.hardState).toEqual({ term: n + 1, vote: id, commit: 0 });
        const from = id === 'spool:a' ? 3 : 1;
        expect(summary(restored.entries)).toEqual(summary(entries(from, n + 2, n + 1)));
        expect(restored.snapshot === null).toBe(id !== 'spool:a');
      }
    });

    it('group commit: calls for many groups in one turn share one fsync', async () => {
      const engine = await create();
      const groups = Array.from({ length: 20 }, (_, n) => `spool:${n}`);
      const storages = await Promise.all(groups.map((id) => loaded(engine, id)));
      const before = harness.stats(engine).fsyncs;
      await Promise.all(storages.map((s, n) => s.save({ term: 1, vote: null, commit: 0 }, entries(1, n + 1, 1))));
      const after = harness.stats(engine);
      expect(after.fsyncs - before).toBe(1);
      expect(after.batchCallsLast).toBe(20);
      expect(after.pendingBytes).toBe(0);
      expect(after.pendingCalls).toBe(0);
    });

    it('calls made while a batch is being written go into the next one', async () => {
      const engine = await create();
      const storage = await loaded(engine, 'g');
      const before = harness.stats(engine).fsyncs;
      const first = storage.save(null, entries(1, 1, 1));
      // The first batch is written on the next turn; these land while it is in flight.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const rest = [2, 3, 4, 5].map((i) => storage.save(null, entries(i, i, 1)));
      await Promise.all([first, ...rest]);
      const after = harness.stats(engine);
      expect(after.fsyncs - before).toBeLessThanOrEqual(2);
      expect(after.entriesWritten).toBe(5);
      const restored = await storage.load();
      expect(summary(restored.entries)).toEqual(summary(entries(1, 5, 1)));
    });

    it('refuses calls beyond the pending-bytes bound with busy, without effect', async () => {
      const engine = await create({ pendingBytesMax: 4096 });
      const storage = await loaded(engine, 'g');
      const big = { index: 1, term: 1, type: EntryType.Normal, data: new Uint8Array(3000) } as const;
      const accepted = storage.save(null, [big]);
      const refused = storage.save(null, [{ ...big, index: 2 }]);
      await expect(refused).rejects.toSatisfy((error: unknown) => isStorageError(error) && error.kind === 'busy');
      await accepted;
      await storage.save(null, [{ ...big, index: 2 }]);
      const restored = await storage.load();
      expect(restored.entries.map((e) => e.index)).toEqual([1, 2]);
    });

    it('restores a long log', async () => {
      let engine = await create();
      const storage = await loaded(engine, 'g');
      for (let from = 1; from <= 3000; from += 500) await storage.save(null, entries(from, from + 499, 7));
      engine = await restart(engine);
      const restored = await engine.group('g').load();
      expect(restored.entries.length).toBe(3000);
      expect(restored.entries[2999]!.index).toBe(3000);
      expect(Buffer.from(restored.entries[1234]!.data).toString()).toBe('e1235t7');
    });

    it('refuses calls after close', async () => {
      const engine = await create();
      const storage = await loaded(engine, 'g');
      await engine.close();
      await expect(storage.save(null, entries(1, 1, 1))).rejects.toSatisfy(
        (error: unknown) => isStorageError(error) && error.kind === 'closed',
      );
    });
  });
}
