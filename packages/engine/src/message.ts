// A stored message's resting place, and the handle through which the engine and its host read
// and change a message. Messages are not objects: a queue keeps them in column arrays
// (send-order.ts), so a backlog costs a few dozen bytes per message. Replicated fields are
// columns; `where` is derived from them (delayed/visible) or primary-local (leases), and the
// primary-local lease fields live in a side map for the messages that have them.
// The payload is not here: the spool's PayloadStore holds it, the columns hold where.

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
 * (send-order.ts), addressed by slot; the handle finds its slot again by seq when the columns
 * were compacted since. Handles are cheap and short-lived (the engine keeps none): the fields
 * read and write the columns, or the queue's side maps for rare, primary-local fields. A handle
 * on a removed message reads it as Removed once the columns dropped it.
 */
export class Message {
  /** Spool-wide, strictly increasing in send order, never reused. */
  readonly seq: number;
  /** The slot in `order`'s columns, valid while `epoch` is the columns' epoch. */
  slotAt: number;
  epoch: number;
  private readonly order: MessageColumns;

  constructor(order: MessageColumns, seq: number, slot: number, epoch: number) {
    this.order = order;
    this.seq = seq;
    this.slotAt = slot;
    this.epoch = epoch;
  }

  private at(): number {
    return this.order.slotOf(this);
  }

  get createdAtMs(): number {
    return this.order.createdAtMs(this.at());
  }

  /** The payload's length in bytes. */
  get byteLength(): number {
    return this.order.byteLength(this.at());
  }

  /**
   * Replica-local: where the spool's PayloadStore keeps the payload (PAYLOAD_MISSING while this
   * replica has not fetched it, and once the message is removed). Never replicated.
   */
  get location(): number {
    return this.order.location(this.at());
  }

  set location(location: number) {
    this.order.setLocation(this.at(), location);
  }

  /** Redeliveries so far (nacks and lease timeouts); reset by recover. */
  get retries(): number {
    return this.order.retries(this.at());
  }

  set retries(retries: number) {
    this.order.setRetries(this.at(), retries);
  }

  /** Replicated generation: bumped by every logged transition of the message. */
  get gen(): number {
    return this.order.gen(this.at());
  }

  set gen(gen: number) {
    this.order.setGen(this.at(), gen);
  }

  /** When the message is (or became) visible. */
  get visibleAtMs(): number {
    return this.order.visibleAtMs(this.at());
  }

  set visibleAtMs(atMs: number) {
    this.order.setVisibleAtMs(this.at(), this.seq, atMs);
  }

  /** Start of the retention clock. */
  get retentionStartMs(): number {
    return this.order.retentionStartMs(this.at(), this.seq);
  }

  set retentionStartMs(atMs: number) {
    this.order.setRetentionStartMs(this.at(), this.seq, atMs);
  }

  get where(): Where {
    return this.order.where(this.at());
  }

  set where(where: Where) {
    this.order.setWhere(this.at(), where);
  }

  /** Validates entries of the ready, delayed and failed heaps (lazy deletion). */
  get heapStamp(): number {
    return this.order.heapStamp(this.at());
  }

  set heapStamp(stamp: number) {
    this.order.setHeapStamp(this.at(), stamp);
  }

  /**
   * Primary-local: deliveries handed out by this primary; the current lease's number when Leased.
   */
  get deliveries(): number {
    return this.order.extraOf(this.seq)?.deliveries ?? 0;
  }

  set deliveries(count: number) {
    if (count !== this.deliveries) this.order.extraFor(this.at(), this.seq).deliveries = count;
  }

  /** Primary-local: lease deadline, Infinity when the lease has no timeout. */
  get leaseExpiresAtMs(): number {
    return this.order.extraOf(this.seq)?.leaseExpiresAtMs ?? Infinity;
  }

  set leaseExpiresAtMs(atMs: number) {
    if (atMs !== this.leaseExpiresAtMs) {
      this.order.extraFor(this.at(), this.seq).leaseExpiresAtMs = atMs;
    }
  }

  /** Primary-local: the delivery whose lease last timed out (0 = none); for 410 reason expired. */
  get timedOutDelivery(): number {
    return this.order.extraOf(this.seq)?.timedOutDelivery ?? 0;
  }

  set timedOutDelivery(delivery: number) {
    if (delivery !== this.timedOutDelivery) {
      this.order.extraFor(this.at(), this.seq).timedOutDelivery = delivery;
    }
  }

  /**
   * Primary-local: a command ending the current lease is in the log; the lease settles nothing
   * more.
   */
  get settling(): boolean {
    return this.order.extraOf(this.seq)?.settling ?? false;
  }

  set settling(settling: boolean) {
    if (settling !== this.settling) this.order.extraFor(this.at(), this.seq).settling = settling;
  }

  /** Primary-local: retention came due while leased; expire once the lease returns the message. */
  get expiryDeferred(): boolean {
    return this.order.extraOf(this.seq)?.expiryDeferred ?? false;
  }

  set expiryDeferred(deferred: boolean) {
    if (deferred !== this.expiryDeferred) {
      this.order.extraFor(this.at(), this.seq).expiryDeferred = deferred;
    }
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

/** What a handle reads and writes (implemented by SendOrder). */
export interface MessageColumns {
  /** The slot of `handle` now (updating the handle), or -1 once its message is gone. */
  slotOf(handle: Message): number;
  createdAtMs(slot: number): number;
  byteLength(slot: number): number;
  location(slot: number): number;
  setLocation(slot: number, location: number): void;
  retries(slot: number): number;
  setRetries(slot: number, retries: number): void;
  gen(slot: number): number;
  setGen(slot: number, gen: number): void;
  visibleAtMs(slot: number): number;
  setVisibleAtMs(slot: number, seq: number, atMs: number): void;
  retentionStartMs(slot: number, seq: number): number;
  setRetentionStartMs(slot: number, seq: number, atMs: number): void;
  where(slot: number): Where;
  setWhere(slot: number, where: Where): void;
  heapStamp(slot: number): number;
  setHeapStamp(slot: number, stamp: number): void;
  extraOf(seq: number): MessageExtra | undefined;
  extraFor(slot: number, seq: number): MessageExtra;
}

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
