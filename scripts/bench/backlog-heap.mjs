#!/usr/bin/env node
// Child of backlog.mjs (run with --expose-gc): heap bytes per stored message of one spool engine
// whose payloads live in the on-disk segment store. Prints one JSON line.
//   node --expose-gc scripts/bench/backlog-heap.mjs <messages> <payloadBytes>
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SpoolEngine, resolvePlan, resolveSettings } from '../../packages/engine/dist/index.js';
import { PayloadCache } from '../../packages/member/dist/store/payload-cache.js';
import { SegmentStore } from '../../packages/member/dist/store/segment-store.js';

const messages = Number(process.argv[2] ?? 1_000_000);
const payloadBytes = Number(process.argv[3] ?? 128);
const SAMPLE = 1000;
const T0 = 1_800_000_000_000;
const dir = mkdtempSync(join(tmpdir(), 'mq-backlog-heap-'));
try {
  // A small cache: what it holds is not per-message cost.
  const cache = new PayloadCache(1 << 20);
  const store = SegmentStore.open({ dir, cache });
  const plan = resolvePlan({ messagesPerSpoolMax: 100_000_000, payloadBytesPerSpoolMax: 2 ** 50 });
  const engine = SpoolEngine.over(store, plan);
  const settings = resolveSettings({}, plan);
  engine.apply({ type: 'createQueue', name: 'q', settings }, T0);
  const queueGen = engine.queue('q').gen;
  const heapBefore = usedHeap();
  const rssBefore = process.memoryUsage().rss;
  const start = performance.now();
  for (let i = 0; i < messages; i++) {
    const payload = Buffer.allocUnsafe(payloadBytes).fill(i & 0xff);
    payload.writeUInt32BE(i, 0);
    const command = { type: 'send', queueGen, delayMs: 0, dedupKey: null, payload };
    engine.apply(command, T0 + Math.floor(i / 1000));
  }
  const appendS = (performance.now() - start) / 1000;
  const heapAfter = usedHeap();
  const rssAfter = process.memoryUsage().rss;
  await store.sync();
  const encodeStart = performance.now();
  const snapshot = engine.snapshot();
  const encodeMs = performance.now() - encodeStart;
  const decodeStart = performance.now();
  const restored = SpoolEngine.fromSnapshot(snapshot, plan, store);
  const decodeMs = performance.now() - decodeStart;
  // The same bytes as a file read yields them, 1 MiB at a time (records straddle chunks).
  const chunkedStart = performance.now();
  SpoolEngine.fromSnapshot(chunksOf(snapshot, 1 << 20), plan, store);
  const decodeChunkedMs = performance.now() - chunkedStart;
  let sampleOk = 0;
  const queue = restored.queue('q');
  for (let k = 0; k < SAMPLE; k++) {
    const seq = 1 + Math.floor((k / SAMPLE) * messages);
    const bytes = restored.payloadOf(queue.order.find(seq));
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.readUInt32BE(0) === seq - 1 && view[payloadBytes - 1] === ((seq - 1) & 0xff)) sampleOk++;
  }
  const stats = store.stats();
  await store.close();
  process.stdout.write(
    `${JSON.stringify({
      messages,
      payloadBytes,
      heapBytesPerMessage: Math.round((heapAfter - heapBefore) / messages),
      rssMib: Math.round(rssAfter / 2 ** 20),
      rssGrowthMib: Math.round((rssAfter - rssBefore) / 2 ** 20),
      appendsPerS: Math.round(messages / appendS),
      diskMib: Math.round(stats.diskBytes / 2 ** 20),
      segments: stats.segments,
      snapshotBytesPerMessage: Math.round(snapshot.byteLength / messages),
      encodeMs: Math.round(encodeMs),
      decodeMs: Math.round(decodeMs),
      decodeChunkedMs: Math.round(decodeChunkedMs),
      sample: SAMPLE,
      sampleOk,
    })}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/** The JS heap plus ArrayBuffer backing stores (the engine's columns are typed arrays). */
function usedHeap() {
  for (let i = 0; i < 3; i++) globalThis.gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

function* chunksOf(bytes, size) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
