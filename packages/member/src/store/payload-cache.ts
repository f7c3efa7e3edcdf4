// A bytes-bounded LRU cache of payloads shared by every segment store of a member, so a consumer
// that keeps up reads what was just appended from memory, and the member's cache memory is one
// configured number however many spools it holds. Entries are kept in one doubly linked list
// (most recent at the head) and found through a map per store.

import { assert } from '@spoolmq/engine';

/** Default cache budget of a member, bytes. */
export const PAYLOAD_CACHE_BYTES_DEFAULT = 64 * 1024 * 1024;

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

  /** `bytesMax`: payload bytes held at most (0 disables the cache). */
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

  /** Caches `payload` unless it alone exceeds a quarter of the budget (it would evict too much). */
  put(owner: object, location: number, payload: Uint8Array): void {
    if (payload.byteLength * 4 > this.bytesMax) return;
    this.drop(owner, location);
    let map = this.owners.get(owner);
    if (map === undefined) {
      map = new Map();
      this.owners.set(owner, map);
    }
    const entry: Entry = { owner, location, payload, newer: null, older: null };
    map.set(location, entry);
    this.linkNewest(entry);
    this.bytes += payload.byteLength;
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
    this.bytes -= entry.payload.byteLength;
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
