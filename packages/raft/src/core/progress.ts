// The leader's view of one follower (etcd's tracker.Progress): what it is known to hold, what to
// send next, and in which of three modes replication runs:
//   probe      one AppendEntries at a time until the leader finds where the logs agree;
//   replicate  optimistic pipelining, up to `inflightMessagesMax` AppendEntries in flight;
//   snapshot   the follower is too far behind the log base; InstallSnapshot chunks, one at a time.

import { assert, defined } from './assert.js';

export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/** A tick value older than any real one ("never acknowledged"); finite, so it sorts safely. */
export const NEVER_TICK = -Number.MAX_SAFE_INTEGER;

/** Ring buffer of the last index of each AppendEntries in flight, oldest first. */
export class Inflights {
  private readonly buffer: number[];
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    assert(capacity >= 1, 'inflights capacity must be >= 1');
    this.buffer = new Array<number>(capacity).fill(0);
  }

  full(): boolean {
    return this.count === this.capacity;
  }

  size(): number {
    return this.count;
  }

  /** Records a message whose last entry is `lastIndex` (ascending). */
  add(lastIndex: number): void {
    assert(!this.full(), 'inflights overflow');
    this.buffer[(this.start + this.count) % this.capacity] = lastIndex;
    this.count += 1;
  }

  /** Forgets every message whose last index is <= `index` (acknowledged). */
  freeLE(index: number): void {
    while (this.count > 0 && defined(this.buffer[this.start], 'inflight slot') <= index) {
      this.start = (this.start + 1) % this.capacity;
      this.count -= 1;
    }
  }

  reset(): void {
    this.start = 0;
    this.count = 0;
  }
}

export class Progress {
  /**
   * Highest index known durably replicated on the follower. Decreases only when the follower
   * shows it lacks entries it acknowledged (`forgetLost`: its storage was lost).
   */
  match = 0;
  /** Next index to send. Always > match. */
  next: number;
  state: ProgressState = 'probe';
  /** Probe mode: a probe is out; wait for its answer (or a heartbeat answer) before the next. */
  probeSent = false;
  readonly inflights: Inflights;
  /** Snapshot mode: index of the snapshot being sent and offset of the chunk last sent. */
  pendingSnapshot = 0;
  snapshotOffset = 0;
  /** Ticks since the last snapshot chunk was sent or acknowledged. */
  snapshotStalledTicks = 0;
  /** Leader role tick at which the follower last answered anything (check-quorum evidence). */
  lastHeardTick: number;
  /**
   * Removed by an uncommitted configuration: still replicated to (so it can learn of its
   * removal) but counted nowhere; dropped once the removal commits.
   */
  leaving = false;
  /** Highest leader tick echoed by this follower in this term (lease evidence). */
  ackedLeaderTick = NEVER_TICK;

  /** `roleTick`: a new leader gives every follower one election timeout to answer. */
  constructor(next: number, inflightMessagesMax: number, roleTick: number) {
    this.next = next;
    this.lastHeardTick = roleTick;
    this.inflights = new Inflights(inflightMessagesMax);
  }

  /** True when nothing more may be sent now. */
  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }

  becomeProbe(next: number): void {
    this.state = 'probe';
    this.next = Math.max(next, this.match + 1);
    this.probeSent = false;
    this.inflights.reset();
    this.pendingSnapshot = 0;
  }

  becomeReplicate(): void {
    this.state = 'replicate';
    this.next = this.match + 1;
    this.probeSent = false;
    this.inflights.reset();
    this.pendingSnapshot = 0;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.state = 'snapshot';
    this.probeSent = false;
    this.inflights.reset();
    this.pendingSnapshot = snapshotIndex;
    this.snapshotOffset = 0;
    this.snapshotStalledTicks = 0;
  }

  /** A success acknowledged `index`; returns true when `match` grew. */
  maybeUpdate(index: number): boolean {
    let updated = false;
    if (index > this.match) {
      this.match = index;
      this.probeSent = false;
      updated = true;
    }
    this.next = Math.max(this.next, index + 1);
    return updated;
  }

  /**
   * The follower rejected an append whose previous index was `rejected`; `hintNext` is where
   * the logs may agree, from the fast-backtracking hints. Returns false for a stale rejection
   * (one that says nothing about the current probe or pipeline).
   */
  maybeDecrTo(rejected: number, hintNext: number): boolean {
    if (this.state === 'snapshot') return false;
    if (rejected <= this.match && hintNext <= this.match) return this.forgetLost(hintNext);
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
    } else if (this.next - 1 !== rejected) {
      return false;
    }
    this.next = Math.max(this.match + 1, Math.min(rejected, hintNext));
    this.probeSent = false;
    return true;
  }

  /**
   * A rejection at or below `match` whose hint says the follower's log agrees only below it:
   * either the follower lost entries it had acknowledged (its storage was wiped and it started
   * again from the founding entries), or the rejection is stale, reordered behind the
   * acknowledgement of later entries. Either way probe from the hint with `match` lowered:
   * counting fewer replicas is safe (the commit index never moves back), and after a stale
   * rejection the follower merely acknowledges again what it holds. Without this the leader
   * would skip the lost entries forever and a wiped follower would never be rebuilt.
   */
  private forgetLost(hintNext: number): boolean {
    const next = Math.max(1, hintNext);
    this.match = next - 1;
    this.next = next;
    this.probeSent = false;
    return true;
  }
}
