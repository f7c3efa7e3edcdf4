// The in-memory payload store: the local variant (`mq local`) and the tests. A payload's location
// is its message's seq, so the store is a map from seq to the bytes the command carried.

import { assert } from './assert.js';
import { PAYLOAD_MISSING, PayloadError, type PayloadStore } from './payload-store.js';

export class MemoryPayloadStore implements PayloadStore {
  private readonly payloads = new Map<number, Uint8Array>();
  private bytes = 0;

  /** `id`: the store's identity in snapshots (see PayloadStore.id). */
  constructor(readonly id: string = 'memory') {}

  /** Payloads held and their bytes (tests and memory accounting). */
  get count(): number {
    return this.payloads.size;
  }

  get byteCount(): number {
    return this.bytes;
  }

  append(seq: number, payload: Uint8Array): number {
    assert(Number.isSafeInteger(seq) && seq > 0, 'payload seq must be a positive integer');
    const previous = this.payloads.get(seq);
    if (previous !== undefined) this.bytes -= previous.byteLength;
    this.payloads.set(seq, payload);
    this.bytes += payload.byteLength;
    return seq;
  }

  read(seq: number, location: number, byteLength: number): Uint8Array {
    if (location === PAYLOAD_MISSING) throw new PayloadError(seq, 'not fetched yet');
    assert(location === seq, 'a memory payload lives at its seq');
    const payload = this.payloads.get(seq);
    if (payload === undefined) throw new PayloadError(seq, 'not in the store');
    if (payload.byteLength !== byteLength) throw new PayloadError(seq, 'length differs');
    return payload;
  }

  /** A store with the same id and payloads (what another replica over the same bytes holds). */
  clone(): MemoryPayloadStore {
    const copy = new MemoryPayloadStore(this.id);
    for (const [seq, payload] of this.payloads) copy.append(seq, payload);
    return copy;
  }

  /** Drops every payload. */
  clear(): void {
    this.payloads.clear();
    this.bytes = 0;
  }

  adopt(): void {
    // Nothing to count: a memory payload is dropped when released, never by segment.
  }

  release(location: number): void {
    if (location === PAYLOAD_MISSING) return;
    const payload = this.payloads.get(location);
    if (payload === undefined) return;
    this.payloads.delete(location);
    this.bytes -= payload.byteLength;
  }
}
