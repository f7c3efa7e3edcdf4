import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PayloadError } from '@spoolmq/engine';
import { PayloadCache, SegmentStore } from '@spoolmq/member';
import { EntryType, LevelStorageEngine, Prng } from '@spoolmq/raft';
import { afterEach, describe, expect, it } from 'vitest';
import { corruptPayloadRecords, corruptStoredEntries } from '../../src/chaos/bad-bytes.js';

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

describe('corruptPayloadRecords', () => {
  it('flips bits in payload records that the segment store finds on read; the rest read back', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mq-bad-payloads-'));
    directories.push(directory);
    const payloadOf = (seq: number): Uint8Array => Uint8Array.from({ length: 50 + seq }, (_, i) => (seq + i) & 0xff);
    const written = new Map<string, { store: string; seq: number; location: number }[]>();
    for (const group of ['spool:a#1', 'spool:b#2']) {
      const dir = join(directory, 'payloads', encodeURIComponent(group));
      const store = SegmentStore.open({ dir, cache: new PayloadCache(0), segmentBytesMax: 1024 });
      const records = [];
      for (let seq = 1; seq <= 20; seq++) records.push({ store: dir, seq, location: store.append(seq, payloadOf(seq)) });
      await store.sync();
      await store.close();
      written.set(group, records);
    }

    const { records: changed } = await corruptPayloadRecords(directory, new Prng(11), 5);
    expect(changed).toHaveLength(5);
    expect(new Set(changed).size).toBe(5);

    let failed = 0;
    for (const [group, records] of written) {
      const store = SegmentStore.open({ dir: records[0]!.store, cache: new PayloadCache(0) });
      try {
        for (const { seq, location } of records) {
          const hit = changed.some((name) => name.startsWith(`${group}/`) && name.endsWith(`@${seq}`));
          if (hit) {
            expect(() => store.read(seq, location, payloadOf(seq).byteLength)).toThrow(PayloadError);
            failed++;
          } else {
            expect(store.read(seq, location, payloadOf(seq).byteLength)).toEqual(payloadOf(seq));
          }
        }
      } finally {
        await store.close();
      }
    }
    expect(failed).toBe(5);
  });

  it('finds nothing to corrupt in a member without payloads', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mq-bad-payloads-'));
    directories.push(directory);
    expect(await corruptPayloadRecords(directory, new Prng(1), 3)).toEqual({ records: [] });
  });
});
