// The per-turn frame batcher of the project's stream writers (the gateway's MemberConnection, the
// member's StreamSession and Raft's PeerLink): pieces queued during one turn of the event loop
// leave together, cut into frames of at most frameBytesMax bytes (a piece larger than that
// travels alone), so a burst of calls, answers or Raft messages costs one stream write per frame
// instead of one per piece. The turn boundary is the caller's (`schedule`: setImmediate in the
// I/O shell) and so is the writing: the batcher does no I/O and reads no clock, which keeps it in
// this package, the lowest one the writers import. A writer that must stop while its stream is
// full takes one frame at a time (`takeFrame`) and leaves the rest queued; a bounded queue drops
// from the front (`dropOldest`).

import { assert } from './assert.js';

export interface TurnBatcherOptions<T> {
  /** Bytes `item` takes in a frame; 0 when it was dropped after being queued (left out). */
  sizeOf(item: T): number;
  /** Runs `callback` once the current turn's I/O callbacks are done (setImmediate). */
  schedule(callback: () => void): void;
  /** Called once per turn in which something was queued: the owner writes (takeFrames) or waits. */
  onTurn(): void;
}

/** One frame's worth of queued items, in queue order, and their bytes. */
export interface BatchedFrame<T> {
  readonly items: readonly T[];
  readonly bytes: number;
}

/** Taken slots at the front past which the queue array is compacted (amortized O(1) drops). */
const COMPACT_HEAD_MIN = 1024;

export class TurnBatcher<T> {
  /** Queued items are `items[head..]`; slots before `head` were taken or dropped (cleared). */
  private items: (T | undefined)[] = [];
  private head = 0;
  private bytes = 0;
  private scheduled = false;

  constructor(private readonly options: TurnBatcherOptions<T>) {}

  /** Items queued (dropped ones included until taken). */
  get length(): number {
    return this.items.length - this.head;
  }

  /** Bytes queued and not yet taken. */
  get queuedBytes(): number {
    return this.bytes;
  }

  /** Queues `item` and asks for the end of this turn. */
  push(item: T): void {
    this.items.push(item);
    this.bytes += this.options.sizeOf(item);
    this.wake();
  }

  /** Asks for one `onTurn` after this turn (again), e.g. when the link comes back. */
  wake(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    this.options.schedule(() => {
      this.scheduled = false;
      this.options.onTurn();
    });
  }

  /** A queued item was dropped: its `bytes` no longer count (its sizeOf is 0 from now on). */
  forget(bytes: number): void {
    assert(bytes >= 0 && bytes <= this.bytes, 'TurnBatcher.forget: more bytes than queued');
    this.bytes -= bytes;
  }

  /**
   * Removes the oldest queued item and returns it; its bytes no longer count. For a queue bounded
   * by its owner that drops from the front (Raft retransmits what it lost). Asserts one is queued.
   */
  dropOldest(): T {
    assert(this.head < this.items.length, 'TurnBatcher.dropOldest: nothing queued');
    const item = this.items[this.head] as T;
    this.items[this.head++] = undefined;
    this.bytes -= this.options.sizeOf(item);
    this.compact();
    return item;
  }

  /**
   * Bounds the queue from the front: drops the oldest items while more than `itemsMax` are queued
   * or their bytes pass `bytesMax`, always keeping the newest one (an owner that may lose what is
   * old: Raft retransmits). Returns how many were dropped.
   */
  dropOldestPast(itemsMax: number, bytesMax: number): number {
    let dropped = 0;
    while (this.length > itemsMax || (this.bytes > bytesMax && this.length > 1)) {
      this.dropOldest();
      dropped++;
    }
    return dropped;
  }

  /**
   * Takes the next frame off the front of the queue into `into` (emptied first; the caller's, so
   * a writer taking frames one at a time allocates nothing per frame): items in order until the
   * next would pass `frameBytesMax` and the frame holds something already; dropped items are
   * left out. Returns the frame's bytes, 0 when nothing is queued (the queue is then empty).
   */
  takeFrame(frameBytesMax: number, into: T[]): number {
    assert(frameBytesMax > 0, 'TurnBatcher.takeFrame: frameBytesMax must be positive');
    into.length = 0;
    const items = this.items;
    let bytes = 0;
    while (this.head < items.length) {
      const item = items[this.head] as T;
      const size = this.options.sizeOf(item);
      if (bytes > 0 && bytes + size > frameBytesMax) break;
      items[this.head++] = undefined;
      if (size === 0) continue;
      into.push(item);
      bytes += size;
    }
    this.bytes -= bytes;
    this.compact();
    return bytes;
  }

  /** Takes everything queued as frames, in order, cut as `takeFrame` cuts them. */
  takeFrames(frameBytesMax: number): BatchedFrame<T>[] {
    const frames: BatchedFrame<T>[] = [];
    while (this.length > 0) {
      const items: T[] = [];
      const bytes = this.takeFrame(frameBytesMax, items);
      if (bytes > 0) frames.push({ items, bytes });
    }
    return frames;
  }

  /** Empties the queue; returns what it held, oldest first. */
  clear(): T[] {
    const items = (this.head === 0 ? this.items : this.items.slice(this.head)) as T[];
    this.items = [];
    this.head = 0;
    this.bytes = 0;
    return items;
  }

  /** Forgets the taken slots once they are most of the array (all of it: just empties it). */
  private compact(): void {
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= COMPACT_HEAD_MIN && this.head * 2 >= this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
  }
}
