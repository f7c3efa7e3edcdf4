// The simulator's replicated state machine: a 64-bit hash chain over every applied entry
// (index, term, type, data), so two replicas agree on one number exactly when they applied the
// same entries in the same order. Snapshots carry the chain plus deterministic filler bytes
// (so InstallSnapshot is chunked for real) that `restore` verifies, catching any chunk that was
// lost, duplicated or reordered on the way.

import type { Entry } from '../../src/types.js';
import { Prng } from '../../src/prng.js';
import { joinChunks } from '../chunks.js';

const HEADER_BYTES = 16;

export function dataHash(data: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < data.length; i += 1) h = Math.imul(h ^ data[i]!, 0x01000193);
  return h >>> 0;
}

function mix(h: number, v: number): number {
  h = Math.imul(h ^ v, 0x9e3779b1);
  return (h ^ (h >>> 15)) >>> 0;
}

export interface ChainState {
  readonly index: number;
  readonly h1: number;
  readonly h2: number;
}

export class HashStateMachine {
  index = 0;
  h1 = 0x12345678;
  h2 = 0x9abcdef0;

  constructor(private readonly fillerBytesMax: number) {}

  apply(entry: Entry): void {
    if (entry.index !== this.index + 1) {
      throw new Error(`sim: applied ${entry.index} after ${this.index}`);
    }
    const d = dataHash(entry.data);
    this.h1 = mix(mix(mix(mix(this.h1, entry.index), entry.term), entry.type), d);
    this.h2 = mix(mix(mix(mix(this.h2, d), entry.type), entry.term), entry.index);
    this.index = entry.index;
  }

  state(): ChainState {
    return { index: this.index, h1: this.h1, h2: this.h2 };
  }

  snapshot(): Uint8Array {
    const filler = this.fillerBytesMax > 0 ? this.h1 % this.fillerBytesMax : 0;
    const out = new Uint8Array(HEADER_BYTES + filler);
    const view = new DataView(out.buffer);
    view.setUint32(0, Math.floor(this.index / 4294967296));
    view.setUint32(4, this.index >>> 0);
    view.setUint32(8, this.h1);
    view.setUint32(12, this.h2);
    const prng = new Prng(this.h1 ^ this.h2);
    for (let i = HEADER_BYTES; i < out.length; i += 1) out[i] = prng.nextU32() & 0xff;
    return out;
  }

  /** Replaces the state by a snapshot's; throws when its bytes are not what `snapshot` wrote. */
  restore(chunks: Iterable<Uint8Array>): void {
    const data = joinChunks(chunks);
    if (data.length < HEADER_BYTES) throw new Error('sim: snapshot too short');
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const index = view.getUint32(0) * 4294967296 + view.getUint32(4);
    const h1 = view.getUint32(8);
    const h2 = view.getUint32(12);
    const filler = this.fillerBytesMax > 0 ? h1 % this.fillerBytesMax : 0;
    if (data.length !== HEADER_BYTES + filler) throw new Error('sim: snapshot length mismatch');
    const prng = new Prng(h1 ^ h2);
    for (let i = HEADER_BYTES; i < data.length; i += 1) {
      if (data[i] !== (prng.nextU32() & 0xff)) throw new Error(`sim: snapshot byte ${i} corrupt`);
    }
    this.index = index;
    this.h1 = h1;
    this.h2 = h2;
  }
}
