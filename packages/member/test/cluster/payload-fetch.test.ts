import { describe, expect, it } from 'vitest';
import { MemoryPayloadStore, PayloadError, SpoolEngine, Where, resolveSettings } from '@spoolmq/engine';
import {
  FETCH_CHUNK_BYTES,
  FETCH_ITEMS_MAX,
  FETCH_RETRY_MS_MAX,
  FETCH_RETRY_MS_MIN,
  FETCH_WINDOW,
  type FetchHost,
  UNREPAIRED_PASSES,
  PayloadFetcher,
  type UnrepairedPayload,
  checkFetchAnswer,
  servePayloadChunks,
} from '../../src/cluster/payload-fetch.js';
import {
  PAYLOAD_ITEMS_MAX,
  decodeAdminAnswer,
  decodeAdminStep,
  encodeAdminAnswer,
  encodeAdminStep,
  ManualClock,
  settle,
} from '@spoolmq/protocol';
import { payloadChecksum } from '../../src/store/segment-record.js';

const T0 = 1_800_000_000_000;

function engineWith(count: number, bytes: number): SpoolEngine {
  const engine = SpoolEngine.over(new MemoryPayloadStore());
  const settings = resolveSettings({}, engine.plan);
  if (settings instanceof Error) throw settings;
  engine.apply({ type: 'createQueue', name: 'q', settings }, T0);
  const queueGen = engine.queue('q')!.gen;
  for (let i = 0; i < count; i++) {
    const payload = new Uint8Array(bytes).fill(i);
    engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload }, T0);
  }
  return engine;
}

describe('servePayloadChunks', () => {
  it('answers at most one chunk of bytes however much is asked, from each offset', () => {
    const engine = engineWith(10, 300 * 1024); // 3 MiB asked
    const gen = engine.queue('q')!.gen;
    const items = Array.from({ length: 10 }, (_, i) => [gen, i + 1, i === 0 ? 1000 : 0] as const);
    const { chunks, sums, missing } = servePayloadChunks(engine, items);
    expect(missing).toEqual([]);
    expect(sums[0]).toBe(payloadChecksum(1, engine.payloadOf(engine.queue('q')!.order.find(1)!)));
    expect(sums.slice(2)).toEqual(Array(8).fill(null));
    const sizes = chunks.map((c) => (c === null ? 0 : c.byteLength));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(FETCH_CHUNK_BYTES);
    expect(sizes[0]).toBe(300 * 1024 - 1000);
    expect(sizes[1]).toBe(FETCH_CHUNK_BYTES - sizes[0]!);
    expect(chunks.slice(2)).toEqual(Array(8).fill(null));
    expect(chunks[1]![0]).toBe(1);
  });

  it('names as missing the messages it holds without a good copy; of others it cannot tell', () => {
    const engine = engineWith(2, 10);
    const gen = engine.queue('q')!.gen;
    engine.dropPayload(engine.queue('q')!, engine.queue('q')!.order.find(2)!);
    const answer = servePayloadChunks(engine, [[gen, 3, 0], [gen + 1, 1, 0], [gen, 2, 0], [gen, 1, 0]]);
    expect(answer.chunks).toEqual([null, null, null, new Uint8Array(10)]);
    // 3 and queue gen+1 are not held here (behind, or removed already): neither served nor missing.
    expect(answer.missing).toEqual([2]);
    expect(answer.sums[3]).toBe(payloadChecksum(1, new Uint8Array(10)));
  });
});

// The items of a fetch request are checked as they are decoded: see the protocol package's
// admin-steps test (at most PAYLOAD_ITEMS_MAX = FETCH_ITEMS_MAX items, three integers each).
it('fetches at most as many items as the wire carries', () => {
  expect(FETCH_ITEMS_MAX).toBe(PAYLOAD_ITEMS_MAX);
});

describe('servePayloadChunks over a bad copy', () => {
  it('names it missing and drops its location, so the serving replica repairs it too', () => {
    class BadStore extends MemoryPayloadStore {
      override read(seq: number, location: number, byteLength: number): Uint8Array {
        if (seq === 1) throw new PayloadError(seq, 'checksum mismatch');
        return super.read(seq, location, byteLength);
      }
    }
    const engine = SpoolEngine.over(new BadStore());
    const settings = resolveSettings({}, engine.plan);
    if (settings instanceof Error) throw settings;
    engine.apply({ type: 'createQueue', name: 'q', settings }, T0);
    const queueGen = engine.queue('q')!.gen;
    for (let i = 0; i < 2; i++) {
      engine.apply({ type: 'send', queueGen, delayMs: 0, dedupKey: null, payload: new Uint8Array(5) }, T0);
    }
    const answer = servePayloadChunks(engine, [[queueGen, 1, 0], [queueGen, 2, 0]]);
    expect(answer.missing).toEqual([0]);
    expect(answer.chunks[1]).toEqual(new Uint8Array(5));
    expect(engine.missingPayloadCount).toBe(1);
  });
});

describe('checkFetchAnswer', () => {
  it('takes chunks with their checksums and the missing indexes; refuses anything else', () => {
    const chunk = new Uint8Array([0]);
    const good = { chunks: [chunk, null], sums: [7, null], missing: [1] };
    expect(checkFetchAnswer(good, 2)).toEqual(good);
    expect(checkFetchAnswer(good, 3)).toBeNull();
    expect(checkFetchAnswer({ chunks: [chunk], sums: [], missing: [] }, 1)).toBeNull(); // no checksums
    expect(checkFetchAnswer({ chunks: [chunk], sums: [null], missing: [] }, 1)).toBeNull();
    expect(checkFetchAnswer({ chunks: [null], sums: [3], missing: [] }, 1)).toBeNull();
    expect(checkFetchAnswer({ chunks: [null], sums: [null], missing: [1] }, 1)).toBeNull();
  });
});

/** A fetching replica (engine with messages 1..n, payloads [i] * bytes, some dropped) and peers. */
function fetching(peers: Record<string, SpoolEngine | 'down'>, lost: number[]) {
  const engine = engineWith(4, 300 * 1024);
  const queue = engine.queue('q')!;
  const clock = new ManualClock();
  for (const seq of lost) engine.dropPayload(queue, queue.order.find(seq)!);
  const unrepaired: UnrepairedPayload[] = [];
  const filled: number[] = [];
  const calls: string[] = [];
  const tamper = { on: false, grow: false };
  const scan = { recovering: false };
  const host: FetchHost = {
    group: 'spool:default#1',
    clock,
    engine: () => engine,
    sources: () => Object.keys(peers),
    fetch: async (member, items) => {
      calls.push(member);
      const peer = peers[member]!;
      if (peer === 'down') throw new Error('unreachable');
      // Through the wire codec both ways, as between members.
      const step = decodeAdminStep(encodeAdminStep({ op: 'payloads', group: 'spool:default#1', items }));
      if (step.op !== 'payloads') throw new Error('not a payload fetch');
      const served = servePayloadChunks(peer, step.items);
      const answer = decodeAdminAnswer('payloads', encodeAdminAnswer('payloads', { answer: served }));
      // A growing peer sends more than asked; a tampering one flips a byte of each chunk.
      const chunks = answer.chunks.map((c) => {
        if (c === null) return c;
        const bytes = tamper.grow ? Buffer.concat([c, Buffer.alloc(400 * 1024)]) : Buffer.from(c);
        if (tamper.on) bytes[0]! ^= 1;
        return bytes;
      });
      return { ...answer, chunks };
    },
    closed: () => false,
    recovering: () => scan.recovering,
    filled: (queueGen) => filled.push(queueGen),
    unrepaired: (report) => unrepaired.push(report),
  };
  const fetcher = new PayloadFetcher(host);
  return { engine, queue, clock, fetcher, unrepaired, filled, calls, tamper, scan };
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !condition(); i++) await settle();
  expect(condition()).toBe(true);
}

/** Lets the fetcher finish `count` passes: each time it pauses, the pause is let run out. */
async function passes(clock: ManualClock, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await until(() => clock.pendingTimers > 0);
    await clock.advance(FETCH_RETRY_MS_MAX);
  }
}

describe('PayloadFetcher', () => {
  it('fetches a dropped payload from the first peer that has it, in chunks, and puts the message back', async () => {
    const good = engineWith(4, 300 * 1024);
    const lacking = engineWith(4, 300 * 1024);
    lacking.dropPayload(lacking.queue('q')!, lacking.queue('q')!.order.find(2)!);
    const { engine, queue, fetcher, filled, unrepaired } = fetching({ n2: lacking, n3: good }, [2, 3]);
    const two = queue.order.find(2)!;
    engine.receive(queue, 0); // 1
    expect(engine.receive(queue, 0)).not.toBe(two); // 2 and 3 are held back: 4
    expect(two.where).toBe(Where.Unavailable);
    fetcher.kick();
    await until(() => engine.missingPayloadCount === 0);
    // Compared as bytes: a payload that came whole in one chunk is stored as the chunk (a Buffer).
    expect(new Uint8Array(engine.payloadOf(two))).toEqual(new Uint8Array(300 * 1024).fill(1));
    const three = engine.payloadOf(queue.order.find(3)!);
    expect(new Uint8Array(three)).toEqual(new Uint8Array(300 * 1024).fill(2));
    expect(two.where).toBe(Where.Ready);
    expect(fetcher.fetched).toBe(2);
    expect(filled).toEqual([queue.gen, queue.gen]);
    expect(unrepaired).toEqual([]);
  });

  it('rejects bytes that do not match their checksum and never stores them', async () => {
    const { engine, fetcher, tamper, clock } = fetching({ n2: engineWith(4, 300 * 1024) }, [2]);
    tamper.on = true;
    fetcher.kick();
    await until(() => fetcher.rejected > 0);
    expect(engine.missingPayloadCount).toBe(1);
    tamper.on = false;
    await clock.advance(FETCH_RETRY_MS_MIN);
    await until(() => engine.missingPayloadCount === 0);
    const two = engine.payloadOf(engine.queue('q')!.order.find(2)!);
    expect(new Uint8Array(two)).toEqual(new Uint8Array(300 * 1024).fill(1));
  });

  it('reports a payload no peer has once, backs off on the clock, and takes it when a peer comes back', async () => {
    const peers: Record<string, SpoolEngine | 'down'> = {};
    const { engine, fetcher, unrepaired, clock, calls } = fetching(peers, [3]);
    fetcher.kick();
    // Reported only after UNREPAIRED_PASSES passes in a row: not after the first.
    await until(() => clock.pendingTimers > 0);
    expect(unrepaired).toEqual([]);
    await passes(clock, UNREPAIRED_PASSES - 1);
    await until(() => unrepaired.length === 1);
    expect(unrepaired[0]).toEqual({ group: 'spool:default#1', queue: 'q', seq: 3, asked: 0 });
    expect(fetcher.unrepairedCount).toBe(1);
    // Retries double up to the bound, never reporting again.
    await clock.advance(FETCH_RETRY_MS_MAX * 4);
    expect(unrepaired).toHaveLength(1);
    expect(calls).toEqual([]);
    // A replica that lacks it too: reported by nobody again; one that is down: not counted.
    peers['n2'] = engineWith(4, 300 * 1024);
    peers['n3'] = 'down';
    await clock.advance(FETCH_RETRY_MS_MAX);
    await until(() => engine.missingPayloadCount === 0);
    expect(fetcher.unrepairedCount).toBe(0);
    expect(unrepaired).toHaveLength(1);
  });

  it('a chunk that is not the piece asked for is rejected, and the pass does not spin on it', async () => {
    const { engine, fetcher, tamper, clock, calls } = fetching({ n2: engineWith(4, 300 * 1024) }, [2]);
    tamper.grow = true;
    fetcher.kick();
    await until(() => fetcher.rejected > 0);
    await clock.advance(0);
    expect(calls.length).toBeLessThanOrEqual(2);
    expect(engine.missingPayloadCount).toBe(1);
    tamper.grow = false;
    await clock.advance(FETCH_RETRY_MS_MIN);
    await until(() => engine.missingPayloadCount === 0);
  });

  it('a kick ends the pause at once: a payload lost while the fetcher backs off is fetched now', async () => {
    const peers: Record<string, SpoolEngine | 'down'> = {};
    const { engine, queue, fetcher, unrepaired, clock } = fetching(peers, [3]);
    fetcher.kick();
    await passes(clock, UNREPAIRED_PASSES - 1);
    await until(() => unrepaired.length === 1);
    // Backing off (no clock advance from here): a peer appears and another payload is lost.
    peers['n2'] = engineWith(4, 300 * 1024);
    engine.dropPayload(queue, queue.order.find(4)!);
    fetcher.kick();
    await until(() => engine.missingPayloadCount === 0);
    expect(fetcher.fetched).toBe(2);
  });

  it('with every peer answering that it lacks the payload, reports how many were asked', async () => {
    const lacking = engineWith(4, 300 * 1024);
    lacking.dropPayload(lacking.queue('q')!, lacking.queue('q')!.order.find(1)!);
    const { fetcher, unrepaired, clock } = fetching({ n2: lacking, n3: lacking }, [1]);
    fetcher.kick();
    await passes(clock, UNREPAIRED_PASSES - 1);
    await until(() => unrepaired.length === 1);
    expect(unrepaired[0]).toMatchObject({ seq: 1, asked: 2 });
  });

  it('never reports a payload the peers do not hold at all (behind, or its removal applied there)', async () => {
    const removed = engineWith(4, 300 * 1024);
    const queue = removed.queue('q')!;
    const two = queue.order.find(2)!;
    removed.apply({ type: 'discard', queueGen: queue.gen, seq: two.seq, gen: two.gen }, T0);
    const { engine, fetcher, unrepaired, clock } = fetching({ n2: removed, n3: removed }, [2]);
    fetcher.kick();
    await passes(clock, UNREPAIRED_PASSES * 2);
    expect(unrepaired).toEqual([]);
    expect(engine.missingPayloadCount).toBe(1);
  });
});

describe('PayloadFetcher window', () => {
  /** 40 payloads of 200 KiB dropped here; peers answer only when `release` is called. */
  function gated() {
    const engine = engineWith(40, 200 * 1024);
    const queue = engine.queue('q')!;
    for (const message of queue.order.liveMessages()) engine.dropPayload(queue, message);
    const peers: Record<string, SpoolEngine> = { n2: engineWith(40, 200 * 1024), n3: engineWith(40, 200 * 1024) };
    const waiting: (() => void)[] = [];
    const asked: string[] = [];
    let inFlight = 0;
    let inFlightMax = 0;
    const host: FetchHost = {
      group: 'spool:default#1',
      clock: new ManualClock(),
      engine: () => engine,
      sources: () => Object.keys(peers),
      fetch: async (member, items) => {
        asked.push(member);
        inFlightMax = Math.max(inFlightMax, ++inFlight);
        await new Promise<void>((resolve) => waiting.push(resolve));
        inFlight--;
        return servePayloadChunks(peers[member]!, items);
      },
      closed: () => false,
      recovering: () => false,
      filled: () => {},
      unrepaired: () => {},
    };
    const release = (): void => waiting.splice(0).forEach((resolve) => resolve());
    return { engine, queue, fetcher: new PayloadFetcher(host), waiting, asked, release, max: () => inFlightMax };
  }

  it('keeps FETCH_WINDOW calls in flight, spread over the replicas, and never more', async () => {
    const { engine, queue, fetcher, waiting, asked, release, max } = gated();
    fetcher.kick();
    await until(() => waiting.length === FETCH_WINDOW);
    // Lanes start at different sources: both replicas are asked at once.
    expect(new Set(asked)).toEqual(new Set(['n2', 'n3']));
    for (let i = 0; i < 200 && engine.missingPayloadCount > 0; i++) {
      await until(() => waiting.length > 0 || engine.missingPayloadCount === 0);
      release();
    }
    await until(() => engine.missingPayloadCount === 0);
    expect(max()).toBe(FETCH_WINDOW);
    expect(fetcher.fetched).toBe(40);
    for (const message of queue.order.liveMessages()) {
      const expected = new Uint8Array(200 * 1024).fill(message.seq - 1);
      expect(Buffer.from(engine.payloadOf(message)).equals(expected)).toBe(true);
    }
  });
});

describe('PayloadFetcher with a replica down', () => {
  it('asks it last once a call to it failed in the pass: lanes do not wait on it each call', async () => {
    const engine = engineWith(40, 200 * 1024);
    const queue = engine.queue('q')!;
    for (const message of queue.order.liveMessages()) engine.dropPayload(queue, message);
    const good = engineWith(40, 200 * 1024);
    const calls: string[] = [];
    const host: FetchHost = {
      group: 'spool:default#1',
      clock: new ManualClock(),
      engine: () => engine,
      sources: () => ['n2', 'n3'],
      fetch: async (member, items) => {
        calls.push(member);
        if (member === 'n2') throw new Error('unreachable');
        return servePayloadChunks(good, items);
      },
      closed: () => false,
      recovering: () => false,
      filled: () => {},
      unrepaired: () => {},
    };
    const fetcher = new PayloadFetcher(host);
    fetcher.kick();
    await until(() => engine.missingPayloadCount === 0);
    // Lanes 0 and 2 start at n2, both before either call failed; none asks it after that.
    expect(calls.filter((member) => member === 'n2')).toHaveLength(2);
    expect(calls.filter((member) => member === 'n3').length).toBeGreaterThan(10);
    expect(fetcher.fetched).toBe(40);
  });
});

describe('PayloadFetcher while the replica scans its own store', () => {
  it('asks nobody until the scan is done, then fetches what is still missing', async () => {
    const { engine, fetcher, calls, scan } = fetching({ n2: engineWith(4, 300 * 1024) }, [1, 3]);
    scan.recovering = true;
    fetcher.kick();
    for (let i = 0; i < 20; i++) await settle();
    expect(calls).toEqual([]);
    scan.recovering = false;
    fetcher.kick();
    await until(() => engine.missingPayloadCount === 0);
    expect(calls.length).toBeGreaterThan(0);
  });
});
