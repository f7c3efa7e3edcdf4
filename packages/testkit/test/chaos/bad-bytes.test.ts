import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntryType, LevelStorageEngine } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { corruptStoredEntries } from '../../src/chaos/bad-bytes.js';
import { Prng } from '../../src/chaos/prng.js';

const directories: string[] = [];

afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

function entries(from: number, to: number, term: number) {
  return Array.from({ length: to - from + 1 }, (_, i) => ({
    index: from + i,
    term,
    type: EntryType.Normal,
    data: new Uint8Array([1, 2, 3, from + i]),
  }));
}

describe('corruptStoredEntries', () => {
  it('flips bits that the storage finds on load: entries dropped and the damage marked', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mq-bad-bytes-'));
    directories.push(directory);
    let engine = await LevelStorageEngine.open(directory);
    for (const group of ['meta', 'spool:a/q#1']) {
      const storage = engine.group(group);
      await storage.load();
      await storage.save({ term: 3, vote: 'n1', commit: 20 }, entries(1, 20, 3));
    }
    await engine.close();

    const { entries: changed } = await corruptStoredEntries(directory, new Prng(7), 3);
    expect(changed).toHaveLength(3);

    engine = await LevelStorageEngine.open(directory);
    try {
      let dropped = 0;
      for (const group of ['meta', 'spool:a/q#1']) {
        const restored = await engine.group(group).load();
        const hits = changed.filter((name) => name.startsWith(`${group}@`));
        if (hits.length === 0) {
          expect(restored.entries).toHaveLength(20);
          expect(restored.hardState.damage ?? null).toBeNull();
          continue;
        }
        const first = Math.min(...hits.map((name) => Number(name.split('@')[1])));
        expect(restored.entries.map((e) => e.index)).toEqual(entries(1, first - 1, 3).map((e) => e.index));
        expect(restored.hardState.damage).toEqual({ lastIndex: 20, lastTerm: 3 });
        dropped += 20 - (first - 1);
      }
      expect(engine.stats().tornEntriesDropped).toBe(dropped);
    } finally {
      await engine.close();
    }
  });
});
