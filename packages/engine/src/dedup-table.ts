// Remembered dedup keys of one queue. A key maps to the seq of the message its first send
// appended, until its window expires. Keys are kept in expiry order too (the window of a queue is
// fixed while keys are held: changing it clears the table, and apply times never decrease), so
// purging expired keys pops from the front. Purge runs only from apply, so every replica holds
// the same keys; lookups compare with the time and never delete.

import { assert } from './assert.js';

/** Bytes of a dedup fingerprint. */
export const DEDUP_KEY_BYTES = 16;

export interface DedupEntry {
  /** The fingerprint as a 16-char latin1 string (one char per byte). */
  readonly key: string;
  readonly seq: number;
  readonly expiresAtMs: number;
}

/** The fingerprint bytes as a map key: 16 chars, one per byte. */
export function dedupKeyString(bytes: Uint8Array): string {
  assert(bytes.byteLength === DEDUP_KEY_BYTES, 'dedup key must be 16 bytes');
  return String.fromCharCode(
    bytes[0]!, bytes[1]!, bytes[2]!, bytes[3]!, bytes[4]!, bytes[5]!, bytes[6]!, bytes[7]!,
    bytes[8]!, bytes[9]!, bytes[10]!, bytes[11]!, bytes[12]!, bytes[13]!, bytes[14]!, bytes[15]!,
  );
}

/** Inverse of `dedupKeyString`. */
export function dedupKeyBytes(key: string): Uint8Array {
  const bytes = new Uint8Array(DEDUP_KEY_BYTES);
  for (let i = 0; i < DEDUP_KEY_BYTES; i++) bytes[i] = key.charCodeAt(i);
  return bytes;
}

export class DedupTable {
  private readonly byKey = new Map<string, DedupEntry>();
  private order: DedupEntry[] = [];
  private head = 0;

  /** Keys held (expired ones included until purged). */
  get size(): number {
    return this.byKey.size;
  }

  /** Seq of the original send of `key` if its window is still open at `nowMs`, else -1. */
  lookup(key: string, nowMs: number): number {
    const entry = this.byKey.get(key);
    return entry !== undefined && entry.expiresAtMs > nowMs ? entry.seq : -1;
  }

  /** Remembers `key` for `seq` until `expiresAtMs` (not before the newest key's expiry). */
  record(key: string, seq: number, expiresAtMs: number): void {
    const entry: DedupEntry = { key, seq, expiresAtMs };
    const newest = this.order[this.order.length - 1];
    assert(newest === undefined || newest.expiresAtMs <= expiresAtMs, 'dedup expiry out of order');
    this.byKey.set(key, entry);
    this.order.push(entry);
  }

  /** Forgets keys whose window closed at or before `nowMs`. Returns how many were forgotten. */
  purge(nowMs: number): number {
    let forgotten = 0;
    const order = this.order;
    while (this.head < order.length && order[this.head]!.expiresAtMs <= nowMs) {
      const entry = order[this.head++]!;
      if (this.byKey.get(entry.key) === entry) {
        this.byKey.delete(entry.key);
        forgotten++;
      }
    }
    if (this.head > 1024 && this.head * 2 > order.length) {
      this.order = order.slice(this.head);
      this.head = 0;
    }
    return forgotten;
  }

  clear(): void {
    this.byKey.clear();
    this.order = [];
    this.head = 0;
  }

  /** Held entries in expiry order (for snapshots). */
  entries(): DedupEntry[] {
    const out: DedupEntry[] = [];
    for (let i = this.head; i < this.order.length; i++) {
      const entry = this.order[i]!;
      if (this.byKey.get(entry.key) === entry) out.push(entry);
    }
    return out;
  }
}
