// A bytes-bounded LRU cache of payloads shared by every segment store of a member, so a consumer
// that keeps up reads what was just appended from memory, and the member's cache memory is one
// configured number however many spools it holds. Entries are kept in one doubly linked list
// (most recent at the head) and found through a map per store.

import { assert } from '@spoolmq/engine';

/**
 * Default cache budget of a member, bytes: the last 2,000 payloads of 16 KiB, a second or more
 * of a busy queue's sends (see the README's Memory for what the earlier 64 MiB cost).
 */
export const PAYLOAD_CACHE_BYTES_DEFAULT = 32 * 1024 * 1024;

/**
 * Memory an entry costs beside its payload's buffer: the entry, its map slot, and the typed array
 * and array buffer objects (measured in a heap snapshot of `mq serve`: about 290 bytes with
 * 128-byte payloads). Charged so that small payloads cannot hold the heap far past the budget
 * (64 MiB of 128-byte payloads would otherwise be 0.5M entries and about 140 MiB more).
 */
export const CACHE_ENTRY_OVERHEAD_BYTES = 256;

/**
 * A payload that is a view into a buffer larger than twice its own size plus this slack (an
 * AppendEntries frame, a pooled slab) is copied before it is cached: the view would keep the
 * whole buffer alive. One that is not copied (a view of its own log entry) is charged its whole
 * buffer.
 */
const VIEW_SLACK_BYTES = 256;

interface Entry {
  readonly owner: object;
  readonly location: number;
  readonly payload: Uint8Array;
  newer: Entry | null;
  older: Entry | null;
}

export class PayloadCache {
  private readonly owners = new Map<object, Map<number, Entry>>();
  private newest: Entry | null = null;
  private oldest: Entry | null = null;
  private bytes = 0;
  hits = 0;
  misses = 0;

  /** `bytesMax`: payload bytes and entry overheads held at most (0 disables the cache). */
  constructor(readonly bytesMax: number = PAYLOAD_CACHE_BYTES_DEFAULT) {
    assert(Number.isSafeInteger(bytesMax) && bytesMax >= 0, 'cache bytes must be >= 0');
  }

  get byteCount(): number {
    return this.bytes;
  }

  get(owner: object, location: number): Uint8Array | undefined {
    const entry = this.owners.get(owner)?.get(location);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.unlink(entry);
    this.linkNewest(entry);
    return entry.payload;
  }

  /**
   * Caches `payload` (a copy, if it is a small view of a large buffer) unless it alone exceeds a
   * quarter of the budget (it would evict too much).
   */
  put(owner: object, location: number, payload: Uint8Array): void {
    if (payload.byteLength + CACHE_ENTRY_OVERHEAD_BYTES > this.bytesMax / 4) return;
    this.drop(owner, location);
    let map = this.owners.get(owner);
    if (map === undefined) {
      map = new Map();
      this.owners.set(owner, map);
    }
    const kept = retainsMore(payload) ? new Uint8Array(payload) : payload;
    const entry: Entry = { owner, location, payload: kept, newer: null, older: null };
    map.set(location, entry);
    this.linkNewest(entry);
    this.bytes += costOf(kept);
    while (this.bytes > this.bytesMax && this.oldest !== null) this.remove(this.oldest);
  }

  drop(owner: object, location: number): void {
    const entry = this.owners.get(owner)?.get(location);
    if (entry !== undefined) this.remove(entry);
  }

  /** Forgets every payload of `owner` (its store closed or was wiped). */
  dropOwner(owner: object): void {
    const map = this.owners.get(owner);
    if (map === undefined) return;
    for (const entry of [...map.values()]) this.remove(entry);
    this.owners.delete(owner);
  }

  private remove(entry: Entry): void {
    this.unlink(entry);
    const map = this.owners.get(entry.owner)!;
    map.delete(entry.location);
    if (map.size === 0) this.owners.delete(entry.owner);
    this.bytes -= costOf(entry.payload);
  }

  private linkNewest(entry: Entry): void {
    entry.older = this.newest;
    entry.newer = null;
    if (this.newest !== null) this.newest.newer = entry;
    this.newest = entry;
    if (this.oldest === null) this.oldest = entry;
  }

  private unlink(entry: Entry): void {
    if (entry.newer !== null) entry.newer.older = entry.older;
    else this.newest = entry.older;
    if (entry.older !== null) entry.older.newer = entry.newer;
    else this.oldest = entry.newer;
    entry.newer = null;
    entry.older = null;
  }
}

/**
 * What an entry holding `payload` charges the budget: the buffer it keeps alive (its own bytes,
 * or at most about twice that: see retainsMore) and the entry's overhead.
 */
function costOf(payload: Uint8Array): number {
  return payload.buffer.byteLength + CACHE_ENTRY_OVERHEAD_BYTES;
}

/** Whether `payload` keeps a buffer alive much larger than itself. */
function retainsMore(payload: Uint8Array): boolean {
  return payload.buffer.byteLength > payload.byteLength * 2 + VIEW_SLACK_BYTES;
}
