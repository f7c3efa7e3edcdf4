// Memory per stored message (issue 13): the engine keeps a backlog in column arrays, with no
// object per message. A structural check (nothing but the columns grows with a plain backlog)
// and a generous bound on heap plus ArrayBuffer bytes per message, measured after full GCs.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { CHUNK_SLOTS, SLOT_BYTES } from '../src/columns.js';
import { SpoolEngine } from '../src/engine.js';
import type { PayloadStore } from '../src/payload-store.js';
import { resolvePlan } from '../src/plan.js';
import { resolveSettings } from '../src/settings.js';
import { T0, createQueue, newEngine, receive, ref, send } from './helpers.js';

/** Keeps no payload (the payload store's memory is not the engine's per-message cost). */
const NO_PAYLOADS: PayloadStore = {
  id: 'none',
  append: (seq) => seq,
  read: () => new Uint8Array(0),
  adopt: () => undefined,
  release: () => undefined,
};

/** Heap and ArrayBuffer bytes in use after full collections. */
function usedBytes(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

describe('message columns', () => {
  it('a slot costs at most 64 bytes', () => {
    expect(SLOT_BYTES).toBeLessThanOrEqual(64);
  });

  it('a plain backlog grows the columns only: no heap entry, no side-map entry', () => {
    const engine = newEngine();
    const q = createQueue(engine, 'q');
    const count = 3 * CHUNK_SLOTS + 17;
    for (let i = 0; i < count; i++) send(engine, q, T0 + Math.floor(i / 100));
    const heaps = [q.ready, q.delayedHeap, q.failedHeap, q.expiry, q.leases];
    expect(heaps.map((heap) => heap.size)).toEqual([0, 0, 0, 0, 0]);
    expect(q.order.sideEntries).toBe(0);
    // Leased messages hold lease fields; settled ones give them back.
    const leased = Array.from({ length: 100 }, () => receive(engine, q, T0 + 1000));
    expect(q.order.sideEntries).toBe(100);
    for (const m of leased) engine.apply({ type: 'ack', ...ref(q, m) }, T0 + 1000);
    expect(q.order.sideEntries).toBe(0);
    expect(q.order.liveCount).toBe(count - 100);
  });

  it('holds at most 64 heap and ArrayBuffer bytes per stored message (200,000 messages)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const plan = resolvePlan({ messagesPerSpoolMax: 1_000_000 });
    const engine = SpoolEngine.over(NO_PAYLOADS, plan);
    const settings = resolveSettings({}, plan);
    if (!('leaseTimeoutSeconds' in settings)) throw settings;
    engine.apply({ type: 'createQueue', name: 'q', settings }, T0);
    const queueGen = engine.queue('q')!.gen;
    const payload = new Uint8Array(128);
    const count = 200_000;
    const before = usedBytes(gc);
    for (let i = 0; i < count; i++) {
      const command = { type: 'send', queueGen, delayMs: 0, dedupKey: null, payload } as const;
      engine.apply(command, T0 + Math.floor(i / 1000));
    }
    const perMessage = (usedBytes(gc) - before) / count;
    expect(engine.queue('q')!.total).toBe(count);
    // One object per message (the layout before columns) cost about 230 bytes.
    expect(perMessage).toBeLessThanOrEqual(64);
  });
});
