// A stored message's resting place, and the handle through which the engine and its host read
// and change a message. Messages are not objects: a queue keeps them in column arrays
// (send-order.ts), so a backlog costs a few dozen bytes per message. Replicated fields are
// columns; `where` is derived from them (delayed/visible) or primary-local (leases), and the
// primary-local lease fields live in a side map for the messages that have them.
// The payload is not here: the spool's PayloadStore holds it, the columns hold where.

import { assert } from './assert.js';
import { Chunk, FLAG_OWN_RETENTION, small } from './columns.js';
import { PAYLOAD_MISSING } from './payload-store.js';

/**
 * Where a message rests. The state the interface shows is derived from it and the time:
 * Fresh, Ready, Expiring and Delayed read `delayed` while `visibleAtMs` is in the future and
 * `visible` after; Leased reads `pending`; Failed reads `failed` (`unavailable` while this
 * replica lacks its payload: location PAYLOAD_MISSING); Unavailable reads `unavailable`.
 */
export const Where = {
  /**
   * Visible, never handed out since it (or the last rebuild) placed it; found by the send-order
   * cursor.
   */
  Fresh: 0,
  /** Visible after a return (nack, release, timeout, recover, delay elapsed); in the ready heap. */
  Ready: 1,
  /** Delay not yet elapsed when last looked at; in the delayed heap. */
  Delayed: 2,
  /** Pending under a lease (primary-local). */
  Leased: 3,
  /** Failed; in the failed heap until recovered, discarded or expired. */
  Failed: 4,
  /** Visible but past retention: no longer handed out, waiting for the expire command. */
  Expiring: 5,
  /** Removed; a tombstone in the send-order array until compaction. */
  Removed: 6,
  /**
   * Visible in the replicated state, but this replica cannot read its payload (location
   * PAYLOAD_MISSING: never fetched, or its bytes failed their checksum and were dropped): receive
   * skips it until the payload is fetched again, then it returns to its place by seq (Ready).
   * Replica-local, like the location it follows from: another replica may hold a good copy, so
   * a new primary decides afresh from its own store (rebuildQueue). Replicated transitions treat
   * it as visible, so every replica still reaches the same replicated state.
   */
  Unavailable: 7,
} as const;
export type Where = (typeof Where)[keyof typeof Where];

/**
 * A handle on one stored message of a queue: the message itself lives in the queue's columns
 * (send-order.ts). The handle points at its chunk and index there, valid while its epoch is the
 * columns' epoch; after a renumbering it finds its slot again by seq. Handles are cheap and
 * short-lived (the engine keeps none). A handle on a removed message reads it as Removed, with
 * no payload location, once the columns dropped it.
 */
export class Message {
  /** Spool-wide, strictly increasing in send order, never reused. */
  readonly seq: number;
  /** The columns holding the message (GONE once it was dropped), valid while `epoch` matches. */
  chunk: Chunk;
  index: number;
  epoch: number;
  private readonly order: MessageOrder;

  constructor(order: MessageOrder, seq: number, chunk: Chunk, index: number, epoch: number) {
    this.order = order;
    this.seq = seq;
    this.chunk = chunk;
    this.index = index;
    this.epoch = epoch;
  }

  /**
   * The chunk holding the message now (finding it again after a renumbering), at `index`: hot
   * paths resolve once and use the columns directly. GONE once the message was dropped.
   */
  columns(): Chunk {
    if (this.epoch !== this.order.epoch) this.order.relocate(this);
    return this.chunk;
  }

  /** The chunk of a message that is still there, to change it (at `index`). */
  held(): Chunk {
    const chunk = this.columns();
    assert(chunk !== GONE, 'changing a removed message');
    return chunk;
  }

  get createdAtMs(): number {
    return this.columns().createdAtMs[this.index]!;
  }

  /** The payload's length in bytes. */
  get byteLength(): number {
    return this.columns().byteLength[this.index]!;
  }

  /**
   * Replica-local: where the spool's PayloadStore keeps the payload (PAYLOAD_MISSING while this
   * replica has not fetched it, and once the message is removed). Never replicated.
   */
  get location(): number {
    return small(this.columns().location[this.index]!);
  }

  set location(location: number) {
    const chunk = this.columns();
    if (chunk === GONE && location === PAYLOAD_MISSING) return;
    this.held().location[this.index] = location;
  }

  /** Redeliveries so far (nacks and lease timeouts); reset by recover. */
  get retries(): number {
    return this.columns().retries[this.index]!;
  }

  set retries(retries: number) {
    assert(retries >= 0 && retries <= 0xffff, 'retries out of range');
    this.held().retries[this.index] = retries;
  }

  /** Replicated generation: bumped by every logged transition of the message. */
  get gen(): number {
    return this.columns().gen[this.index]!;
  }

  set gen(gen: number) {
    assert(gen >= 0 && gen <= 0xffffffff, 'message generation out of range');
    this.held().gen[this.index] = gen;
  }

  /** When the message is (or became) visible. */
  get visibleAtMs(): number {
    return this.columns().visibleAtMs[this.index]!;
  }

  set visibleAtMs(atMs: number) {
    const chunk = this.held();
    const index = this.index;
    if (chunk.flags[index]! & FLAG_OWN_RETENTION) {
      chunk.visibleAtMs[index] = atMs;
      // The retention start stays; it may now equal the visibility time.
      this.retentionStartMs = this.order.ownRetentionStartMs(this.seq);
    } else if (chunk.visibleAtMs[index] !== atMs) {
      const retentionStartMs = chunk.visibleAtMs[index]!;
      chunk.visibleAtMs[index] = atMs;
      this.retentionStartMs = retentionStartMs;
    }
  }

  /** Start of the retention clock. */
  get retentionStartMs(): number {
    const chunk = this.columns();
    const index = this.index;
    if (chunk.flags[index]! & FLAG_OWN_RETENTION) return this.order.ownRetentionStartMs(this.seq);
    return chunk.visibleAtMs[index]!;
  }

  set retentionStartMs(atMs: number) {
    const chunk = this.held();
    const index = this.index;
    const own = (chunk.flags[index]! & FLAG_OWN_RETENTION) !== 0;
    if (atMs === chunk.visibleAtMs[index]) {
      if (!own) return;
      chunk.flags[index] = chunk.flags[index]! & ~FLAG_OWN_RETENTION;
      this.order.setOwnRetentionStartMs(this.seq, null);
    } else {
      if (!own) chunk.flags[index] = chunk.flags[index]! | FLAG_OWN_RETENTION;
      this.order.setOwnRetentionStartMs(this.seq, atMs);
    }
  }

  get where(): Where {
    return this.columns().where[this.index]! as Where;
  }

  set where(where: Where) {
    const chunk = this.columns();
    if (chunk === GONE && where === Where.Removed) return;
    this.held().where[this.index] = where;
  }

  /** Validates entries of the ready, delayed and failed heaps (lazy deletion). */
  get heapStamp(): number {
    return this.columns().heapStamp[this.index]!;
  }

  set heapStamp(stamp: number) {
    this.held().heapStamp[this.index] = stamp;
  }

  /** Flag bits of the message (columns.ts); for the columns' bookkeeping. */
  get flags(): number {
    return this.columns().flags[this.index]!;
  }

  set flags(flags: number) {
    this.held().flags[this.index] = flags;
  }

  /** Index of the primary-local fields in the queue's extra table (0: none). */
  get extraId(): number {
    return this.columns().extra[this.index]!;
  }

  set extraId(id: number) {
    this.held().extra[this.index] = id;
  }

  /** The primary-local fields, if the message has any (read them; change them via `lease`). */
  extra(): MessageExtra | undefined {
    const id = this.columns().extra[this.index]!;
    return id === 0 ? undefined : this.order.extraAt(id);
  }

  /** The primary-local fields, created with their defaults if the message had none. */
  lease(): MessageExtra {
    const chunk = this.held();
    const index = this.index;
    const id = chunk.extra[index]!;
    if (id !== 0) return this.order.extraAt(id);
    const created = this.order.newExtra();
    chunk.extra[index] = created;
    return this.order.extraAt(created);
  }

  /**
   * Primary-local: deliveries handed out by this primary; the current lease's number when Leased.
   */
  get deliveries(): number {
    return this.extra()?.deliveries ?? 0;
  }

  set deliveries(count: number) {
    if (count !== this.deliveries) this.lease().deliveries = count;
  }

  /** Primary-local: lease deadline, Infinity when the lease has no timeout. */
  get leaseExpiresAtMs(): number {
    return this.extra()?.leaseExpiresAtMs ?? Infinity;
  }

  set leaseExpiresAtMs(atMs: number) {
    if (atMs !== this.leaseExpiresAtMs) this.lease().leaseExpiresAtMs = atMs;
  }

  /** Primary-local: the delivery whose lease last timed out (0 = none); for 410 reason expired. */
  get timedOutDelivery(): number {
    return this.extra()?.timedOutDelivery ?? 0;
  }

  set timedOutDelivery(delivery: number) {
    if (delivery !== this.timedOutDelivery) this.lease().timedOutDelivery = delivery;
  }

  /**
   * Primary-local: a command ending the current lease is in the log; the lease settles nothing
   * more.
   */
  get settling(): boolean {
    return this.extra()?.settling ?? false;
  }

  set settling(settling: boolean) {
    if (settling !== this.settling) this.lease().settling = settling;
  }

  /** Primary-local: retention came due while leased; expire once the lease returns the message. */
  get expiryDeferred(): boolean {
    return this.extra()?.expiryDeferred ?? false;
  }

  set expiryDeferred(deferred: boolean) {
    if (deferred !== this.expiryDeferred) this.lease().expiryDeferred = deferred;
  }
}

/** Primary-local fields of a message, held only for messages that have any (leased ones). */
export interface MessageExtra {
  deliveries: number;
  leaseExpiresAtMs: number;
  timedOutDelivery: number;
  settling: boolean;
  expiryDeferred: boolean;
}

/** What a handle needs of its queue's columns (implemented by SendOrder). */
export interface MessageOrder {
  readonly epoch: number;
  /** Points `handle` at its message's chunk now, or at GONE once the message was dropped. */
  relocate(handle: Message): void;
  ownRetentionStartMs(seq: number): number;
  /** Sets a retention start that differs from the visibility time; null forgets it. */
  setOwnRetentionStartMs(seq: number, atMs: number | null): void;
  /** The primary-local fields at `id` (>= 1) of the queue's extra table. */
  extraAt(id: number): MessageExtra;
  /** A new entry of the extra table with default fields; returns its id (>= 1). */
  newExtra(): number;
}

/** The one-slot chunk a handle points at once its message was dropped: reads Removed. */
export const GONE = new Chunk(1);
GONE.where[0] = Where.Removed;
GONE.location[0] = PAYLOAD_MISSING;

/** Width of a message id: 16 lower-case hex digits cover every safe-integer seq. */
export const MESSAGE_ID_LENGTH = 16;

/**
 * The message id of `seq` (1 .. 2^53-1): fixed-width lower-case hex, so ids sort byte-wise in
 * send order and are unique within the spool for its lifetime.
 */
export function messageIdOf(seq: number): string {
  return seq.toString(16).padStart(MESSAGE_ID_LENGTH, '0');
}

/** Inverse of `messageIdOf`; -1 for a string that is not a message id. */
export function seqOfMessageId(id: string): number {
  if (id.length !== MESSAGE_ID_LENGTH || !/^[0-9a-f]+$/.test(id)) return -1;
  const seq = Number.parseInt(id, 16);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : -1;
}
