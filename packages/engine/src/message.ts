// The message record and its resting place. One object per message, fields initialised in one
// order so every record shares a hidden class. Replicated fields come first; the rest is derived
// from them (`where` for delayed/visible) or primary-local (leases), and is never snapshotted.
// The payload is not here: the spool's PayloadStore holds it, the record holds where.

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

export class Message {
  /** Spool-wide, strictly increasing in send order, never reused. */
  readonly seq: number;
  readonly createdAtMs: number;
  /**
   * Replica-local: where the spool's PayloadStore keeps the payload (PAYLOAD_MISSING while this
   * replica has not fetched it, and once the message is removed). Never replicated.
   */
  location: number;
  readonly byteLength: number;
  /** Redeliveries so far (nacks and lease timeouts); reset by recover. */
  retries: number;
  /** Replicated generation: bumped by every logged transition of the message. */
  gen: number;
  /** When the message is (or became) visible. */
  visibleAtMs: number;
  /** Start of the retention clock. */
  retentionStartMs: number;
  where: Where;
  /** Validates entries of the ready, delayed and failed heaps (lazy deletion). */
  heapStamp: number;
  /** Validates entries of the expiry heap. */
  expiryStamp: number;
  /**
   * Primary-local: deliveries handed out by this primary; the current lease's number when Leased.
   */
  deliveries: number;
  /** Primary-local: lease deadline, Infinity when the lease has no timeout. */
  leaseExpiresAtMs: number;
  /** Primary-local: the delivery whose lease last timed out (0 = none); for 410 reason expired. */
  timedOutDelivery: number;
  /**
   * Primary-local: a command ending the current lease is in the log; the lease settles nothing
   * more.
   */
  settling: boolean;
  /** Primary-local: retention came due while leased; expire once the lease returns the message. */
  expiryDeferred: boolean;

  constructor(
    seq: number,
    createdAtMs: number,
    location: number,
    byteLength: number,
    visibleAtMs: number,
  ) {
    this.seq = seq;
    this.createdAtMs = createdAtMs;
    this.location = location;
    this.byteLength = byteLength;
    this.retries = 0;
    this.gen = 0;
    this.visibleAtMs = visibleAtMs;
    this.retentionStartMs = visibleAtMs;
    this.where = Where.Fresh;
    this.heapStamp = 0;
    this.expiryStamp = 0;
    this.deliveries = 0;
    this.leaseExpiresAtMs = Infinity;
    this.timedOutDelivery = 0;
    this.settling = false;
    this.expiryDeferred = false;
  }
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
