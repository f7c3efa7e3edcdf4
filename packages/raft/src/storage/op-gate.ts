// Keeps one group's storage calls in call order when some of them are asynchronous before they
// can stage their writes (a snapshot file must be fsynced before its record; load and destroy
// read the store first). Synchronous calls stage at once unless a held call is running, in which
// case they wait, in order, until it has staged its own writes.

import assert from 'node:assert/strict';
import { defined } from '../core/assert.js';

export class OpGate {
  private held: Array<() => void> | null = null;

  /** True while a held operation has not released the gate. */
  get busy(): boolean {
    return this.held !== null;
  }

  /** Runs `op` now, or after the held operations called before it have released the gate. */
  run(op: () => void): void {
    if (this.held) this.held.push(op);
    else op();
  }

  /**
   * Runs `op` in order, holding every later call until `op` calls `release` (once, on every
   * path: after staging its writes, or on failure).
   */
  runHeld(op: (release: () => void) => void): void {
    this.run(() => {
      this.held = [];
      let released = false;
      op(() => {
        assert(!released, 'gate released twice');
        released = true;
        this.release();
      });
    });
  }

  private release(): void {
    const waiting = this.held;
    assert(waiting !== null, 'release without hold');
    this.held = null;
    for (let i = 0; i < waiting.length; i++) {
      if (this.held) {
        // A released call took the gate again: the rest wait for it, still in order.
        (this.held as Array<() => void>).push(...waiting.slice(i));
        return;
      }
      defined(waiting[i], 'waiting call')();
    }
  }
}
