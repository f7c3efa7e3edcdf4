// The messages of one queue in send order: an append-only array with tombstones (removed
// records stay until compaction), a head past the leading tombstones, and a cursor for fresh
// sends. It serves three purposes at once: lookup by seq (binary search), listing seek (keyset by
// seq), and the FIFO of never-delivered visible messages (the cursor walks it, skipping anything
// that is no longer Fresh).

import { assert } from './assert.js';
import { type Message, Where } from './message.js';

/** Dead slots tolerated before a middle compaction, beyond the live count. */
const TOMBSTONES_SLACK = 1024;
/** Leading slots consumed before the array is shifted down. */
const HEAD_SHIFT_MIN = 1024;

export class SendOrder {
  private items: Message[] = [];
  private head = 0;
  /** Index at or before the first Fresh message; never below head. */
  private cursor = 0;
  /** Non-removed records in the array. */
  private live = 0;

  get liveCount(): number {
    return this.live;
  }

  /** Appends a message; its seq must exceed every seq already held. */
  append(message: Message): void {
    const last = this.items.length > this.head ? this.items[this.items.length - 1] : undefined;
    assert(last === undefined || last.seq < message.seq, 'send order: seq not increasing');
    this.items.push(message);
    this.live++;
  }

  /** The live (not removed) message with `seq`, or undefined. O(log n). */
  find(seq: number): Message | undefined {
    const index = this.lowerBound(seq);
    const message = this.items[index];
    if (message === undefined || message.seq !== seq || message.where === Where.Removed) {
      return undefined;
    }
    return message;
  }

  /** The first Fresh message in send order (moves the cursor past anything else), or undefined. */
  firstFresh(): Message | undefined {
    const items = this.items;
    let i = this.cursor;
    while (i < items.length && items[i]!.where !== Where.Fresh) i++;
    this.cursor = i;
    return items[i];
  }

  /** Records that a message left the array (its `where` is already Removed). */
  noteRemoved(): void {
    this.live--;
    assert(this.live >= 0, 'send order: live count negative');
    const items = this.items;
    while (this.head < items.length && items[this.head]!.where === Where.Removed) this.head++;
    if (this.cursor < this.head) this.cursor = this.head;
    if (this.head >= HEAD_SHIFT_MIN && this.head * 2 >= items.length) this.shiftHead();
    else if (items.length - this.head - this.live > this.live + TOMBSTONES_SLACK) this.compact();
  }

  /** Points the cursor at the start again (after a rebuild marked messages Fresh). */
  rewindCursor(): void {
    this.cursor = this.head;
  }

  /** Index of the first slot whose seq is >= `seq` (slots before head excluded). */
  private lowerBound(seq: number): number {
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.seq < seq) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Calls `visit` for live messages with seq > `afterSeq`, in send order, until it returns false.
   * Returns the number of slots examined (tombstones included).
   */
  scanAfter(afterSeq: number, visit: (message: Message) => boolean): number {
    const items = this.items;
    const start = this.lowerBound(afterSeq + 1);
    let i = start;
    for (; i < items.length; i++) {
      const message = items[i]!;
      if (message.where === Where.Removed) continue;
      if (!visit(message)) return i - start + 1;
    }
    return i - start;
  }

  /** Live messages in send order (a copy; for snapshots, rebuilds and tests). */
  liveMessages(): Message[] {
    const out: Message[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const message = this.items[i]!;
      if (message.where !== Where.Removed) out.push(message);
    }
    return out;
  }

  /** Drops every record (queue deleted). */
  clear(): void {
    this.items = [];
    this.head = 0;
    this.cursor = 0;
    this.live = 0;
  }

  private shiftHead(): void {
    const head = this.head;
    this.items.copyWithin(0, head);
    this.items.length -= head;
    this.cursor -= head;
    this.head = 0;
  }

  private compact(): void {
    const items = this.items;
    let kept = 0;
    let cursor = 0;
    for (let i = this.head; i < items.length; i++) {
      if (i === this.cursor) cursor = kept;
      const message = items[i]!;
      if (message.where !== Where.Removed) items[kept++] = message;
    }
    if (this.cursor >= items.length) cursor = kept;
    items.length = kept;
    this.head = 0;
    this.cursor = cursor;
    assert(kept === this.live, 'send order: live count mismatch after compaction');
  }
}
