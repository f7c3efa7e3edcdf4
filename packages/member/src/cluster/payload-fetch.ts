// A replica that restored another replica's snapshot holds metadata without payloads (snapshots
// carry none). It fetches them from the other replicas of the group in bounded chunks, over the
// members' call link (mutual TLS, members only), and stores them in its own payload store. Until
// a payload arrives its message reads as 503 unavailable; a message removed meanwhile (an entry
// applied after the snapshot) is simply not fetched any more.
//
// Wire form (JSON, as every member call): request `{ op: 'payloads', group, items: [[queueGen,
// seq, offset], ...] }`; answer `{ chunks: [base64 | null, ...] }`, the bytes of each payload from
// its offset, at most FETCH_CHUNK_BYTES in all, null where the answering replica has none.

import { PAYLOAD_MISSING, type SpoolEngine, assert } from '@spoolmq/engine';

/** Payload bytes one fetch answer carries at most (base64 keeps it under the 1 MiB call cap). */
export const FETCH_CHUNK_BYTES = 512 * 1024;
/** Messages one fetch names at most. */
export const FETCH_ITEMS_MAX = 256;
/** Pause after a pass that fetched nothing (no replica had them yet), ms. */
const FETCH_RETRY_MS = 500;

type Item = readonly [queueGen: number, seq: number, offset: number];

/** What the fetcher needs of its replica. */
export interface FetchHost {
  readonly group: string;
  /** The current engine (a later restore replaces it; the fetcher starts over then). */
  engine(): SpoolEngine;
  /** Members to ask, best first (the leader, then the other voters). */
  sources(): readonly string[];
  call(member: string, request: Record<string, unknown>): Promise<Record<string, unknown>>;
  closed(): boolean;
}

/**
 * The answer to a fetch: each item's payload bytes from its offset, `budgetBytes` in all (items
 * past the budget answer null, and are asked again).
 */
export function servePayloadChunks(
  engine: SpoolEngine,
  items: readonly Item[],
  budgetBytes = FETCH_CHUNK_BYTES,
): (string | null)[] {
  const chunks: (string | null)[] = [];
  let remaining = budgetBytes;
  for (const [queueGen, seq, offset] of items) {
    const message = engine.queueByGen(queueGen)?.order.find(seq);
    if (remaining <= 0 || message === undefined || message.location === PAYLOAD_MISSING) {
      chunks.push(null);
      continue;
    }
    let payload: Uint8Array;
    try {
      payload = engine.payloadOf(message);
    } catch {
      chunks.push(null); // unreadable here too: another replica may have it
      continue;
    }
    const end = Math.min(payload.byteLength, offset + remaining);
    const chunk = payload.subarray(Math.min(offset, end), end);
    remaining -= chunk.byteLength;
    chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('base64'));
  }
  return chunks;
}

/** Checks and decodes the items of a fetch request (JSON from another member). */
export function parseFetchItems(value: unknown): Item[] | null {
  if (!Array.isArray(value) || value.length > FETCH_ITEMS_MAX) return null;
  const items: Item[] = [];
  for (const item of value) {
    if (!Array.isArray(item) || item.length !== 3) return null;
    if (!item.every((n) => Number.isSafeInteger(n) && (n as number) >= 0)) return null;
    items.push([item[0] as number, item[1] as number, item[2] as number]);
  }
  return items;
}

interface Partial {
  readonly bytes: Uint8Array;
  filled: number;
}

export class PayloadFetcher {
  private running = false;
  /** Payloads arriving in several chunks, by seq, for the engine `partialsOf`. */
  private readonly partials = new Map<number, Partial>();
  private partialsOf: SpoolEngine | null = null;
  fetched = 0;

  constructor(private readonly host: FetchHost) {}

  /** Starts fetching unless it runs already; it stops once nothing is missing. */
  kick(): void {
    if (this.running) return;
    this.running = true;
    void this.run().finally(() => {
      this.running = false;
    });
  }

  private async run(): Promise<void> {
    while (!this.host.closed() && this.host.engine().state.missingPayloads > 0) {
      const progress = await this.pass();
      if (!progress) await pause(FETCH_RETRY_MS);
    }
    this.partials.clear();
  }

  /** One walk over the missing payloads; true when any arrived. */
  private async pass(): Promise<boolean> {
    const engine = this.host.engine();
    if (this.partialsOf !== engine) this.partials.clear();
    this.partialsOf = engine;
    let progress = false;
    const cursor = { queueGen: 0, seq: 0 };
    for (;;) {
      if (this.host.closed() || this.host.engine() !== engine) return true;
      const items = this.collect(engine, cursor);
      if (items.length === 0) return progress;
      const chunks = await this.ask(items);
      if (chunks === null || this.host.engine() !== engine) return progress;
      progress = this.take(engine, items, chunks) || progress;
      // A payload still arriving in chunks is asked for again next, from where it stopped.
      const unfinished = items.find(([, seq]) => this.partials.has(seq));
      if (unfinished !== undefined) {
        cursor.queueGen = unfinished[0];
        cursor.seq = unfinished[1] - 1;
      }
    }
  }

  /** The next missing payloads after `cursor` (moved past them), about one chunk's worth. */
  private collect(engine: SpoolEngine, cursor: { queueGen: number; seq: number }): Item[] {
    const items: Item[] = [];
    let bytes = 0;
    for (const [queueGen, queue] of engine.state.queuesByGen) {
      if (queueGen < cursor.queueGen) continue;
      const after = queueGen === cursor.queueGen ? cursor.seq : 0;
      queue.order.scanAfter(after, (message) => {
        if (items.length >= FETCH_ITEMS_MAX || bytes >= FETCH_CHUNK_BYTES) return false;
        cursor.queueGen = queueGen;
        cursor.seq = message.seq;
        if (message.location !== PAYLOAD_MISSING) return true;
        const offset = this.partials.get(message.seq)?.filled ?? 0;
        items.push([queueGen, message.seq, offset]);
        bytes += message.byteLength - offset;
        return true;
      });
      if (items.length >= FETCH_ITEMS_MAX || bytes >= FETCH_CHUNK_BYTES) break;
    }
    return items;
  }

  /** The chunks from the first source that answers, or null when none does. */
  private async ask(items: readonly Item[]): Promise<(string | null)[] | null> {
    const request = { op: 'payloads', group: this.host.group, items };
    for (const source of this.host.sources()) {
      try {
        const answer = await this.host.call(source, request);
        const chunks = answer['chunks'];
        if (Array.isArray(chunks) && chunks.length === items.length) {
          return chunks as (string | null)[];
        }
      } catch {
        // That member is unreachable or does not serve the group now: ask the next.
      }
    }
    return null;
  }

  /** Stores what arrived; true when any payload was completed. */
  private take(engine: SpoolEngine, items: readonly Item[], chunks: (string | null)[]): boolean {
    let completed = false;
    items.forEach(([queueGen, seq, offset], i) => {
      const chunk = chunks[i];
      if (typeof chunk !== 'string') return;
      const message = engine.queueByGen(queueGen)?.order.find(seq);
      if (message === undefined || message.location !== PAYLOAD_MISSING) return;
      let partial = this.partials.get(seq);
      if (partial === undefined) {
        partial = { bytes: new Uint8Array(message.byteLength), filled: 0 };
        this.partials.set(seq, partial);
      }
      const bytes = Buffer.from(chunk, 'base64');
      if (partial.filled !== offset || offset + bytes.byteLength > message.byteLength) return;
      partial.bytes.set(bytes, offset);
      partial.filled += bytes.byteLength;
      if (partial.filled < message.byteLength) return;
      this.partials.delete(seq);
      assert(engine.fillPayload(queueGen, seq, partial.bytes), 'a fetched payload fills its gap');
      this.fetched++;
      completed = true;
    });
    return completed;
  }
}

function pause(ms: number): Promise<void> {
  // Real time, like the replica's other retries (the node ticks on real time too).
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
