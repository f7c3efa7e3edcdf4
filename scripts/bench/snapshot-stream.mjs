#!/usr/bin/env node
// Restart and InstallSnapshot of one spool's snapshot, measured apart (a fresh process each, so
// peak RSS is that phase's): a spool of N messages (payloads in the segment store) is
// snapshotted into LevelDB storage, then
//   restart: a new process loads the group (checking the file) and restores an engine from it;
//   install: a new process reads the stored snapshot in InstallSnapshot chunks (1 MiB) as a
//            leader does, receives them as a follower's core does, stores them in a second
//            storage and restores an engine from what was stored.
// Works on the tree before streaming snapshots too (one-buffer API), to compare.
//   npm run build && node scripts/bench/snapshot-stream.mjs [messages]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(import.meta.url);
const dist = (path) => new URL(`../../packages/${path}`, import.meta.url).href;
const T0 = 1_800_000_000_000;
const CHUNK_BYTES = 1 << 20;
const GROUP = 'spool:bench';

const [phase, dir, messagesArg] = process.argv.slice(2);

if (phase === undefined || /^\d+$/.test(phase)) {
  const messages = Number(phase ?? 1_000_000);
  const root = mkdtempSync(join(tmpdir(), 'mq-snapshot-stream-'));
  try {
    const results = { messages };
    for (const step of ['prepare', 'restart', 'install']) {
      const child = spawnSync(process.execPath, [here, step, root, String(messages)], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      if (child.status !== 0) throw new Error(`${step} failed: ${child.stderr}`);
      results[step] = JSON.parse(child.stdout.trim().split('\n').at(-1));
    }
    process.stdout.write(`${JSON.stringify(results)}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
} else {
  const out = await run(phase, dir, Number(messagesArg));
  out.peakRssMib = Math.round(process.resourceUsage().maxRSS / 1024);
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

async function modules() {
  const engine = await import(dist('engine/dist/index.js'));
  const raft = await import(dist('raft/dist/index.js'));
  const { SnapshotReceiver } = await import(dist('raft/dist/core/snapshot-receiver.js'));
  const { PayloadCache } = await import(dist('member/dist/store/payload-cache.js'));
  const { SegmentStore } = await import(dist('member/dist/store/segment-store.js'));
  return { ...engine, ...raft, SnapshotReceiver, PayloadCache, SegmentStore };
}

async function run(step, root, messages) {
  const m = await modules();
  const streaming = typeof m.snapshotOf === 'function';
  const plan = m.resolvePlan({ messagesPerSpoolMax: 100_000_000, payloadBytesPerSpoolMax: 2 ** 50 });
  const store = m.SegmentStore.open({ dir: join(root, 'segments'), cache: new m.PayloadCache(1 << 20) });
  const meta = { index: 10, term: 1, config: { voters: ['n1', 'n2', 'n3'], learners: [] } };
  const chunksOf = (data) => (streaming ? data : [data]);
  try {
    if (step === 'prepare') return await prepare(m, streaming, plan, store, root, messages, meta);
    const start = performance.now();
    const leader = await m.LevelStorageEngine.open(join(root, 'leader'));
    const loaded = await leader.group(GROUP).load();
    if (step === 'restart') {
      const engine = m.SpoolEngine.fromSnapshot(chunksOf(loaded.snapshot.data), plan, store);
      const readyMs = performance.now() - start;
      await leader.close();
      return { readyMs: Math.round(readyMs), messages: engine.state.messageCount };
    }
    const data = loaded.snapshot.data;
    const size = streaming ? data.dataBytes : data.length;
    const receiver = new m.SnapshotReceiver(meta);
    for (let offset = 0; offset < size; offset += CHUNK_BYTES) {
      const end = Math.min(size, offset + CHUNK_BYTES);
      receiver.accept(offset, streaming ? data.slice(offset, end) : data.subarray(offset, end));
    }
    const follower = await m.LevelStorageEngine.open(join(root, 'follower'));
    const storage = follower.group(GROUP);
    await storage.load();
    const received = streaming ? m.snapshotOf(meta, receiver.take()) : { meta, data: receiver.assemble() };
    const stored = await storage.saveSnapshot(received);
    const restoreFrom = streaming ? stored : received.data;
    const other = m.SegmentStore.open({ dir: join(root, 'segments-2'), cache: new m.PayloadCache(1 << 20) });
    const engine = m.SpoolEngine.fromSnapshot(chunksOf(restoreFrom), plan, other);
    const installMs = performance.now() - start;
    await Promise.all([leader.close(), follower.close(), other.close()]);
    return { installMs: Math.round(installMs), snapshotBytes: size, messages: engine.state.messageCount };
  } finally {
    await store.close();
  }
}

async function prepare(m, streaming, plan, store, root, messages, meta) {
  const engine = m.SpoolEngine.over(store, plan);
  engine.apply({ type: 'createQueue', name: 'q', settings: m.resolveSettings({}, plan) }, T0);
  const queueGen = engine.queue('q').gen;
  for (let i = 0; i < messages; i++) {
    const payload = Buffer.allocUnsafe(128).fill(i & 0xff);
    engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload }, T0 + (i >> 10));
  }
  await store.sync();
  const storageEngine = await m.LevelStorageEngine.open(join(root, 'leader'));
  const storage = storageEngine.group(GROUP);
  await storage.load();
  const start = performance.now();
  if (streaming) {
    // As RaftNode stores a sliced snapshot: each 256 KiB step written as it comes.
    const work = engine.beginSnapshot();
    const sink = storage.beginSnapshot(meta);
    for (let done = false; !done; ) {
      const slice = work.step(256 * 1024);
      await sink.append(slice.chunk);
      done = slice.done;
    }
    await sink.finish();
  } else {
    await storage.saveSnapshot({ meta, data: engine.snapshot() });
  }
  const saveMs = performance.now() - start;
  await storageEngine.close();
  return { saveMs: Math.round(saveMs) };
}
