// A replica can lack payloads of messages it holds: it restored another replica's snapshot
// (snapshots carry metadata only), or a payload failed its checksum when read here and its
// location was dropped (the message reads `unavailable` meanwhile: receive skips it). It fetches
// them from the other replicas of the group in bounded chunks, over the members' call link
// (mutual TLS, members only), checks them, and stores them in its own payload store; a message
// held back as unavailable then returns to its place. A message removed meanwhile (an entry
// applied after the snapshot) is simply not fetched any more.
//
// Wire form (the `payloads` admin step, @spoolmq/protocol admin-steps.ts): the request names
// the group and items (queueGen, seq, offset); the answer holds, per item, the bytes of its
// payload from its offset, at most FETCH_CHUNK_BYTES in all (none past that budget: ask again),
// with the payload's checksum (segment-record.ts payloadChecksum: every replica computes it
// alike from the payload as logged) beside each chunk, and the indexes of the items whose
// message the answering replica holds without a good copy of its payload (it lacks it or cannot
// read it either). A message it does not hold (it is behind, or already applied the message's
// removal) is neither served nor missing: it cannot tell. A payload is stored only when its
// bytes match the checksum of every chunk.
//
// Concurrency, bounded: a pass runs FETCH_WINDOW lanes over one shared walk of the missing
// payloads. Each lane has one call in flight at a time and asks the sources in its own order
// (lane k starts at source k, so the window spreads over the replicas), so a replica has at most
// FETCH_WINDOW calls out, and holds at most FETCH_WINDOW answers of FETCH_CHUNK_BYTES per source
// asked, plus the payloads of those answers still arriving in chunks (each carried on by the lane
// that began it: its chunks come in order, one call after another). One call at a time left the
// link idle for each round trip and each serve: a rebuild ran at 2-4 MiB/s (issue 13). A pass
// that completes nothing waits before the next, doubling from FETCH_RETRY_MS_MIN to
// FETCH_RETRY_MS_MAX, on the injected clock. A payload that every replica asked reports missing
// in UNREPAIRED_PASSES passes in a row (or that has no replica to ask: a single-replica spool)
// is reported once as unrepaired; it stays unavailable and is asked for again at the slow pace,
// as a replica may come back. (The passes in a row keep a replica that is itself still fetching
// the payload from raising a false alarm.)

import { type MessageCursor, PAYLOAD_MISSING, type SpoolEngine, assert } from '@spoolmq/engine';
import {
  PAYLOAD_ITEMS_MAX,
  type PayloadChunks,
  type PayloadItem,
  type Clock,
} from '@spoolmq/protocol';
import { payloadChecksum } from '../store/segment-record.js';

/** Payload bytes one fetch answer carries at most (well under the 1 MiB call cap). */
export const FETCH_CHUNK_BYTES = 512 * 1024;
/** Fetch calls one replica keeps in flight at most (its lanes; see the file comment). */
export const FETCH_WINDOW = 4;
/** Messages one fetch names at most (the wire's bound). */
export const FETCH_ITEMS_MAX = PAYLOAD_ITEMS_MAX;
/** First pause after a pass that completed nothing, ms; doubled up to FETCH_RETRY_MS_MAX. */
export const FETCH_RETRY_MS_MIN = 100;
export const FETCH_RETRY_MS_MAX = 30_000;
/** Passes in a row in which every replica lacked a payload before it is reported unrepaired. */
export const UNREPAIRED_PASSES = 3;

/** One replica's answer to a fetch (see the wire form above). */
export type FetchAnswer = PayloadChunks;

/** A payload no replica could give a good copy of: it stays unavailable here. */
export interface UnrepairedPayload {
  readonly group: string;
  readonly queue: string;
  readonly seq: number;
  /** Replicas asked (0: the group has no other replica). */
  readonly asked: number;
}

/** What the fetcher needs of its replica. */
export interface FetchHost {
  readonly group: string;
  readonly clock: Clock;
  /** The current engine (a later restore replaces it; the fetcher starts over then). */
  engine(): SpoolEngine;
  /** Members to ask, best first (the leader, then the other voters). */
  sources(): readonly string[];
  /** Asks `member` for chunks of `items` of this group; rejects when it cannot answer. */
  fetch(member: string, items: readonly PayloadItem[]): Promise<FetchAnswer>;
  closed(): boolean;
  /**
   * The replica is still looking for the payloads in its own store (after a restore): the
   * fetcher stops, and is kicked again once that scan is done.
   */
  recovering(): boolean;
  /** Payloads of queue `queueGen` were stored (unavailable messages may be visible again). */
  filled(queueGen: number): void;
  /** Told once per payload found unrepairable (until it is repaired or removed). */
  unrepaired(report: UnrepairedPayload): void;
}

/**
 * The answer to a fetch: each item's payload bytes from its offset, `budgetBytes` in all (items
 * past the budget answer null, and are asked again), with the payload's checksum beside each
 * chunk, and the items this replica cannot serve. A payload whose read fails here loses its
 * location (engine.dropPayload).
 */
export function servePayloadChunks(
  engine: SpoolEngine,
  items: readonly PayloadItem[],
  budgetBytes = FETCH_CHUNK_BYTES,
): FetchAnswer {
  const chunks: (Uint8Array | null)[] = [];
  const sums: (number | null)[] = [];
  const missing: number[] = [];
  let remaining = budgetBytes;
  items.forEach(([queueGen, seq, offset], index) => {
    chunks.push(null);
    sums.push(null);
    const queue = engine.queueByGen(queueGen);
    const message = queue === undefined ? undefined : engine.message(queue, seq);
    // Not held here (behind, or removed): cannot tell.
    if (queue === undefined || message === undefined) return;
    if (message.location === PAYLOAD_MISSING) {
      missing.push(index);
      return;
    }
    if (remaining <= 0) return;
    let payload: Uint8Array;
    try {
      payload = engine.payloadOf(message);
    } catch {
      // Unreadable here too: another replica may have it. This replica drops its bad copy, so
      // it fetches a good one itself (the caller sees missingPayloads grow).
      engine.dropPayload(queue, message);
      missing.push(index);
      return;
    }
    const end = Math.min(payload.byteLength, offset + remaining);
    const chunk = payload.subarray(Math.min(offset, end), end);
    remaining -= chunk.byteLength;
    // A view is enough: a payload read is never written to (a cached one included), and the
    // answer's encoding copies it once.
    chunks[index] = chunk;
    sums[index] = payloadChecksum(seq, payload);
  });
  return { chunks, sums, missing };
}

/**
 * A decoded fetch answer checked against the `count` items asked: a chunk and a checksum for
 * each (both absent when not served), missing indexes in range. Null when it does not fit.
 */
export function checkFetchAnswer(answer: FetchAnswer, count: number): FetchAnswer | null {
  const { chunks, sums, missing } = answer;
  if (chunks.length !== count || sums.length !== count) return null;
  for (let i = 0; i < count; i++) {
    if ((chunks[i] === null) !== (sums[i] === null)) return null;
  }
  if (!missing.every((i) => Number.isInteger(i) && i >= 0 && i < count)) return null;
  return answer;
}

interface Partial {
  readonly bytes: Uint8Array;
  filled: number;
  /** The checksum the chunks so far came with. */
  readonly sum: number;
}

/** A pass's walk over the missing payloads, which its lanes share. */
interface PassWalk {
  readonly engine: SpoolEngine;
  readonly cursor: MessageCursor;
  /** Whether any payload arrived (or the pass should start over at once). */
  progress: boolean;
  /** Sources a call to failed in this pass (asked last from then on). */
  readonly failed: Set<string>;
}

/** What one call asked of the sources, for each item: its chunk, or how many lacked it. */
interface Gathered {
  readonly chunks: (Uint8Array | null)[];
  readonly sums: (number | null)[];
  readonly lacking: number[];
  readonly asked: number;
}

export class PayloadFetcher {
  private running = false;
  /** Payloads arriving in several chunks, by seq, for the engine `partialsOf`. */
  private readonly partials = new Map<number, Partial>();
  private partialsOf: SpoolEngine | null = null;
  /** Seqs reported unrepaired (each once), until repaired or removed. */
  private readonly reported = new Set<number>();
  /** Passes in a row in which every source lacked the payload, by seq (not yet reported). */
  private readonly lackingPasses = new Map<number, number>();
  private retryMs = FETCH_RETRY_MS_MIN;
  /** Ends the pause between passes early (a kick: something new went missing). */
  private wake: (() => void) | null = null;
  fetched = 0;
  /** Fetched bytes that did not match their checksum (dropped; asked again). */
  rejected = 0;

  constructor(private readonly host: FetchHost) {}

  /** Payloads reported unrepaired and still missing here. */
  get unrepairedCount(): number {
    return this.reported.size;
  }

  /**
   * Starts fetching unless it runs already (a pause between passes ends now, and the backoff
   * starts over); it stops once nothing is missing.
   */
  kick(): void {
    this.retryMs = FETCH_RETRY_MS_MIN;
    this.wake?.();
    if (this.running) return;
    this.running = true;
    void this.run().finally(() => {
      this.running = false;
    });
  }

  private async run(): Promise<void> {
    for (;;) {
      const { host } = this;
      if (host.closed() || host.recovering() || host.engine().missingPayloadCount === 0) break;
      const progress = await this.pass();
      if (progress) {
        this.retryMs = FETCH_RETRY_MS_MIN;
        continue;
      }
      const retryMs = this.retryMs;
      this.retryMs = Math.min(retryMs * 2, FETCH_RETRY_MS_MAX);
      await this.pause(retryMs);
    }
    this.partials.clear();
    this.reported.clear();
    this.lackingPasses.clear();
  }

  /** One walk over the missing payloads, by FETCH_WINDOW lanes; true when any arrived. */
  private async pass(): Promise<boolean> {
    const engine = this.host.engine();
    if (this.partialsOf !== engine) {
      this.partials.clear();
      this.reported.clear();
      this.lackingPasses.clear();
    }
    this.partialsOf = engine;
    this.forgetSettled(engine);
    const cursor = { queueGen: 0, seq: 0 };
    const walk: PassWalk = { engine, cursor, progress: false, failed: new Set() };
    const lanes = Array.from({ length: FETCH_WINDOW }, (_, lane) => this.lane(walk, lane));
    await Promise.all(lanes);
    return walk.progress;
  }

  /**
   * One lane of a pass: asks for the next missing payloads of the shared walk, one call at a
   * time, until the walk is done. A payload still arriving in chunks stays with this lane (its
   * next chunk starts where the last ended) and is asked for first in the lane's next call.
   */
  private async lane(walk: PassWalk, lane: number): Promise<void> {
    const { engine } = walk;
    let carried: PayloadItem[] = [];
    for (;;) {
      const { host } = this;
      if (host.closed() || host.recovering() || host.engine() !== engine) {
        walk.progress = true; // start over at once (the run loop checks why)
        return;
      }
      const items = this.collect(engine, walk.cursor, carried);
      if (items.length === 0) return;
      const gathered = await this.gather(walk, items, lane);
      if (this.host.engine() !== engine) return;
      if (this.take(engine, items, gathered)) walk.progress = true;
      this.noteUnrepaired(engine, items, gathered);
      carried = [];
      items.forEach(([queueGen, seq], i) => {
        const partial = this.partials.get(seq);
        if (partial !== undefined && gathered.chunks[i]) {
          carried.push([queueGen, seq, partial.filled]);
        }
      });
    }
  }

  /** Drops what is known of payloads no longer missing (repaired, or their message removed). */
  private forgetSettled(engine: SpoolEngine): void {
    for (const seq of this.reported) {
      if (!isMissing(engine, seq)) this.reported.delete(seq);
    }
    for (const seq of this.lackingPasses.keys()) {
      if (!isMissing(engine, seq)) this.lackingPasses.delete(seq);
    }
  }

  /**
   * The `carried` payloads, then the next missing payloads after `cursor` (moved past them):
   * about one chunk's worth in all.
   */
  private collect(
    engine: SpoolEngine,
    cursor: MessageCursor,
    carried: readonly PayloadItem[],
  ): PayloadItem[] {
    const items: PayloadItem[] = [...carried];
    let bytes = 0;
    for (const [queueGen, seq, offset] of carried) {
      bytes += (engine.messageByGen(queueGen, seq)?.byteLength ?? offset) - offset;
    }
    engine.walkMessages(cursor, (queue, message) => {
      if (items.length >= FETCH_ITEMS_MAX || bytes >= FETCH_CHUNK_BYTES) return false;
      if (message.location !== PAYLOAD_MISSING) return true;
      const offset = this.partials.get(message.seq)?.filled ?? 0;
      items.push([queue.gen, message.seq, offset]);
      bytes += message.byteLength - offset;
      return true;
    });
    return items;
  }

  /**
   * Asks the sources in turn (see `order`), each for the items no earlier one served: every
   * item's chunk from the first source that has it, and how many sources that answered lack it.
   */
  private async gather(
    walk: PassWalk,
    items: readonly PayloadItem[],
    lane: number,
  ): Promise<Gathered> {
    const chunks: (Uint8Array | null)[] = items.map(() => null);
    const sums: (number | null)[] = items.map(() => null);
    const lacking = items.map(() => 0);
    let asked = 0;
    for (const source of this.order(walk, lane)) {
      const open = items.map((_, i) => i).filter((i) => chunks[i] === null);
      if (open.length === 0) break;
      const asking = open.map((i) => items[i]!);
      let answer: FetchAnswer | null;
      try {
        answer = checkFetchAnswer(await this.host.fetch(source, asking), open.length);
      } catch {
        // That member is unreachable or does not serve the group now: ask the next.
        walk.failed.add(source);
        continue;
      }
      if (answer === null) continue;
      asked++;
      open.forEach((i, k) => {
        chunks[i] = answer.chunks[k]!;
        sums[i] = answer.sums[k]!;
      });
      for (const k of answer.missing) lacking[open[k]!]!++;
    }
    return { chunks, sums, lacking, asked };
  }

  /**
   * The sources lane `lane` asks, in order: starting at source `lane` (lanes spread over the
   * replicas), those that failed a call in this pass last. They are still asked for what no
   * other source served (a pass reports a payload unrepaired only when every source answered),
   * but a lane does not wait for a call to a member that is down before each call that serves.
   */
  private order(walk: PassWalk, lane: number): string[] {
    const sources = this.host.sources();
    const first = sources.length === 0 ? 0 : lane % sources.length;
    const rotated = [...sources.slice(first), ...sources.slice(0, first)];
    const failed = rotated.filter((source) => walk.failed.has(source));
    return [...rotated.filter((source) => !walk.failed.has(source)), ...failed];
  }

  /** Stores what arrived and checks out; true when any payload was completed. */
  private take(engine: SpoolEngine, items: readonly PayloadItem[], gathered: Gathered): boolean {
    let completed = false;
    items.forEach(([queueGen, seq, offset], i) => {
      const chunk = gathered.chunks[i];
      const sum = gathered.sums[i];
      if (chunk === null || chunk === undefined || typeof sum !== 'number') return;
      const message = engine.messageByGen(queueGen, seq);
      if (message === undefined || message.location !== PAYLOAD_MISSING) return;
      const whole = this.assemble(seq, message.byteLength, offset, chunk, sum);
      if (whole === null) return;
      if (payloadChecksum(seq, whole) !== sum) {
        this.rejected++;
        return;
      }
      assert(engine.fillPayload(queueGen, seq, whole), 'a fetched payload fills its gap');
      this.reported.delete(seq);
      this.fetched++;
      this.host.filled(queueGen);
      completed = true;
    });
    return completed;
  }

  /**
   * Adds `chunk` (from `offset`, with checksum `sum`) to payload `seq` of `byteLength` bytes:
   * the whole payload once every chunk is in (the chunk itself when it is the whole payload: no
   * copy), else null (more to come, or the chunk does not fit and the payload starts over).
   */
  private assemble(
    seq: number,
    byteLength: number,
    offset: number,
    chunk: Uint8Array,
    sum: number,
  ): Uint8Array | null {
    let partial = this.partials.get(seq);
    if (partial !== undefined && partial.sum !== sum) {
      // Chunks of copies that disagree: start this payload over.
      this.partials.delete(seq);
      this.rejected++;
      return null;
    }
    const fits = chunk.byteLength > 0 && offset + chunk.byteLength <= byteLength;
    if ((partial?.filled ?? 0) !== offset || !fits) {
      // Not the piece asked for (a buggy or hostile source): start this payload over, so the
      // pass does not ask again at once.
      this.partials.delete(seq);
      this.rejected++;
      return null;
    }
    if (partial === undefined && chunk.byteLength === byteLength) {
      // A plain Uint8Array view (no copy): the decoded chunk may be a Buffer, and a payload
      // handed to consumers is a Uint8Array whatever path stored it.
      return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    }
    if (partial === undefined) {
      partial = { bytes: new Uint8Array(byteLength), filled: 0, sum };
      this.partials.set(seq, partial);
    }
    partial.bytes.set(chunk, offset);
    partial.filled += chunk.byteLength;
    if (partial.filled < byteLength) return null;
    this.partials.delete(seq);
    return partial.bytes;
  }

  /**
   * Reports, once each, the items every source lacked (or that had nobody to ask) in
   * UNREPAIRED_PASSES passes in a row.
   */
  private noteUnrepaired(
    engine: SpoolEngine,
    items: readonly PayloadItem[],
    gathered: Gathered,
  ): void {
    const sourceCount = this.host.sources().length;
    if (gathered.asked < sourceCount) return; // a source did not answer: it may have them
    items.forEach(([queueGen, seq], i) => {
      if (gathered.chunks[i] !== null || gathered.lacking[i] !== gathered.asked) {
        this.lackingPasses.delete(seq);
        return;
      }
      if (this.reported.has(seq)) return;
      const queue = engine.queueByGen(queueGen);
      if (queue === undefined || engine.message(queue, seq)?.location !== PAYLOAD_MISSING) return;
      const passes = (this.lackingPasses.get(seq) ?? 0) + 1;
      if (passes < UNREPAIRED_PASSES) {
        this.lackingPasses.set(seq, passes);
        return;
      }
      this.lackingPasses.delete(seq);
      this.reported.add(seq);
      const { group } = this.host;
      this.host.unrepaired({ group, queue: queue.name, seq, asked: gathered.asked });
    });
  }

  /** Waits `ms` on the host's clock, or until a kick. */
  private pause(ms: number): Promise<void> {
    const clock = this.host.clock;
    return new Promise((resolve) => {
      const timer = clock.setTimer(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        this.wake = null;
        clock.clearTimer(timer);
        resolve();
      };
    });
  }
}

/** Whether a live message `seq` of the spool lacks its payload here. */
function isMissing(engine: SpoolEngine, seq: number): boolean {
  return engine.findMessage(seq)?.location === PAYLOAD_MISSING;
}
