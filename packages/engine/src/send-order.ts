// The messages of one queue in send order, stored as columns: typed arrays in fixed-size chunks,
// one slot per message, no object per message. A slot number is absolute (it grows with every
// append); removed messages stay as tombstones until their chunk is dropped (all of it behind the
// head) or the columns are compacted (tombstones outnumber live messages: slots renumbered, the
// epoch bumped so handles find their slot again by seq). The order serves four purposes: lookup
// by seq (binary search), listing seek (keyset by seq), the FIFO of never-delivered visible
// messages (the fresh cursor walks it, skipping anything no longer Fresh), and the retention
// index of messages whose retention clock starts in send order (the expiry cursor, see
// `expiryHead`); the expiry heap holds only the others.
//
// Rare fields live in side maps keyed by seq, only for the messages that have them: the
// primary-local lease fields (MessageExtra), a retention start that differs from the visibility
// time, and the stamp of a message indexed in the expiry heap.

import { assert } from './assert.js';
import {
  CHUNK_MASK,
  CHUNK_SHIFT,
  CHUNK_SLOTS,
  Chunk,
  FLAG_EXPIRY_IN_ORDER,
  FLAG_EXPIRY_STAMP,
  FLAG_OWN_RETENTION,
  small,
} from './columns.js';
import { GONE, Message, type MessageExtra, type MessageOrder, Where } from './message.js';

/** Dead slots tolerated before a compaction, beyond the live count. */
const TOMBSTONES_SLACK = CHUNK_SLOTS;

export class SendOrder implements MessageOrder {
  private chunks: Chunk[] = [];
  /** A chunk dropped behind the head, kept for the next one the tail needs. */
  private spare: Chunk | null = null;
  /** Chunk number of chunks[0]. */
  private chunkBase = 0;
  /** First slot that may be live. */
  private head = 0;
  /** The slot of the last lookup by seq (a hint for lookups in send order). */
  private lastFound = -1;
  /** Next slot to append to. */
  private tail = 0;
  /** Slot at or before the first Fresh message; never below head. */
  private cursor = 0;
  /** Slot at or before the first message in the in-order retention index; never below head. */
  private expiryCursor = 0;
  /** Non-removed slots. */
  private live = 0;
  /** Bumped when slots are renumbered (compaction, clear): handles find their slot again. */
  private epochNow = 0;
  /** Largest retention start in the in-order retention index (appends keep it sorted). */
  private expiryTailMs = -Infinity;
  /** Primary-local fields of the messages that have any, by id (entry 0 unused). */
  private extras: MessageExtra[] = [newExtraRecord()];
  /** Ids of free entries of `extras`. */
  private freeExtras: number[] = [];
  /** Retention starts that differ from the message's visibility time. */
  private readonly retentionStarts = new Map<number, number>();
  /** Stamps of messages indexed in the expiry heap (validate its entries). */
  private readonly expiryStamps = new Map<number, number>();
  private readonly scratch = new Message(this, 0, GONE, 0, -1);

  get liveCount(): number {
    return this.live;
  }

  get epoch(): number {
    return this.epochNow;
  }

  /**
   * Appends a message (where Fresh, retries and gen 0) and returns its handle; its seq must
   * exceed every seq already held. Its retention clock starts at `visibleAtMs`.
   */
  append(
    seq: number,
    createdAtMs: number,
    location: number,
    byteLength: number,
    visibleAtMs: number,
  ): Message {
    const slot = this.appendSlot(seq, createdAtMs, location, byteLength, visibleAtMs);
    return new Message(this, seq, this.chunk(slot), slot & CHUNK_MASK, this.epochNow);
  }

  /**
   * `append` answering with the scratch handle (see findScratch): for an apply that is done
   * with the new message before it returns.
   */
  appendScratch(
    seq: number,
    createdAtMs: number,
    location: number,
    byteLength: number,
    visibleAtMs: number,
  ): Message {
    const slot = this.appendSlot(seq, createdAtMs, location, byteLength, visibleAtMs);
    return this.pointScratch(seq, slot);
  }

  private appendSlot(
    seq: number,
    createdAtMs: number,
    location: number,
    byteLength: number,
    visibleAtMs: number,
  ): number {
    const last = this.tail > this.head ? this.seqAt(this.tail - 1) : -Infinity;
    assert(last < seq, 'send order: seq not increasing');
    const slot = this.tail++;
    const index = slot & CHUNK_MASK;
    if (index === 0) {
      this.chunks.push(this.spare ?? new Chunk());
      this.spare = null;
    }
    const chunk = this.chunk(slot);
    chunk.seq[index] = seq;
    chunk.createdAtMs[index] = createdAtMs;
    chunk.visibleAtMs[index] = visibleAtMs;
    chunk.location[index] = location;
    chunk.byteLength[index] = byteLength;
    chunk.gen[index] = 0;
    chunk.heapStamp[index] = 0;
    chunk.extra[index] = 0;
    chunk.retries[index] = 0;
    chunk.where[index] = Where.Fresh;
    chunk.flags[index] = 0;
    this.live++;
    return slot;
  }

  /** The live (not removed) message with `seq`, or undefined. O(log n). */
  find(seq: number): Message | undefined {
    const slot = this.liveSlot(seq);
    return slot < 0 ? undefined : this.handleAt(slot);
  }

  /** The primary-local fields of the live message `seq` if it rests in `where` (no handle made). */
  extraIn(seq: number, where: Where): MessageExtra | undefined {
    const slot = this.liveSlot(seq);
    if (slot < 0) return undefined;
    const chunk = this.chunk(slot);
    const index = slot & CHUNK_MASK;
    if (chunk.where[index] !== where || chunk.extra[index] === 0) return undefined;
    return this.extras[chunk.extra[index]!];
  }

  /**
   * Like `find`, but the handle is this order's one scratch handle, pointed at `seq` anew by
   * every call: for a replicated transition that is done with the message before it returns
   * (no allocation). Never for a handle that leaves the engine.
   */
  findScratch(seq: number): Message | undefined {
    const slot = this.liveSlot(seq);
    return slot < 0 ? undefined : this.pointScratch(seq, slot);
  }

  private pointScratch(seq: number, slot: number): Message {
    const handle = this.scratch;
    (handle as { seq: number }).seq = seq;
    handle.chunk = this.chunk(slot);
    handle.index = slot & CHUNK_MASK;
    handle.epoch = this.epochNow;
    return handle;
  }

  /** Whether the live message `seq` rests in `where` with heap stamp `stamp` (no handle made). */
  isPlaced(seq: number, where: Where, stamp: number): boolean {
    const slot = this.liveSlot(seq);
    if (slot < 0) return false;
    const chunk = this.chunk(slot);
    const index = slot & CHUNK_MASK;
    return chunk.where[index] === where && chunk.heapStamp[index] === stamp;
  }

  /** The first Fresh message in send order (moves the cursor past anything else), or undefined. */
  firstFresh(): Message | undefined {
    let slot = this.cursor;
    while (slot < this.tail && this.whereAt(slot) !== Where.Fresh) slot++;
    this.cursor = slot;
    return slot < this.tail ? this.handleAt(slot) : undefined;
  }

  /** Records that `message` left the order (its `where` is already Removed). */
  noteRemoved(message: Message): void {
    this.live--;
    assert(this.live >= 0, 'send order: live count negative');
    const chunk = message.held();
    const index = message.index;
    const flags = chunk.flags[index]!;
    const extraId = chunk.extra[index]!;
    if (extraId !== 0) {
      this.freeExtras.push(extraId);
      chunk.extra[index] = 0;
    }
    if (flags & FLAG_OWN_RETENTION) this.retentionStarts.delete(message.seq);
    if (flags & FLAG_EXPIRY_STAMP) this.expiryStamps.delete(message.seq);
    chunk.flags[index] = 0;
    while (this.head < this.tail && this.whereAt(this.head) === Where.Removed) this.head++;
    if (this.cursor < this.head) this.cursor = this.head;
    if (this.expiryCursor < this.head) this.expiryCursor = this.head;
    if (this.chunkBase < this.head >>> CHUNK_SHIFT) this.dropHeadChunks();
    if (this.tail - this.head - this.live > this.live + TOMBSTONES_SLACK) this.compact();
  }

  /** Points the fresh cursor at the start again (after a rebuild marked messages Fresh). */
  rewindCursor(): void {
    this.cursor = this.head;
  }

  // ---- The retention index -----------------------------------------------------------------

  /**
   * Indexes a message whose retention clock (re)starts at `retentionStartMs`: in send order
   * (no entry anywhere) when that keeps the in-order index sorted, as it does for every message
   * sent without a delay; otherwise the caller pushes it to the expiry heap with the stamp
   * returned. Returns 0 for in order. `inOrder`: the caller indexes messages in send order,
   * each after every message indexed before (an append, or a rebuild's sweep).
   */
  indexExpiry(message: Message, retentionStartMs: number, inOrder: boolean): number {
    const chunk = message.held();
    const index = message.index;
    const flags = chunk.flags[index]!;
    if (inOrder && retentionStartMs >= this.expiryTailMs) {
      chunk.flags[index] = flags | FLAG_EXPIRY_IN_ORDER;
      this.expiryTailMs = retentionStartMs;
      return 0;
    }
    chunk.flags[index] = (flags & ~FLAG_EXPIRY_IN_ORDER) | FLAG_EXPIRY_STAMP;
    const stamp = (this.expiryStamps.get(message.seq) ?? 0) + 1;
    this.expiryStamps.set(message.seq, stamp);
    return stamp;
  }

  /** Whether an expiry heap entry (seq, stamp) is current. */
  isExpiryEntry(seq: number, stamp: number): boolean {
    return this.expiryStamps.get(seq) === stamp && this.liveSlot(seq) >= 0;
  }

  /** The first message of the in-order retention index (moving the cursor), or undefined. */
  expiryHead(): Message | undefined {
    let slot = this.expiryCursor;
    while (slot < this.tail) {
      const chunk = this.chunk(slot);
      const index = slot & CHUNK_MASK;
      if (chunk.where[index] !== Where.Removed && (chunk.flags[index]! & FLAG_EXPIRY_IN_ORDER)) {
        break;
      }
      slot++;
    }
    this.expiryCursor = slot;
    return slot < this.tail ? this.handleAt(slot) : undefined;
  }

  /** Takes the expiry head out of the index (collected; `indexExpiry` puts it back). */
  takeExpiryHead(message: Message): void {
    const slot = this.expiryCursor;
    assert(slot < this.tail && this.seqAt(slot) === message.seq, 'not the expiry head');
    message.flags &= ~FLAG_EXPIRY_IN_ORDER;
    this.expiryCursor++;
  }

  /** Forgets every expiry heap stamp and the in-order index (before re-indexing every message). */
  clearExpiryIndex(): void {
    this.expiryStamps.clear();
    const cleared = ~(FLAG_EXPIRY_IN_ORDER | FLAG_EXPIRY_STAMP);
    for (let slot = this.head; slot < this.tail; slot++) {
      const flags = this.chunk(slot).flags;
      const at = slot & CHUNK_MASK;
      flags[at] = flags[at]! & cleared;
    }
    this.expiryCursor = this.head;
    this.expiryTailMs = -Infinity;
  }

  /**
   * Calls `visit` for live messages with seq > `afterSeq`, in send order, until it returns false.
   * Returns the number of slots examined (tombstones included). `visit` may change messages but
   * not remove them.
   */
  scanAfter(afterSeq: number, visit: (message: Message) => boolean): number {
    const start = this.lowerBound(afterSeq + 1);
    let slot = start;
    for (; slot < this.tail; slot++) {
      if (this.whereAt(slot) === Where.Removed) continue;
      const epoch = this.epochNow;
      if (!visit(this.handleAt(slot))) return slot - start + 1;
      assert(this.epochNow === epoch, 'send order: renumbered during a scan');
    }
    return slot - start;
  }

  /** Seqs of the live messages in send order (a copy; 8 bytes a message). */
  liveSeqs(): Float64Array {
    const out = new Float64Array(this.live);
    let n = 0;
    for (let slot = this.head; slot < this.tail; slot++) {
      if (this.whereAt(slot) !== Where.Removed) out[n++] = this.seqAt(slot);
    }
    assert(n === this.live, 'send order: live count mismatch');
    return out;
  }

  /** Live messages in send order (a copy of handles; for small queues and tests). */
  liveMessages(): Message[] {
    const out: Message[] = [];
    this.scanAfter(0, (message) => {
      out.push(message);
      return true;
    });
    return out;
  }

  /** Drops every record (queue deleted). */
  clear(): void {
    this.chunks = [];
    this.chunkBase = 0;
    this.head = 0;
    this.tail = 0;
    this.cursor = 0;
    this.expiryCursor = 0;
    this.live = 0;
    this.epochNow++;
    this.spare = null;
    this.expiryTailMs = -Infinity;
    this.extras = [newExtraRecord()];
    this.freeExtras = [];
    this.retentionStarts.clear();
    this.expiryStamps.clear();
  }

  // ---- MessageOrder: what handles need --------------------------------------------------------

  relocate(handle: Message): void {
    const slot = this.slotOfSeq(handle.seq);
    handle.chunk = slot < 0 ? GONE : this.chunk(slot);
    handle.index = slot < 0 ? 0 : slot & CHUNK_MASK;
    handle.epoch = this.epochNow;
  }

  ownRetentionStartMs(seq: number): number {
    const atMs = this.retentionStarts.get(seq);
    assert(atMs !== undefined, 'send order: retention start missing');
    return atMs;
  }

  setOwnRetentionStartMs(seq: number, atMs: number | null): void {
    if (atMs === null) this.retentionStarts.delete(seq);
    else this.retentionStarts.set(seq, atMs);
  }

  extraAt(id: number): MessageExtra {
    return this.extras[id]!;
  }

  newExtra(): number {
    const id = this.freeExtras.pop();
    if (id === undefined) return this.extras.push(newExtraRecord()) - 1;
    const extra = this.extras[id]!;
    extra.deliveries = 0;
    extra.leaseExpiresAtMs = Infinity;
    extra.timedOutDelivery = 0;
    extra.settling = false;
    extra.expiryDeferred = false;
    return id;
  }

  /**
   * Entries of the side maps (lease fields, own retention starts, expiry stamps): the only
   * per-message storage besides the columns, for the messages that need it.
   */
  get sideEntries(): number {
    return this.extraCount + this.retentionStarts.size + this.expiryStamps.size;
  }

  /** Messages holding primary-local fields (leased or delivered before; for accounting). */
  get extraCount(): number {
    return this.extras.length - 1 - this.freeExtras.length;
  }

  // ---- Slots ---------------------------------------------------------------------------------

  private handleAt(slot: number): Message {
    const chunk = this.chunk(slot);
    const index = slot & CHUNK_MASK;
    return new Message(this, small(chunk.seq[index]!), chunk, index, this.epochNow);
  }

  /**
   * Drops the chunks wholly behind the head. The last one becomes the spare, so handles that
   * still point into it must find their message again (gone): the epoch moves.
   */
  private dropHeadChunks(): void {
    while (this.chunkBase < this.head >>> CHUNK_SHIFT) {
      this.spare = this.chunks.shift()!;
      this.chunkBase++;
    }
    this.epochNow++;
  }

  private chunk(slot: number): Chunk {
    return this.chunks[(slot >>> CHUNK_SHIFT) - this.chunkBase]!;
  }

  private seqAt(slot: number): number {
    return this.chunk(slot).seq[slot & CHUNK_MASK]!;
  }

  private whereAt(slot: number): number {
    return this.chunk(slot).where[slot & CHUNK_MASK]!;
  }

  /** The slot holding `seq` (removed or not), or -1. */
  private slotOfSeq(seq: number): number {
    // A consumer that keeps up settles the oldest messages, and a snapshot reads in send order:
    // try the head and the slot after the last one found before searching.
    if (this.head >= this.tail) return -1;
    const first = this.seqAt(this.head);
    if (seq <= first) return seq === first ? this.head : -1;
    if (seq > this.seqAt(this.tail - 1)) return -1;
    const next = this.lastFound + 1;
    if (next > this.head && next < this.tail && this.seqAt(next) === seq) {
      this.lastFound = next;
      return next;
    }
    const slot = this.lowerBound(seq);
    if (slot < this.tail && this.seqAt(slot) === seq) {
      this.lastFound = slot;
      return slot;
    }
    return -1;
  }

  /**
   * Copies the fields of the live message `seq` into `out` (no handle made; for the snapshot
   * writer, which reads every message in send order). False when there is none.
   */
  readRecord(seq: number, out: MessageRecord): boolean {
    const slot = this.liveSlot(seq);
    if (slot < 0) return false;
    const chunk = this.chunk(slot);
    const index = slot & CHUNK_MASK;
    out.seq = seq;
    out.createdAtMs = chunk.createdAtMs[index]!;
    out.byteLength = chunk.byteLength[index]!;
    out.visibleAtMs = chunk.visibleAtMs[index]!;
    const own = (chunk.flags[index]! & FLAG_OWN_RETENTION) !== 0;
    out.retentionStartMs = own ? this.ownRetentionStartMs(seq) : out.visibleAtMs;
    out.retries = chunk.retries[index]!;
    out.gen = chunk.gen[index]!;
    out.where = chunk.where[index]! as Where;
    out.location = chunk.location[index]!;
    return true;
  }

  /** The slot of the live message `seq`, or -1. */
  private liveSlot(seq: number): number {
    const slot = this.slotOfSeq(seq);
    return slot >= 0 && this.whereAt(slot) !== Where.Removed ? slot : -1;
  }

  /** First slot (from head) whose seq is >= `seq`. */
  private lowerBound(seq: number): number {
    let lo = this.head;
    let hi = this.tail;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      if (this.seqAt(mid) < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Moves the live slots down to slot 0 in fresh chunks; handles find theirs again by seq. */
  private compact(): void {
    const old = this;
    const chunks: Chunk[] = [];
    let kept = 0;
    let cursor = -1;
    let expiryCursor = -1;
    for (let slot = old.head; slot < old.tail; slot++) {
      if (slot === old.cursor) cursor = kept;
      if (slot === old.expiryCursor) expiryCursor = kept;
      const from = old.chunk(slot);
      const i = slot & CHUNK_MASK;
      if (from.where[i] === Where.Removed) continue;
      const j = kept & CHUNK_MASK;
      if (j === 0) chunks.push(new Chunk());
      const to = chunks[chunks.length - 1]!;
      to.seq[j] = from.seq[i]!;
      to.createdAtMs[j] = from.createdAtMs[i]!;
      to.visibleAtMs[j] = from.visibleAtMs[i]!;
      to.location[j] = from.location[i]!;
      to.byteLength[j] = from.byteLength[i]!;
      to.gen[j] = from.gen[i]!;
      to.heapStamp[j] = from.heapStamp[i]!;
      to.extra[j] = from.extra[i]!;
      to.retries[j] = from.retries[i]!;
      to.where[j] = from.where[i]!;
      to.flags[j] = from.flags[i]!;
      kept++;
    }
    assert(kept === this.live, 'send order: live count mismatch after compaction');
    this.chunks = chunks;
    this.spare = null;
    this.chunkBase = 0;
    this.head = 0;
    this.tail = kept;
    this.cursor = cursor < 0 ? kept : cursor;
    this.expiryCursor = expiryCursor < 0 ? kept : expiryCursor;
    this.epochNow++;
  }
}

function newExtraRecord(): MessageExtra {
  return {
    deliveries: 0,
    leaseExpiresAtMs: Infinity,
    timedOutDelivery: 0,
    settling: false,
    expiryDeferred: false,
  };
}

/** A message's fields as a snapshot encodes them (see readRecord). */
export interface MessageRecord {
  seq: number;
  createdAtMs: number;
  byteLength: number;
  visibleAtMs: number;
  retentionStartMs: number;
  retries: number;
  gen: number;
  where: Where;
  location: number;
}
