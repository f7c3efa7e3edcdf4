import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { openSync, closeSync, writeSync, writevSync } from 'node:fs';
import { isRecoverableStorageError } from '@spoolmq/raft';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PAYLOAD_MISSING, PayloadError, SpoolEngine, resolveSettings } from '@spoolmq/engine';
import { PayloadCache } from '../../src/store/payload-cache.js';
import { RECORD_HEADER_BYTES } from '../../src/store/segment-record.js';
import { SegmentStore } from '../../src/store/segment-store.js';

let dir: string;
let stores: SegmentStore[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mq-segments-'));
  stores = [];
});

afterEach(async () => {
  for (const store of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A store without a cache (every read goes to the file) unless `cacheBytes` is given. */
function open(segmentBytesMax = 1024, cacheBytes = 0): SegmentStore {
  const store = SegmentStore.open({ dir, cache: new PayloadCache(cacheBytes), segmentBytesMax });
  stores.push(store);
  return store;
}

function captured(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return null;
}

function payloadOf(seq: number, bytes = 100): Uint8Array {
  return Uint8Array.from({ length: bytes }, (_, i) => (seq * 31 + i) & 0xff);
}

function segmentFiles(): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.seg')).sort();
}

describe('SegmentStore', () => {
  it('reads back what it appended, across segments and after a reopen', async () => {
    const store = open();
    const locations = [];
    for (let seq = 1; seq <= 30; seq++) locations.push(store.append(seq, payloadOf(seq)));
    expect(segmentFiles().length).toBeGreaterThan(2);
    for (let seq = 1; seq <= 30; seq++) {
      expect(store.read(seq, locations[seq - 1]!, 100)).toEqual(payloadOf(seq));
    }
    await store.sync();
    const id = store.id;
    await store.close();
    const reopened = open();
    expect(reopened.id).toBe(id);
    for (let seq = 1; seq <= 30; seq++) {
      expect(reopened.read(seq, locations[seq - 1]!, 100)).toEqual(payloadOf(seq));
    }
    // A reopened store appends to a fresh head, never after a tail it did not write.
    const next = reopened.append(31, payloadOf(31));
    expect(Math.floor(next / 2 ** 32)).toBeGreaterThan(Math.floor(locations[29]! / 2 ** 32));
  });

  it('answers unavailable for a flipped bit, never wrong bytes', () => {
    const store = open(1 << 20);
    const location = store.append(7, payloadOf(7));
    store.flush();
    const file = join(dir, segmentFiles()[0]!);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.from([0xff ^ payloadOf(7)[10]!]), 0, 1, RECORD_HEADER_BYTES + 10);
    closeSync(fd);
    expect(() => store.read(7, location, 100)).toThrow(PayloadError);
    expect(() => store.read(7, location, 100)).toThrow(/checksum mismatch/);
  });

  it('a record that failed its checksum is dropped by the engine and replaced by a fetched copy', () => {
    const store = open(1 << 20);
    const engine = SpoolEngine.over(store);
    const settings = resolveSettings({}, engine.plan);
    if (settings instanceof Error) throw settings;
    engine.apply({ type: 'createQueue', name: 'q', settings }, 1);
    const queueGen = engine.queue('q')!.gen;
    engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload: payloadOf(1) }, 1);
    const message = engine.queue('q')!.order.find(1)!;
    store.flush();
    const fd = openSync(join(dir, segmentFiles()[0]!), 'r+');
    writeSync(fd, Buffer.from([0xff ^ payloadOf(1)[3]!]), 0, 1, RECORD_HEADER_BYTES + 3);
    closeSync(fd);
    expect(() => engine.payloadOf(message)).toThrow(/checksum mismatch/);
    engine.dropPayload(engine.queue('q')!, message);
    expect(store.stats().liveRecords).toBe(0);
    expect(engine.missingPayloadCount).toBe(1);
    expect(engine.fillPayload(queueGen, 1, payloadOf(1))).toBe(true);
    expect(engine.payloadOf(message)).toEqual(payloadOf(1));
    expect(store.stats().liveRecords).toBe(1);
  });

  it('refuses a record of another message or length (a stale location)', () => {
    const store = open(1 << 20);
    const location = store.append(7, payloadOf(7));
    expect(() => store.read(8, location, 100)).toThrow(/another message/);
    expect(() => store.read(7, location, 99)).toThrow(PayloadError);
    expect(() => store.read(7, PAYLOAD_MISSING, 100)).toThrow(/not fetched/);
  });

  it('a torn tail after a crash fails its reads cleanly and later appends go on', async () => {
    const store = open(1 << 20);
    const first = store.append(1, payloadOf(1));
    const torn = store.append(2, payloadOf(2));
    await store.sync();
    await store.close();
    const file = join(dir, segmentFiles()[0]!);
    truncateSync(file, statSync(file).size - 30);
    const reopened = open(1 << 20);
    expect(reopened.read(1, first, 100)).toEqual(payloadOf(1));
    expect(() => reopened.read(2, torn, 100)).toThrow(/short read/);
    const again = reopened.append(2, payloadOf(2));
    expect(reopened.read(2, again, 100)).toEqual(payloadOf(2));
  });

  it('serves reads from the cache while it holds the payload', () => {
    const cache = new PayloadCache(1 << 20);
    const store = SegmentStore.open({ dir, cache, segmentBytesMax: 1 << 20 });
    stores.push(store);
    const location = store.append(1, payloadOf(1));
    expect(store.read(1, location, 100)).toEqual(payloadOf(1));
    expect(cache.hits).toBe(1);
  });

  it('caches nothing while caching is off (a follower), and drops what it held', () => {
    const cache = new PayloadCache(1 << 20);
    const store = SegmentStore.open({ dir, cache, segmentBytesMax: 1 << 20 });
    stores.push(store);
    const first = store.append(1, payloadOf(1));
    expect(cache.byteCount).toBeGreaterThan(0);
    store.setCaching(false);
    expect(cache.byteCount).toBe(0);
    const second = store.append(2, payloadOf(2));
    expect(store.read(2, second, 100)).toEqual(payloadOf(2));
    expect(store.read(1, first, 100)).toEqual(payloadOf(1));
    expect(cache.byteCount).toBe(0);
    expect(cache.hits).toBe(0);
    store.setCaching(true);
    expect(store.read(2, second, 100)).toEqual(payloadOf(2));
    expect(store.read(2, second, 100)).toEqual(payloadOf(2));
    expect(cache.hits).toBe(1);
  });

  it('deletes a dead segment only once a snapshot begun after its death is saved', () => {
    const store = open(300);
    const a = store.append(1, payloadOf(1));
    const b = store.append(2, payloadOf(2));
    store.append(3, payloadOf(3)); // rolls: segment 1 holds seqs 1 and 2
    expect(segmentFiles()).toHaveLength(2);
    const before = store.checkpoint();
    store.release(a, 100);
    store.release(b, 100);
    store.saved(before);
    expect(segmentFiles()).toHaveLength(2);
    const after = store.checkpoint();
    store.saved(after);
    expect(segmentFiles()).toHaveLength(1);
    expect(store.stats().liveRecords).toBe(1);
  });

  it('sweep at start drops what the restored snapshot does not reference', async () => {
    const store = open(300);
    const kept = store.append(1, payloadOf(1));
    store.append(2, payloadOf(2));
    store.append(3, payloadOf(3));
    store.append(4, payloadOf(4));
    await store.sync();
    await store.close();
    const reopened = open(300);
    reopened.adopt(kept, 100);
    reopened.sweep();
    expect(reopened.read(1, kept, 100)).toEqual(payloadOf(1));
    expect(reopened.stats().segments).toBe(2); // the kept record's segment and the new head
  });

  it('fails a write on a full volume (ENOSPC or a short write) as a recoverable storage error', () => {
    let mode: 'ok' | 'enospc' | 'short' = 'ok';
    const writev = (fd: number, buffers: Uint8Array[], position: number): number => {
      if (mode === 'enospc') throw Object.assign(new Error('ENOSPC: no space left'), { code: 'ENOSPC' });
      const written = writevSync(fd, buffers, position);
      return mode === 'short' ? written - 1 : written;
    };
    for (const failure of ['enospc', 'short'] as const) {
      mode = 'ok';
      const store = SegmentStore.open({ dir, cache: new PayloadCache(0), writev });
      stores.push(store);
      const kept = store.append(1, payloadOf(1));
      store.flush();
      mode = failure;
      const lost = store.append(2, payloadOf(2));
      expect(() => store.flush()).toThrow(expect.objectContaining({ kind: 'io' }));
      expect(isRecoverableStorageError(captured(() => store.append(3, payloadOf(3))))).toBe(true);
      expect(() => store.flush()).toThrow(expect.objectContaining({ kind: 'io' }));
      // Nothing of it reached the file: its read fails, never answers other bytes.
      if (failure === 'enospc') expect(() => store.read(2, lost, 100)).toThrow(PayloadError);
      // What was stored before still reads; a store opened again appends to a fresh head.
      expect(Buffer.from(store.read(1, kept, 100)).equals(Buffer.from(payloadOf(1)))).toBe(true);
      mode = 'ok';
      const reopened = SegmentStore.open({ dir, cache: new PayloadCache(0), writev });
      stores.push(reopened);
      expect(reopened.append(4, payloadOf(4))).toBeGreaterThan(0);
    }
  });

  it('writes the records appended since the last flush in one write; a read writes first', () => {
    const writes: number[] = [];
    const writev = (fd: number, buffers: Uint8Array[], position: number): number => {
      writes.push(buffers.length / 2);
      return writevSync(fd, buffers, position);
    };
    const store = SegmentStore.open({ dir, cache: new PayloadCache(0), writev });
    stores.push(store);
    const locations = [1, 2, 3].map((seq) => store.append(seq, payloadOf(seq)));
    expect(writes).toEqual([]);
    store.flush();
    store.flush();
    expect(writes).toEqual([3]);
    const fourth = store.append(4, payloadOf(4));
    // Not cached (no cache here): the pending record is written before it is read back.
    expect(store.read(4, fourth, 100)).toEqual(payloadOf(4));
    expect(writes).toEqual([3, 1]);
    expect(store.verify(1, locations[0]!, 100)).toBeNull();
    // A run longer than one write may hold is written as it goes.
    for (let seq = 5; seq < 5 + 600; seq++) store.append(seq, payloadOf(seq, 10));
    expect(writes).toEqual([3, 1, 256, 256]);
    store.flush();
    expect(writes).toEqual([3, 1, 256, 256, 88]);
  });

  it('refuses a directory of another format with one sentence', () => {
    writeFileSync(join(dir, 'store-id'), 'mq-payload-segments 9\nabc\n');
    expect(() => open()).toThrow(/holds a format this version does not read/);
  });

  it('empties a mostly dead segment by moving its live records, then deletes it', () => {
    const store = open(1000);
    const engine = SpoolEngine.over(store);
    const T0 = 1_800_000_000_000;
    const settings = resolveSettings({}, engine.plan);
    if (settings instanceof Error) throw settings;
    engine.apply({ type: 'createQueue', name: 'q', settings }, T0);
    const q = engine.queue('q')!;
    for (let seq = 1; seq <= 30; seq++) {
      engine.apply({ type: 'send', queueGen: q.gen, delayMs: 0, dedupKey: null, payload: payloadOf(seq) }, T0);
    }
    // Segment 1 holds seqs 1-8 (116-byte records): all but seq 5 acked.
    for (const seq of [1, 2, 3, 4, 6, 7, 8]) {
      engine.apply({ type: 'ack', queueGen: q.gen, seq, gen: 0 }, T0);
    }
    const files = segmentFiles().length;
    const target = store.compactionTarget();
    expect(target).not.toBeNull();
    const before = store.checkpoint(); // a snapshot begun before the move may still point there
    expect(engine.relocatePayloads(target!)).toBe(1);
    store.saved(before);
    expect(segmentFiles()).toHaveLength(files);
    store.saved(store.checkpoint());
    expect(segmentFiles()).toHaveLength(files - 1);
    for (let seq = 5; seq <= 30; seq++) {
      const message = q.order.find(seq);
      if (message !== undefined) expect(engine.payloadOf(message)).toEqual(payloadOf(seq));
    }
    expect(store.compactionTarget()).toBeNull();
  });
});
