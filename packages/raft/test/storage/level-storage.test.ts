import { mkdtemp, open, readdir, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupKeys } from '../../src/storage/level-keys.js';
import { LevelStorageEngine, type TornTailReport } from '../../src/storage/level-storage.js';
import { crc32c } from '../../src/storage/crc32c.js';
import { encodeEntryValue, encodeSnapshotRecord } from '../../src/storage/record-codec.js';
import { isStorageError } from '../../src/storage/storage-error.js';
import { type Entry, type SnapshotMeta, snapshotOf, type StorageDamage } from '../../src/types.js';
import { joinChunks } from '../chunks.js';
import { entries, entry, storageConformance } from './conformance.js';

const directories = new Map<LevelStorageEngine, string>();

async function freshDirectory(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'mq-raft-level-'));
}

storageConformance<LevelStorageEngine>('LevelDB', {
  create: async (options) => {
    const directory = await freshDirectory();
    const engine = await LevelStorageEngine.open(directory, options);
    directories.set(engine, directory);
    return engine;
  },
  restart: async (engine) => {
    const directory = directories.get(engine)!;
    await engine.close();
    const next = await LevelStorageEngine.open(directory);
    directories.set(next, directory);
    return next;
  },
  stats: (engine) => engine.stats(),
  dispose: async (engine) => {
    await engine.close();
    const directory = directories.get(engine)!;
    directories.delete(engine);
    if (![...directories.values()].includes(directory)) await rm(directory, { recursive: true, force: true });
  },
});

describe('LevelStorageEngine on disk', () => {
  const cleanup: string[] = [];
  afterEach(async () => {
    for (const directory of cleanup.splice(0)) await rm(directory, { recursive: true, force: true });
  });

  async function setup(): Promise<{ directory: string; reports: TornTailReport[]; reopen(): Promise<LevelStorageEngine> }> {
    const directory = await freshDirectory();
    cleanup.push(directory);
    const reports: TornTailReport[] = [];
    return {
      directory,
      reports,
      reopen: () => LevelStorageEngine.open(directory, { onTornTail: (report) => reports.push(report) }),
    };
  }

  /** Writes entries 1..5 (term 1) and 6..8 (term 2) in two durable batches, then closes. */
  async function writeTwoBatches(reopen: () => Promise<LevelStorageEngine>): Promise<void> {
    const engine = await reopen();
    const storage = engine.group('spool:s');
    await storage.load();
    await storage.save({ term: 1, vote: 'n1', commit: 5 }, entries(1, 5, 1));
    await storage.save({ term: 2, vote: 'n2', commit: 8 }, entries(6, 8, 2));
    await engine.close();
  }

  it('a torn write at the end of the LevelDB log loses exactly the last batch', async () => {
    const { directory, reopen } = await setup();
    await writeTwoBatches(reopen);
    // Cut the write-ahead log in the middle of its last record, as a crash during the write would.
    const logDirectory = join(directory, 'log');
    const wal = (await readdir(logDirectory)).filter((name) => name.endsWith('.log')).sort().pop()!;
    const walPath = join(logDirectory, wal);
    const { size } = await stat(walPath);
    const handle = await open(walPath, 'r+');
    await handle.truncate(size - 20);
    await handle.close();

    const engine = await reopen();
    const restored = await engine.group('spool:s').load();
    expect(restored.hardState).toEqual({ term: 1, vote: 'n1', commit: 5 });
    expect(restored.entries.map((e) => `${e.index}/${e.term}`)).toEqual(['1/1', '2/1', '3/1', '4/1', '5/1']);
    await engine.close();
  });

  it('drops and reports entries that fail their checksum, and everything after them', async () => {
    const { directory, reports, reopen } = await setup();
    await writeTwoBatches(reopen);
    // Corrupt entry 6's payload under LevelDB (its own checksums are intact, ours is not).
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    const keys = new GroupKeys('spool:s');
    const value = (await db.get(keys.entry(6)))!;
    value[value.length - 1] = value[value.length - 1]! ^ 0x01;
    await db.put(keys.entry(6), value, { sync: true });
    await db.close();

    let engine = await reopen();
    const restored = await engine.group('spool:s').load();
    expect(restored.entries.map((e) => e.index)).toEqual([1, 2, 3, 4, 5]);
    // What was dropped may have been acknowledged: the hard state marks the lost log's end
    // (entry 8, term 2, read off its intact record) for RaftCore's `damage`.
    const damage = { lastIndex: 8, lastTerm: 2 };
    expect(restored.hardState).toEqual({ term: 2, vote: 'n2', commit: 5, damage });
    expect(reports).toEqual([{ group: 'spool:s', firstDroppedIndex: 6, droppedEntries: 3, reason: 'checksum' }]);
    expect(engine.stats().tornEntriesDropped).toBe(3);
    // The dropped records were deleted durably with the mark in one batch: the next start finds
    // nothing to drop and keeps the mark, and the log continues from 5.
    await engine.group('spool:s').save(null, [entry(6, 2)]);
    await engine.close();
    engine = await reopen();
    const again = await engine.group('spool:s').load();
    expect(again.entries.map((e) => e.index)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(again.hardState.damage).toEqual(damage);
    expect(reports.length).toBe(1);
    // The core clears the mark once repaired; a hard state without it is stored as before.
    await engine.group('spool:s').save({ term: 2, vote: 'n2', commit: 6 }, []);
    await engine.close();
    engine = await reopen();
    expect((await engine.group('spool:s').load()).hardState).toEqual({ term: 2, vote: 'n2', commit: 6 });
    await engine.close();
  });

  /** Changes one byte of the value stored under `key` (or sets it), under LevelDB. */
  async function tamper(directory: string, key: Buffer, change: (value: Buffer) => Buffer): Promise<void> {
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    const value = (await db.get(key)) ?? Buffer.alloc(0);
    await db.put(key, change(value), { sync: true });
    await db.close();
  }

  const flipLast = (value: Buffer): Buffer => {
    value[value.length - 1] = value[value.length - 1]! ^ 0x01;
    return value;
  };

  it('restores a hard state that fails its checksum from its copy: term, vote and damage', async () => {
    const directory = await freshDirectory();
    cleanup.push(directory);
    const restoredGroups: string[] = [];
    const open = () => LevelStorageEngine.open(directory, { onHardStateRestored: (group) => restoredGroups.push(group) });
    let engine = await open();
    const storage = engine.group('spool:s');
    await storage.load();
    const damage = { lastIndex: 9, lastTerm: 2 };
    await storage.save({ term: 2, vote: 'n2', commit: 3, damage }, entries(1, 5, 2));
    await storage.save({ term: 2, vote: 'n2', commit: 5, damage }, []); // commit only: not copied
    await engine.close();
    const keys = new GroupKeys('spool:s');
    await tamper(directory, keys.hardState, flipLast);

    engine = await open();
    const restored = await engine.group('spool:s').load();
    // The copy was written with the vote: its commit index is older, and still committed.
    expect(restored.hardState).toEqual({ term: 2, vote: 'n2', commit: 3, damage });
    expect(restored.entries.map((e) => e.index)).toEqual([1, 2, 3, 4, 5]);
    expect(restoredGroups).toEqual(['spool:s']);
    expect(engine.stats().hardStatesRestored).toBe(1);
    await engine.close();
    // The record was rewritten from the copy, durably: the next start reads it as it is.
    engine = await open();
    expect((await engine.group('spool:s').load()).hardState).toEqual({ term: 2, vote: 'n2', commit: 3, damage });
    expect(restoredGroups.length).toBe(1);
    await engine.close();
  });

  it('restores a missing hard state record from its copy', async () => {
    const { directory, reopen } = await setup();
    await writeTwoBatches(reopen);
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    await db.del(new GroupKeys('spool:s').hardState, { sync: true });
    await db.close();
    const engine = await reopen();
    expect((await engine.group('spool:s').load()).hardState).toEqual({ term: 2, vote: 'n2', commit: 8 });
    await engine.close();
  });

  it('rewrites a bad or missing copy from a good record, then restores from it', async () => {
    const { directory, reopen } = await setup();
    await writeTwoBatches(reopen);
    const keys = new GroupKeys('spool:s');
    // A store written before the copy existed holds an empty registry value.
    await tamper(directory, keys.registry, () => Buffer.alloc(0));
    let engine = await reopen();
    expect((await engine.group('spool:s').load()).hardState).toEqual({ term: 2, vote: 'n2', commit: 8 });
    expect(await engine.groups()).toEqual(['spool:s']);
    await engine.close();
    await tamper(directory, keys.hardState, flipLast);
    engine = await reopen();
    expect((await engine.group('spool:s').load()).hardState).toEqual({ term: 2, vote: 'n2', commit: 8 });
    await engine.close();
    // And a copy that fails its checksum is rewritten from the good record the same way.
    await tamper(directory, keys.registry, flipLast);
    engine = await reopen();
    await engine.group('spool:s').load();
    await engine.close();
    await tamper(directory, keys.hardState, flipLast);
    engine = await reopen();
    expect((await engine.group('spool:s').load()).hardState).toEqual({ term: 2, vote: 'n2', commit: 8 });
    await engine.close();
  });

  it('refuses to load a group whose hard state and its copy both fail their checksums', async () => {
    const { directory, reports, reopen } = await setup();
    await writeTwoBatches(reopen);
    const keys = new GroupKeys('spool:s');
    await tamper(directory, keys.hardState, flipLast);
    await tamper(directory, keys.registry, flipLast);
    const engine = await reopen();
    await expect(engine.group('spool:s').load()).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'corrupt' && /no good copy/.test(error.message),
    );
    expect(await engine.groups()).toEqual(['spool:s']); // still listed: nothing was deleted
    // Said once per attempt, for the operator's log line and metric.
    expect(reports.pop()).toEqual({
      group: 'spool:s',
      firstDroppedIndex: 0,
      droppedEntries: 0,
      reason: 'hard-state-lost',
    });
    expect(engine.stats().hardStatesLost).toBe(1);
    await engine.close();
  });

  it('drops entries that leave a gap or lower the term', async () => {
    const { directory, reports, reopen } = await setup();
    await writeTwoBatches(reopen);
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    const keys = new GroupKeys('spool:s');
    await db.put(keys.entry(10), encodeEntryValue(entry(10, 2)), { sync: true });
    await db.close();
    let engine = await reopen();
    expect((await engine.group('spool:s').load()).entries.length).toBe(8);
    expect(reports.pop()).toMatchObject({ firstDroppedIndex: 10, droppedEntries: 1, reason: 'gap' });
    await engine.close();

    const db2 = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db2.open();
    await db2.put(keys.entry(9), encodeEntryValue(entry(9, 1)), { sync: true });
    await db2.close();
    engine = await reopen();
    expect((await engine.group('spool:s').load()).entries.length).toBe(8);
    expect(reports.pop()).toMatchObject({ firstDroppedIndex: 9, droppedEntries: 1, reason: 'term' });
    await engine.close();
  });

  it('keeps one snapshot file per group and removes leftovers on load', async () => {
    const { directory, reopen } = await setup();
    let engine = await reopen();
    const storage = engine.group('spool:x');
    await storage.load();
    await storage.save({ term: 1, vote: null, commit: 4 }, entries(1, 4, 1));
    const config = { voters: ['n1'], learners: [] };
    await storage.saveSnapshot(snapshotOf({ index: 2, term: 1, config }, [new Uint8Array([1, 2])]));
    await storage.saveSnapshot(snapshotOf({ index: 3, term: 1, config }, [new Uint8Array([3])]));
    const snapshotDirectory = join(directory, 'snapshots', encodeURIComponent('spool:x'));
    await engine.close(); // the superseded file goes on a later turn, which close waits for
    expect((await readdir(snapshotDirectory)).length).toBe(1);
    await writeFile(join(snapshotDirectory, 'stray.snap.tmp'), 'half-written');
    engine = await reopen();
    const restored = await engine.group('spool:x').load();
    expect([...joinChunks(restored.snapshot!.data)]).toEqual([3]);
    expect((await readdir(snapshotDirectory)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    await engine.close();
  });

  /** Indexes of the group's entry records stored in the LevelDB under `directory`. */
  async function storedEntryIndexes(directory: string, group: string): Promise<number[]> {
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    const keys = new GroupKeys(group);
    const stored = await db.keys({ gte: keys.entriesStart, lt: keys.entriesEnd }).all();
    await db.close();
    return stored.map((key) => keys.entryIndex(key));
  }

  it('drops the entries a snapshot covers from disk and keeps the ones after it', async () => {
    const { directory, reopen } = await setup();
    const engine = await reopen();
    const storage = engine.group('spool:c');
    await storage.load();
    await storage.save({ term: 1, vote: null, commit: 300 }, entries(1, 300, 1));
    const config = { voters: ['n1'], learners: [] };
    await storage.saveSnapshot(snapshotOf({ index: 250, term: 1, config }, [new Uint8Array([9])]));
    await engine.close();
    expect(await storedEntryIndexes(directory, 'spool:c')).toEqual(entries(251, 300, 1).map((e) => e.index));
  });

  /** Bytes of LevelDB's tables and logs under `directory`. */
  async function levelBytes(directory: string): Promise<number> {
    const names = await readdir(join(directory, 'log'));
    const sizes = names
      .filter((name) => name.endsWith('.ldb') || name.endsWith('.log'))
      .map(async (name) => (await stat(join(directory, 'log', name))).size);
    return (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
  }

  it('gives back the disk space of the entries a snapshot covers', async () => {
    const { directory } = await setup();
    const engine = await LevelStorageEngine.open(directory, { writeBufferBytes: 1 << 20 });
    const storage = engine.group('spool:space');
    await storage.load();
    // 20 MiB of incompressible entries in 1 MiB memtables: flushed to tables, as a fill does.
    const big = (index: number): Entry => ({ ...entry(index, 1), data: randomBytes(16 << 10) });
    for (let from = 1; from <= 1280; from += 64) {
      const batch = Array.from({ length: 64 }, (_, i) => big(from + i));
      await storage.save({ term: 1, vote: null, commit: from + 63 }, batch);
    }
    const config = { voters: ['n1'], learners: [] };
    await storage.saveSnapshot(snapshotOf({ index: 1280, term: 1, config }, [new Uint8Array([9])]));
    await engine.close();
    // Tombstones alone would leave the dead entries' 20 MiB in the tables.
    expect(await levelBytes(directory)).toBeLessThan(2 << 20);
  });

  it('a group destroyed and founded again right after a snapshot keeps its new entries', async () => {
    const { directory, reopen } = await setup();
    let engine = await reopen();
    const storage = engine.group('spool:d');
    await storage.load();
    await storage.save({ term: 1, vote: null, commit: 5_000 }, entries(1, 5_000, 1));
    const config = { voters: ['n1'], learners: [] };
    // Not awaited: destroy runs behind the snapshot's record and the drop of the range it
    // covers, so nothing of the old log is left and the new entries at the same indexes stay.
    const snapshotted = storage.saveSnapshot(snapshotOf({ index: 5_000, term: 1, config }, [new Uint8Array([1])]));
    await storage.destroy();
    await snapshotted;
    await storage.load();
    await storage.save({ term: 2, vote: null, commit: 0 }, entries(1, 20, 2));
    await engine.close();
    expect(await storedEntryIndexes(directory, 'spool:d')).toEqual(entries(1, 20, 2).map((e) => e.index));
    engine = await reopen();
    const restored = await engine.group('spool:d').load();
    expect(restored.snapshot).toBeNull();
    expect(restored.entries.map((e) => `${e.index}/${e.term}`)).toEqual(entries(1, 20, 2).map((e) => `${e.index}/2`));
    await engine.close();
  });

  /** A group with entries 1..8 (terms 1, 2), a snapshot at 5 and entries 6..8, closed. */
  async function snapshotThenCorrupt(
    directory: string,
    reopen: () => Promise<LevelStorageEngine>,
    damage: StorageDamage | null = null,
  ): Promise<void> {
    const engine = await reopen();
    const storage = engine.group('g');
    await storage.load();
    const hardState = { term: 3, vote: 'n1', commit: 8, ...(damage === null ? {} : { damage }) };
    await storage.save(hardState, [...entries(1, 5, 1), ...entries(6, 8, 2)]);
    const meta = { index: 5, term: 1, config: { voters: ['n1', 'n2'], learners: [] } };
    await storage.saveSnapshot(snapshotOf(meta, [new Uint8Array(100)]));
    await engine.close();
    const snapshotDirectory = join(directory, 'snapshots', 'g');
    const [file] = await readdir(snapshotDirectory);
    const bytes = new Uint8Array(100);
    bytes[50] = 1;
    await writeFile(join(snapshotDirectory, file!), bytes);
  }

  /** Saves a snapshot of `g`, then rewrites its file and record as `rewrite` says; closes. */
  async function rewriteSnapshot(
    directory: string,
    reopen: () => Promise<LevelStorageEngine>,
    rewrite: (file: string) => { bytes: Uint8Array | null; record: Record<string, unknown> },
  ): Promise<SnapshotMeta> {
    const engine = await reopen();
    const storage = engine.group('g');
    await storage.load();
    await storage.save({ term: 3, vote: 'n1', commit: 8 }, entries(1, 8, 1));
    const meta = { index: 5, term: 1, config: { voters: ['n1', 'n2'], learners: [] } };
    await storage.saveSnapshot(snapshotOf(meta, [new Uint8Array([7])]));
    await engine.close();
    const snapshotDirectory = join(directory, 'snapshots', 'g');
    const [file] = await readdir(snapshotDirectory);
    const { bytes, record } = rewrite(file!);
    if (bytes !== null) await writeFile(join(snapshotDirectory, file!), bytes);
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    const value = encodeSnapshotRecord({ meta, file: file!, dataBytes: 0, dataCrc: 0, ...record });
    await db.put(new GroupKeys('g').snapshot, value, { sync: true });
    await db.close();
    return meta;
  }

  it('loads a snapshot written before frames (format 1: the data alone, no format recorded)', async () => {
    const { directory, reopen } = await setup();
    const data = new Uint8Array(3 << 20).map((_, i) => (i * 31) & 0xff);
    const meta = await rewriteSnapshot(directory, reopen, () => ({
      bytes: data,
      record: { dataBytes: data.length, dataCrc: crc32c(data) },
    }));
    const engine = await reopen();
    const restored = await engine.group('g').load();
    expect(restored.snapshot?.meta).toEqual(meta);
    expect([...restored.snapshot!.data].length).toBe(3); // read in pieces, never whole
    expect(Buffer.from(joinChunks(restored.snapshot!.data)).equals(data)).toBe(true);
    await engine.close();
  });

  it('refuses a snapshot of a format it does not know with one sentence, and never drops it', async () => {
    const { directory, reports, reopen } = await setup();
    await rewriteSnapshot(directory, reopen, () => ({ bytes: null, record: { format: 9 } }));
    const engine = await reopen();
    await expect(engine.group('g').load({ dropCorruptSnapshot: true })).rejects.toSatisfy(
      (error: unknown) =>
        isStorageError(error) && error.kind === 'format' && /is of format 9, which this version cannot read/.test(error.message),
    );
    expect(reports).toEqual([]);
    expect(engine.stats().snapshotsCorrupt).toBe(0);
    expect((await readdir(join(directory, 'snapshots', 'g'))).length).toBe(1); // kept
    await engine.close();
  });

  it('refuses to load a group whose snapshot file is corrupted, unless it may drop it', async () => {
    const { directory, reports, reopen } = await setup();
    await snapshotThenCorrupt(directory, reopen);
    const engine = await reopen();
    await expect(engine.group('g').load()).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'corrupt',
    );
    expect(reports).toEqual([{ group: 'g', firstDroppedIndex: 1, droppedEntries: 0, reason: 'snapshot-kept' }]);
    expect(engine.stats().snapshotsCorrupt).toBe(1);
    await engine.close();
    // Refused, nothing was dropped: the next load finds the same.
    const again = await reopen();
    await expect(again.group('g').load()).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'corrupt',
    );
    await again.close();
  });

  it('drops a corrupt snapshot and the entries after it with a damage mark, durably', async () => {
    const { directory, reports, reopen } = await setup();
    await snapshotThenCorrupt(directory, reopen);
    let engine = await reopen();
    const restored = await engine.group('g').load({ dropCorruptSnapshot: true });
    // Empty, and marked with the lost log's end (entry 8 of term 2, past the snapshot's 5/1):
    // the replica votes as if it still held them until a peer has sent a snapshot.
    const damage = { lastIndex: 8, lastTerm: 2 };
    expect(restored).toEqual({ hardState: { term: 3, vote: 'n1', commit: 0, damage }, snapshot: null, entries: [] });
    expect(reports).toEqual([{ group: 'g', firstDroppedIndex: 1, droppedEntries: 3, reason: 'snapshot' }]);
    expect(engine.stats().snapshotsCorrupt).toBe(1);
    expect(await readdir(join(directory, 'snapshots', 'g'))).toEqual([]);
    // Writable from index 1 (a snapshot from the leader, or entries from 1).
    const meta = { index: 7, term: 2, config: { voters: ['n1', 'n2'], learners: [] } };
    await engine.group('g').saveSnapshot(snapshotOf(meta, [new Uint8Array([1, 2, 3])]));
    await engine.close();
    engine = await reopen();
    const repaired = await engine.group('g').load();
    expect(repaired.snapshot?.meta.index).toBe(7);
    expect(Array.from(joinChunks(repaired.snapshot!.data))).toEqual([1, 2, 3]);
    expect(repaired.hardState.damage).toEqual(damage); // the core clears it, not storage
    expect(reports.length).toBe(1);
    await engine.close();
  });

  it('drops a snapshot whose record fails its checksum, marking damage up to any later term', async () => {
    const { directory, reports, reopen } = await setup();
    await snapshotThenCorrupt(directory, reopen);
    const db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
    await db.open();
    const key = new GroupKeys('g').snapshot;
    const value = (await db.get(key))!;
    value[value.length - 2] = value[value.length - 2]! ^ 0x01;
    await db.put(key, value, { sync: true });
    await db.close();
    let engine = await reopen();
    await expect(engine.group('g').load()).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'corrupt',
    );
    const restored = await engine.group('g').load({ dropCorruptSnapshot: true });
    // Its index is unknown: only a log ending in a term above the stored one (3) covers it.
    const damage = { lastIndex: Number.MAX_SAFE_INTEGER, lastTerm: 3 };
    expect(restored).toEqual({ hardState: { term: 3, vote: 'n1', commit: 0, damage }, snapshot: null, entries: [] });
    expect(reports.map((report) => [report.reason, report.droppedEntries])).toEqual([['snapshot-kept', 0], ['snapshot', 3]]);
    await engine.close();
    engine = await reopen();
    expect(await engine.group('g').load()).toEqual({ hardState: { term: 3, vote: 'n1', commit: 0, damage }, snapshot: null, entries: [] });
    await engine.close();
  });

  it('a dropped snapshot keeps a higher damage mark found earlier', async () => {
    const { directory, reopen } = await setup();
    const earlier = { lastIndex: 40, lastTerm: 3 };
    await snapshotThenCorrupt(directory, reopen, earlier);
    const engine = await reopen();
    const restored = await engine.group('g').load({ dropCorruptSnapshot: true });
    expect(restored.hardState.damage).toEqual(earlier);
    await engine.close();
  });

  it('destroy removes the snapshot directory', async () => {
    const { directory, reopen } = await setup();
    const engine = await reopen();
    const storage = engine.group('g');
    await storage.load();
    await storage.saveSnapshot(snapshotOf({ index: 1, term: 1, config: { voters: ['n1'], learners: [] } }, [new Uint8Array(1)]));
    await storage.destroy();
    await expect(stat(join(directory, 'snapshots', 'g'))).rejects.toThrow();
    await engine.close();
  });

  it('writes a commit-only hard state change without an fsync, and anything else with one', async () => {
    const { reopen } = await setup();
    let engine = await reopen();
    const storage = engine.group('g');
    await storage.load();
    await storage.save({ term: 1, vote: 'n1', commit: 0 }, entries(1, 3, 1));
    const synced = engine.stats().fsyncs;
    await storage.save({ term: 1, vote: 'n1', commit: 3 }, []);
    expect(engine.stats().fsyncs).toBe(synced);
    expect(engine.stats().writesUnsynced).toBe(1);
    await storage.save({ term: 2, vote: null, commit: 3 }, []);
    expect(engine.stats().fsyncs).toBe(synced + 1);
    await engine.close();
    engine = await reopen();
    expect((await engine.group('g').load()).hardState).toEqual({ term: 2, vote: null, commit: 3 });
    await engine.close();
  });

  it('a refused term change does not let the next save skip its fsync', async () => {
    const { directory } = await setup();
    const engine = await LevelStorageEngine.open(directory, { pendingBytesMax: 2048 });
    const storage = engine.group('g');
    await storage.load();
    const big = storage.save(null, [{ ...entry(1, 1), data: new Uint8Array(1900) }]);
    await expect(storage.save({ term: 5, vote: 'n2', commit: 0 }, [])).rejects.toThrow(/pending/);
    await big;
    const synced = engine.stats().fsyncs;
    await storage.save({ term: 5, vote: 'n2', commit: 1 }, []);
    expect(engine.stats().fsyncs).toBe(synced + 1);
    await engine.close();
  });

  /** A writeFault hook the test arms: the next batch writes fail with ENOSPC. */
  function diskFull(written: boolean) {
    const state = { full: false, faults: 0 };
    const error = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const writeFault = () => {
      if (!state.full) return null;
      state.faults++;
      return { error, written };
    };
    return { state, writeFault };
  }

  for (const written of [false, true]) {
    it(`after a failed write (${written ? 'reported after the data reached the disk' : 'nothing written'}) refuses every call until reopen(), then serves what the disk holds`, async () => {
      const directory = await freshDirectory();
      cleanup.push(directory);
      const disk = diskFull(written);
      const engine = await LevelStorageEngine.open(directory, { writeFault: disk.writeFault });
      const storage = engine.group('spool:s');
      const other = engine.group('spool:t');
      await storage.load();
      await other.load();
      await storage.save({ term: 1, vote: 'n1', commit: 3 }, entries(1, 3, 1));
      await other.save({ term: 1, vote: 'n1', commit: 1 }, entries(1, 1, 1));
      disk.state.full = true;
      const failed = storage.save({ term: 1, vote: 'n1', commit: 3 }, entries(4, 5, 1));
      await expect(failed).rejects.toSatisfy((e: unknown) => isStorageError(e) && e.kind === 'io');
      expect(engine.failure()?.kind).toBe('io');
      // Every group is refused, not only the one whose write failed.
      await expect(other.save(null, entries(2, 2, 1))).rejects.toSatisfy((e: unknown) => isStorageError(e) && e.kind === 'io');
      disk.state.full = false; // space freed

      await engine.reopen();
      expect(engine.failure()).toBeNull();
      const restored = await storage.load();
      // Whether the failed batch is there is read from the disk, never assumed.
      expect(restored.entries.map((e) => e.index)).toEqual(written ? [1, 2, 3, 4, 5] : [1, 2, 3]);
      expect((await other.load()).entries.map((e) => e.index)).toEqual([1]);
      await storage.save({ term: 2, vote: 'n1', commit: 3 }, [entry(restored.entries.length + 1, 2)]);
      await engine.close();
      const again = await LevelStorageEngine.open(directory);
      const reloaded = await again.group('spool:s').load();
      expect(reloaded.entries.map((e) => `${e.index}/${e.term}`)).toEqual(
        written ? ['1/1', '2/1', '3/1', '4/1', '5/1', '6/2'] : ['1/1', '2/1', '3/1', '4/2'],
      );
      expect(reloaded.hardState.term).toBe(2);
      await again.close();
    });
  }

  it('removes a snapshot file being written whose finish the failed engine refuses', async () => {
    const directory = await freshDirectory();
    cleanup.push(directory);
    const disk = diskFull(false);
    const engine = await LevelStorageEngine.open(directory, { writeFault: disk.writeFault });
    const storage = engine.group('spool:s');
    await storage.load();
    await storage.save({ term: 1, vote: 'n1', commit: 3 }, entries(1, 3, 1));
    const sink = storage.beginSnapshot!({ index: 3, term: 1, config: { voters: ['n1'], learners: [] } });
    await sink.append(new Uint8Array(4096).fill(7));
    const snapshotFiles = async (): Promise<string[]> =>
      (await readdir(directory, { recursive: true })).filter((name) => name.endsWith('.snap.tmp'));
    expect(await snapshotFiles()).toHaveLength(1);
    disk.state.full = true;
    await expect(storage.save(null, entries(4, 4, 1))).rejects.toSatisfy((e: unknown) => isStorageError(e));
    await expect(sink.finish()).rejects.toSatisfy((e: unknown) => isStorageError(e) && e.kind === 'io');
    // Neither the half-written file nor its descriptor is left (on a full disk, both hold space).
    expect(await snapshotFiles()).toEqual([]);
    const descriptors = await readdir('/proc/self/fd');
    const targets = await Promise.all(
      descriptors.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => '')),
    );
    expect(targets.filter((target) => target.includes('.snap'))).toEqual([]);
    await engine.close();
  });

  it('a group that did not load() again after reopen() cannot write', async () => {
    const directory = await freshDirectory();
    cleanup.push(directory);
    const engine = await LevelStorageEngine.open(directory);
    const storage = engine.group('spool:s');
    await storage.load();
    await storage.save({ term: 1, vote: 'n1', commit: 0 }, entries(1, 1, 1));
    await engine.reopen(); // also fine when nothing failed
    expect(() => storage.save(null, entries(2, 2, 1))).toThrow(/load\(\) before writing/);
    await storage.load();
    await storage.save(null, entries(2, 2, 1));
    await engine.close();
  });

  it('a second engine on the same directory is refused while the first is open', async () => {
    const { reopen } = await setup();
    const engine = await reopen();
    await expect(reopen()).rejects.toThrow();
    await engine.close();
  });
});
