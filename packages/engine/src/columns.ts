// The column storage of a queue's messages (see send-order.ts): typed arrays of CHUNK_SLOTS
// slots each, so a stored message costs SLOT_BYTES and no object.

export const CHUNK_SHIFT = 12;
/** Slots per chunk. */
export const CHUNK_SLOTS = 1 << CHUNK_SHIFT;
export const CHUNK_MASK = CHUNK_SLOTS - 1;

/** Flag: the message is in the in-order retention index (see SendOrder.expiryHead). */
export const FLAG_EXPIRY_IN_ORDER = 1;
/** Flag: the message's retention start differs from its visibility time (side map). */
export const FLAG_OWN_RETENTION = 4;
/** Flag: the message has an expiry heap stamp (side map). */
export const FLAG_EXPIRY_STAMP = 8;

/** Bytes of column storage per slot. */
export const SLOT_BYTES = 8 * 4 + 4 * 4 + 2 + 1 + 1;

/**
 * `value` (an integer read from a Float64Array) as a small integer when it is one: V8 then keeps
 * it unboxed in objects and map keys instead of allocating a heap number for it.
 */
export function small(value: number): number {
  return value >= 0 && value <= 0x3fffffff ? value | 0 : value;
}

/** The columns of CHUNK_SLOTS consecutive slots. */
export class Chunk {
  readonly seq: Float64Array;
  readonly createdAtMs: Float64Array;
  readonly visibleAtMs: Float64Array;
  readonly location: Float64Array;
  readonly byteLength: Uint32Array;
  readonly gen: Uint32Array;
  readonly heapStamp: Uint32Array;
  /** Index of the message's primary-local fields in the queue's extra table; 0: none. */
  readonly extra: Uint32Array;
  readonly retries: Uint16Array;
  readonly where: Uint8Array;
  readonly flags: Uint8Array;

  constructor(slots: number = CHUNK_SLOTS) {
    // One buffer per chunk, widest columns first so every view is aligned.
    const buffer = new ArrayBuffer(slots * SLOT_BYTES);
    let at = 0;
    const take = (bytes: number): number => {
      const offset = at;
      at += bytes * slots;
      return offset;
    };
    this.seq = new Float64Array(buffer, take(8), slots);
    this.createdAtMs = new Float64Array(buffer, take(8), slots);
    this.visibleAtMs = new Float64Array(buffer, take(8), slots);
    this.location = new Float64Array(buffer, take(8), slots);
    this.byteLength = new Uint32Array(buffer, take(4), slots);
    this.gen = new Uint32Array(buffer, take(4), slots);
    this.heapStamp = new Uint32Array(buffer, take(4), slots);
    this.extra = new Uint32Array(buffer, take(4), slots);
    this.retries = new Uint16Array(buffer, take(2), slots);
    this.where = new Uint8Array(buffer, take(1), slots);
    this.flags = new Uint8Array(buffer, take(1), slots);
  }
}
