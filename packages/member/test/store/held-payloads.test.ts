// A replica that restores another replica's snapshot takes the payloads its own store still
// holds (found by seq, checked, reused in place) and lacks only the rest: the segment store
// (retired segments included, a record larger than the scan's block, a flipped bit) and the
// memory store alike.

import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MemoryPayloadStore,
  PAYLOAD_MISSING,
  type PayloadStore,
  SpoolEngine,
  resolveSettings,
} from '@spoolmq/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HeldPayloadRecovery, recoverHeldPayloads } from '../../src/store/held-payloads.js';
import { PayloadCache } from '../../src/store/payload-cache.js';
import { MemoryReplicaPayloads } from '../../src/store/replica-payloads.js';
import type { ReplicaPayloadStore } from '../../src/store/replica-payloads.js';
import { RECORD_HEADER_BYTES } from '../../src/store/segment-record.js';
import { SegmentStore } from '../../src/store/segment-store.js';

let dir: string;
let stores: SegmentStore[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mq-held-'));
  stores = [];
});

afterEach(async () => {
  for (const store of stores) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function openSegments(): SegmentStore {
  const cache = new PayloadCache(0);
  const store = SegmentStore.open({ dir, cache, segmentBytesMax: 8 * 1024 * 1024 });
  stores.push(store);
  return store;
}

const SIZES = [100, 3000, 1, 1_500_000, 700, 50_000];
const payloads = new Map<number, Uint8Array>();
function payloadOf(seq: number): Uint8Array {
  let payload = payloads.get(seq);
  if (payload === undefined) {
    payload = new Uint8Array(SIZES[(seq - 1) % SIZES.length]!);
    for (let i = 0; i < payload.byteLength; i++) payload[i] = (seq * 31 + i) & 0xff;
    payloads.set(seq, payload);
  }
  return payload;
}

/** Queue `q` with `count` messages (some larger than the scan's 1 MiB block), seq 1..count. */
function fill(engine: SpoolEngine, count: number): void {
  const settings = resolveSettings({}, engine.plan);
  if (settings instanceof Error) throw settings;
  engine.apply({ type: 'createQueue', name: 'q', settings }, 1);
  const queueGen = engine.queue('q')!.gen;
  for (let seq = 1; seq <= count; seq++) {
    const payload = payloadOf(seq);
    engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload }, 1);
  }
}

/** The snapshot another replica (its own store, same commands) takes of the same state. */
function peerSnapshot(count: number): Uint8Array {
  const peer = SpoolEngine.over(new MemoryPayloadStore('peer-store'));
  fill(peer, count);
  return peer.snapshot();
}

/** Installs the peer's snapshot as SpoolReplica.restore does, then recovers held payloads. */
function install(store: ReplicaPayloadStore, snapshot: Uint8Array): [SpoolEngine, number] {
  store.retireAll();
  const engine = SpoolEngine.fromSnapshot(snapshot, undefined, store);
  expect(engine.missingPayloadCount).toBeGreaterThan(0);
  return [engine, recoverHeldPayloads(engine, store)];
}

function expectPayloads(engine: SpoolEngine, seqs: readonly number[]): void {
  const queue = engine.queue('q')!;
  for (const seq of seqs) {
    const read = Buffer.from(engine.payloadOf(queue.order.find(seq)!));
    expect(read.equals(payloadOf(seq)), `payload of ${seq}`).toBe(true);
  }
}

function flipBit(store: SegmentStore, engine: SpoolEngine, seq: number): void {
  const location = engine.queue('q')!.order.find(seq)!.location;
  const no = Math.floor(location / 2 ** 32);
  const at = location - no * 2 ** 32 + RECORD_HEADER_BYTES + 5;
  const fd = openSync(join(dir, `${no.toString(16).padStart(8, '0')}.seg`), 'r+');
  writeSync(fd, Buffer.from([payloadOf(seq)[5]! ^ 0x04]), 0, 1, at);
  closeSync(fd);
  expect(store.verify(seq, location, payloadOf(seq).byteLength)).toMatch(/checksum mismatch/);
}

describe('recoverHeldPayloads over a segment store', () => {
  it('reuses every intact record in place: nothing is written or lacking', () => {
    const store = openSegments();
    const own = SpoolEngine.over(store);
    fill(own, 24);
    const diskBefore = store.stats().diskBytes;
    const [engine, recovered] = install(store, peerSnapshot(24));
    expect(recovered).toBe(24);
    expect(engine.missingPayloadCount).toBe(0);
    expect(store.stats().diskBytes).toBe(diskBefore);
    expectPayloads(engine, Array.from({ length: 24 }, (_, i) => i + 1));
    // The reused segments are live again: saving the next snapshot deletes none of them.
    const files = readdirSync(dir).filter((name) => name.endsWith('.seg'));
    store.saved(store.checkpoint());
    for (const file of files.filter((name) => name !== files.at(-1))) {
      expect(readdirSync(dir)).toContain(file);
    }
    expectPayloads(engine, [1, 4, 24]);
  });

  it('leaves a record that fails its checksum missing (fetched from a peer) and takes the rest', () => {
    const store = openSegments();
    const own = SpoolEngine.over(store);
    fill(own, 12);
    flipBit(store, own, 4); // the 1.5 MB record, read apart from the scan's block
    flipBit(store, own, 8);
    const [engine, recovered] = install(store, peerSnapshot(12));
    expect(recovered).toBe(10);
    const queue = engine.queue('q')!;
    expect(queue.order.find(4)!.location).toBe(PAYLOAD_MISSING);
    expect(queue.order.find(8)!.location).toBe(PAYLOAD_MISSING);
    expect(engine.missingPayloadCount).toBe(2);
    expectPayloads(engine, [1, 2, 3, 5, 6, 7, 9, 10, 11, 12]);
  });

  it('finds the payloads after a restart too, and again after a second install', async () => {
    const first = openSegments();
    fill(SpoolEngine.over(first), 6);
    await first.sync();
    await first.close();
    const store = openSegments();
    const snapshot = peerSnapshot(6);
    const [, recovered] = install(store, snapshot);
    expect(recovered).toBe(6);
    const [engine, again] = install(store, snapshot);
    expect(again).toBe(6);
    expectPayloads(engine, [1, 2, 3, 4, 5, 6]);
  });

  it('a record of the seq with another length is not taken', () => {
    const store = openSegments();
    store.append(1, new Uint8Array(99));
    const [engine, recovered] = install(store, peerSnapshot(1));
    expect(recovered).toBe(0);
    expect(engine.missingPayloadCount).toBe(1);
  });
});

describe('HeldPayloadRecovery, a step at a time', () => {
  /** The peer's snapshot installed over `store` (as SpoolReplica.restore), not yet scanned. */
  function installed(store: ReplicaPayloadStore, count: number): SpoolEngine {
    store.retireAll();
    return SpoolEngine.fromSnapshot(peerSnapshot(count), undefined, store);
  }

  it('reads about one block per step of a byte, and ends with every payload, each queue told', () => {
    const store = openSegments();
    fill(SpoolEngine.over(store), 24); // about 6.4 MB: several scan blocks
    const engine = installed(store, 24);
    const told: number[] = [];
    const recovery = new HeldPayloadRecovery(engine, store, (queueGen) => told.push(queueGen));
    let steps = 1;
    expect(recovery.step(1)).toBe(false);
    // One step read one block (1 MiB) or one larger record: far from all 24 payloads.
    expect(recovery.taken).toBeLessThan(12);
    while (!recovery.step(1)) steps++;
    expect(steps).toBeGreaterThanOrEqual(4); // a block, or a block and a 1.5 MB record, each
    expect(recovery.taken).toBe(24);
    expect(engine.missingPayloadCount).toBe(0);
    expect(new Set(told)).toEqual(new Set([engine.queue('q')!.gen]));
    expectPayloads(engine, Array.from({ length: 24 }, (_, i) => i + 1));
  });

  it('a snapshot saved between steps deletes no segment the scan has yet to read', () => {
    const store = openSegments();
    fill(SpoolEngine.over(store), 24);
    const engine = installed(store, 24);
    const recovery = new HeldPayloadRecovery(engine, store);
    recovery.step(1);
    store.saved(store.checkpoint()); // the installed snapshot's save, in the same turn
    while (!recovery.step(1));
    expect(recovery.taken).toBe(24);
    expectPayloads(engine, [1, 4, 24]);
    // Once the scan is done, saves reclaim again: nothing is live there but what was taken.
    store.saved(store.checkpoint());
    expect(store.stats().liveRecords).toBe(24);
  });

  it('a newer scan ends an older one (another snapshot was installed meanwhile)', () => {
    const store = new MemoryReplicaPayloads('own-store');
    fill(SpoolEngine.over(store), 6);
    const first = new HeldPayloadRecovery(installed(store, 6), store);
    const engine = installed(store, 6);
    const second = new HeldPayloadRecovery(engine, store);
    expect(first.step()).toBe(true);
    expect(first.taken).toBe(0);
    expect(second.step()).toBe(true);
    expect(second.taken).toBe(6);
    expectPayloads(engine, [1, 2, 3, 4, 5, 6]);
  });
});

describe('recoverHeldPayloads over the memory store', () => {
  it('takes what the store held before the install and lacks nothing else', () => {
    const store = new MemoryReplicaPayloads('own-store');
    fill(SpoolEngine.over(store), 6);
    const [engine, recovered] = install(store, peerSnapshot(6));
    expect(recovered).toBe(6);
    expect(engine.missingPayloadCount).toBe(0);
    expectPayloads(engine, [1, 2, 3, 4, 5, 6]);
    // Retired payloads go once a snapshot begun after the install is saved.
    store.saved(store.checkpoint());
    expect(store.count).toBe(6);
  });

  it('lacks what it never held', () => {
    const store: PayloadStore & ReplicaPayloadStore = new MemoryReplicaPayloads('own-store');
    const [engine, recovered] = install(store, peerSnapshot(3));
    expect(recovered).toBe(0);
    expect(engine.missingPayloadCount).toBe(3);
  });
});
