// The background scrub: it reads every live record from the file (not the cache), bounded per
// tick, finds a flipped bit that no read has met yet, drops that message's location (the
// message reads unavailable and is fetched) and reports it once; it paces itself on the clock
// and starts over after a restore replaces the engine.

import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PAYLOAD_MISSING, SpoolEngine, resolveSettings } from '@spoolmq/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PayloadScrubber,
  SCRUB_BYTES_PER_TICK,
  SCRUB_RECORDS_PER_TICK,
  SCRUB_REST_MS,
  SCRUB_TICK_MS_FIRST,
  SCRUB_VISITS_PER_TICK,
  type ScrubFinding,
} from '../../src/cluster/payload-scrub.js';
import { ManualClock } from '@spoolmq/protocol';
import { PayloadCache } from '../../src/store/payload-cache.js';
import { RECORD_HEADER_BYTES } from '../../src/store/segment-record.js';
import { SegmentStore } from '../../src/store/segment-store.js';

let dir: string;
let store: SegmentStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mq-scrub-'));
  // A cache large enough to hold everything: the scrub must read the file regardless.
  store = SegmentStore.open({ dir, cache: new PayloadCache(1 << 30), segmentBytesMax: 1 << 26 });
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Queues `a` and `b` with `count` messages each of `bytes` bytes. */
function engineWith(count: number, bytes: number): SpoolEngine {
  const engine = SpoolEngine.over(store);
  const settings = resolveSettings({}, engine.plan);
  if (settings instanceof Error) throw settings;
  for (const name of ['a', 'b']) {
    engine.apply({ type: 'createQueue', name, settings }, 1);
    const queueGen = engine.queue(name)!.gen;
    for (let i = 0; i < count; i++) {
      const payload = new Uint8Array(bytes).fill(i & 0xff);
      engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload }, 1);
    }
  }
  // As the replica does after a run of applies: the records reach the file.
  store.flush();
  return engine;
}

/** Flips one payload bit of message `seq` in queue `name` in its segment file. */
function flipBit(engine: SpoolEngine, name: string, seq: number): void {
  const location = engine.queue(name)!.order.find(seq)!.location;
  const no = Math.floor(location / 2 ** 32);
  const at = location - no * 2 ** 32 + RECORD_HEADER_BYTES + 1;
  const fd = openSync(join(dir, `${no.toString(16).padStart(8, '0')}.seg`), 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, at);
  byte[0]! ^= 0x08;
  writeSync(fd, byte, 0, 1, at);
  closeSync(fd);
}

function scrubberOf(engine: () => SpoolEngine, clock = new ManualClock()) {
  const found: ScrubFinding[] = [];
  const scrubber = new PayloadScrubber({
    group: 'spool:default#1',
    clock,
    engine,
    store,
    closed: () => false,
    found: (finding) => found.push(finding),
  });
  return { scrubber, found, clock };
}

describe('PayloadScrubber', () => {
  it('finds a flipped bit the cache hides, drops that location once, and reports it', () => {
    const engine = engineWith(50, 1000);
    const seq = 60; // queue b holds seqs 51 to 100
    flipBit(engine, 'b', seq);
    const message = engine.queue('b')!.order.find(seq)!;
    expect(engine.payloadOf(message)[1]).toBe(seq - 51); // the cache still serves good bytes
    const { scrubber, found } = scrubberOf(() => engine);
    expect(scrubber.tick()).toBe(true);
    expect(scrubber.scrubbed).toBe(100);
    expect(found).toEqual([
      { group: 'spool:default#1', queue: 'b', seq, problem: expect.stringMatching(/checksum mismatch/) },
    ]);
    expect(message.location).toBe(PAYLOAD_MISSING);
    expect(engine.missingPayloadCount).toBe(1);
    expect(engine.queueCounts(engine.queue('b')!, 1).unavailable).toBe(1);
    // The next pass skips the missing one and finds nothing new.
    expect(scrubber.tick()).toBe(true);
    expect([scrubber.scrubbed, scrubber.bad, scrubber.passes]).toEqual([199, 1, 2]);
  });

  it('reads at most its bounds per tick and resumes where it stopped, across queues', () => {
    const bytes = 64 * 1024;
    const count = Math.ceil((SCRUB_BYTES_PER_TICK * 1.5) / bytes / 2) + 1; // 1.5 ticks in all
    const engine = engineWith(count, bytes);
    flipBit(engine, 'a', 1);
    flipBit(engine, 'b', 2 * count);
    const { scrubber, found } = scrubberOf(() => engine);
    expect(scrubber.tick()).toBe(false);
    expect(scrubber.scrubbed).toBe(SCRUB_BYTES_PER_TICK / bytes);
    expect(scrubber.tick()).toBe(true);
    expect(scrubber.scrubbed).toBe(2 * count);
    expect(found.map((f) => [f.queue, f.seq])).toEqual([['a', 1], ['b', 2 * count]]);
  });

  it('reads at most its record bound per tick when records are small', () => {
    const count = (SCRUB_RECORDS_PER_TICK * 3) / 4; // 1.5 ticks of records in all
    const engine = engineWith(count, 8);
    const { scrubber } = scrubberOf(() => engine);
    expect(scrubber.tick()).toBe(false);
    expect(scrubber.scrubbed).toBe(SCRUB_RECORDS_PER_TICK);
    expect(scrubber.tick()).toBe(true);
    expect(scrubber.scrubbed).toBe(2 * count);
  });

  it('visits at most its message bound per tick, payloads here or not (a rebuilding replica)', () => {
    const count = (SCRUB_VISITS_PER_TICK * 3) / 4; // 1.5 ticks of visits in all
    const engine = engineWith(count, 1);
    // Most messages lack their payload here (as after a snapshot install): never read, yet
    // walked past; only the last of each queue is held.
    for (const name of ['a', 'b']) {
      const queue = engine.queue(name)!;
      const messages = queue.order.liveMessages();
      for (const message of messages.slice(0, -1)) engine.dropPayload(queue, message);
    }
    const { scrubber } = scrubberOf(() => engine);
    expect(scrubber.tick()).toBe(false);
    expect(scrubber.scrubbed).toBe(1); // queue a's last: the bound ended the tick before b's
    expect(scrubber.tick()).toBe(true);
    expect(scrubber.scrubbed).toBe(2);
  });

  it('paces itself on the clock: a tick soon after start, then a rest between passes', async () => {
    const engine = engineWith(3, 10);
    const { scrubber, clock } = scrubberOf(() => engine);
    scrubber.start();
    await clock.advance(SCRUB_TICK_MS_FIRST - 1);
    expect(scrubber.passes).toBe(0);
    await clock.advance(1);
    expect([scrubber.passes, scrubber.scrubbed]).toEqual([1, 6]);
    await clock.advance(SCRUB_REST_MS - 1);
    expect(scrubber.passes).toBe(1);
    await clock.advance(1);
    expect(scrubber.passes).toBe(2);
    scrubber.stop();
    expect(clock.pendingTimers).toBe(0);
  });

  it('starts its pass over when a restore replaced the engine', () => {
    const bytes = 64 * 1024;
    const first = engineWith((SCRUB_BYTES_PER_TICK / bytes) * 0.75, bytes); // 1.5 ticks
    let engine = first;
    const { scrubber } = scrubberOf(() => engine);
    expect(scrubber.tick()).toBe(false); // stopped in queue b
    engine = SpoolEngine.fromSnapshot(first.snapshot(), undefined, store);
    expect(scrubber.tick()).toBe(false); // from queue a's start again
    expect(scrubber.tick()).toBe(true);
    expect(scrubber.passes).toBe(1);
  });
});
