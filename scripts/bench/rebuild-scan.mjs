// The `scan` part of `npm run bench -- rebuild` (see rebuild.mjs): the own-store scan after a
// snapshot install, whole versus a step per event-loop turn, with the loop's longest delay.
import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { DEFAULT_PLAN, SpoolEngine, resolveSettings } from '@spoolmq/engine';
import { HeldPayloadRecovery, recoverHeldPayloads } from '../../packages/member/dist/store/held-payloads.js';
import { PayloadCache } from '../../packages/member/dist/store/payload-cache.js';
import { SegmentStore } from '../../packages/member/dist/store/segment-store.js';
import { printTable } from './lib/index.mjs';
import { removeDir, tempDir } from './peers/support.mjs';

const PLAN = { ...DEFAULT_PLAN, messagesPerSpoolMax: 50_000_000, payloadBytesPerSpoolMax: 2 ** 50 };
/** The member's default payload cache budget is irrelevant here: reads bypass it (held scan). */
const CACHE_BYTES = 64 * 1024 * 1024;

/** A payload store that keeps nothing: the peer whose snapshot is installed (locations only). */
function peerStore() {
  return { id: 'peer-store', append: (seq) => seq, read: () => { throw new Error('peer'); }, adopt() {}, release() {} };
}

/** Sends `count` messages of `bytes` bytes to queue `q` of `engine` (payloads from `pool`). */
function fill(engine, count, bytes, pool) {
  const settings = resolveSettings({}, engine.plan);
  engine.apply({ type: 'createQueue', name: 'q', settings }, 1);
  const queueGen = engine.queue('q').gen;
  for (let i = 0; i < count; i++) {
    const from = (i * 65_537) % (pool.length - bytes);
    const payload = pool.subarray(from, from + bytes);
    engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload }, 1);
  }
}

export async function scanPart(config) {
  const bytes = config.payloadKib * 1024;
  const count = Math.floor((config.scanMib * 1024 * 1024) / bytes);
  const dir = tempDir('rebuild-scan');
  const store = SegmentStore.open({ dir, cache: new PayloadCache(CACHE_BYTES) });
  try {
    const pool = randomBytes(8 << 20);
    const fillStartMs = performance.now();
    fill(SpoolEngine.over(store, PLAN), count, bytes, pool);
    const fillS = (performance.now() - fillStartMs) / 1000;
    const peer = SpoolEngine.over(peerStore(), PLAN);
    fill(peer, count, bytes, pool);
    const snapshot = peer.snapshot();
    const install = () => {
      store.retireAll();
      return SpoolEngine.fromSnapshot(snapshot, PLAN, store);
    };
    const whole = scanWhole(install(), store);
    const stepped = await scanStepped(install(), store);
    const out = { messages: count, storeMib: Math.round(store.stats().diskBytes / (1 << 20)), fillS: round(fillS), whole, stepped };
    printTable(
      ['payloads', 'store MiB', 'way', 'recovered', 'scan s', 'longest step ms', 'loop delay max ms'],
      [
        [count, out.storeMib, 'whole (before)', whole.recovered, whole.scanS, whole.longestStepMs, whole.loopDelayMaxMs],
        [count, out.storeMib, 'a step a turn', stepped.recovered, stepped.scanS, stepped.longestStepMs, stepped.loopDelayMaxMs],
      ],
    );
    return out;
  } finally {
    await store.close();
    removeDir(dir);
  }
}

/** The scan in one call: the loop is held for all of it. */
function scanWhole(engine, store) {
  const startMs = performance.now();
  const recovered = recoverHeldPayloads(engine, store);
  const ms = performance.now() - startMs;
  return { recovered, scanS: round(ms / 1000), longestStepMs: round(ms), loopDelayMaxMs: round(ms) };
}

/** A step per turn (setImmediate), as SpoolReplica.restorePayloads runs it. */
async function scanStepped(engine, store) {
  const monitor = monitorEventLoopDelay({ resolution: 10 });
  monitor.enable();
  const recovery = new HeldPayloadRecovery(engine, store);
  const startMs = performance.now();
  let longest = 0;
  for (;;) {
    const stepStartMs = performance.now();
    const done = recovery.step();
    longest = Math.max(longest, performance.now() - stepStartMs);
    if (done) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  const ms = performance.now() - startMs;
  monitor.disable();
  const loopDelayMaxMs = monitor.max / 1e6;
  return { recovered: recovery.taken, scanS: round(ms / 1000), longestStepMs: round(longest), loopDelayMaxMs: round(loopDelayMaxMs) };
}

const round = (value) => Math.round(value * 100) / 100;
