// The per-turn frame batcher of the project's stream writers (the gateway's MemberConnection and
// the member's StreamSession): pieces queued during one turn of the event loop leave together,
// cut into frames of at most frameBytesMax bytes (a piece larger than that travels alone), so a
// burst of calls or answers costs one stream write per frame instead of one per piece. The turn
// boundary is the caller's (`schedule`: setImmediate in the I/O shell) and so is the writing:
// the batcher does no I/O and reads no clock, which keeps it in this package, the lowest one both
// writers import.

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

export class TurnBatcher<T> {
  private items: T[] = [];
  private bytes = 0;
  private scheduled = false;

  constructor(private readonly options: TurnBatcherOptions<T>) {}

  /** Items queued (dropped ones included until taken). */
  get length(): number {
    return this.items.length;
  }

  /** Bytes queued and not yet taken. */
  get queuedBytes(): number {
    return this.bytes;
  }

  /** The queue, oldest first (read only: the owner marks items dropped through `forget`). */
  get queued(): readonly T[] {
    return this.items;
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
   * Takes everything queued as frames, in order: an item starts a new frame when adding it would
   * pass `frameBytesMax` and the frame holds something already. Dropped items are left out.
   */
  takeFrames(frameBytesMax: number): BatchedFrame<T>[] {
    assert(frameBytesMax > 0, 'TurnBatcher.takeFrames: frameBytesMax must be positive');
    const frames: BatchedFrame<T>[] = [];
    let items: T[] = [];
    let bytes = 0;
    for (const item of this.items) {
      const size = this.options.sizeOf(item);
      if (size === 0) continue;
      if (bytes > 0 && bytes + size > frameBytesMax) {
        frames.push({ items, bytes });
        items = [];
        bytes = 0;
      }
      items.push(item);
      bytes += size;
    }
    if (bytes > 0) frames.push({ items, bytes });
    this.clear();
    return frames;
  }

  /** Empties the queue; returns what it held, oldest first. */
  clear(): T[] {
    const items = this.items;
    this.items = [];
    this.bytes = 0;
    return items;
  }
}
