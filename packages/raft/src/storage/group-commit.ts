// Group commit: every call staged while the writer is idle during one event-loop turn, for every
// group, lands in one batch written with one fsync; calls staged while a batch is being written
// accumulate into the next one. Under load the batches grow and the fsync rate does not.
// All calls of one batch share one promise, which settles when that batch is durable.

import assert from 'node:assert/strict';
import { defined } from '../core/assert.js';
import { StorageError } from './storage-error.js';
import { StatsRecorder } from './storage-stats.js';

/**
 * Where batches go: `create` starts an empty batch, `write` writes it, with one fsync when
 * `sync` (otherwise it becomes durable with the next synced write).
 */
export interface CommitSink<B> {
  create(): B;
  write(batch: B, sync: boolean): Promise<void>;
  /** Releases a batch that will never be written (after a crash hook or a failed write). */
  discard?(batch: B): void;
}

export interface GroupCommitOptions {
  /** Bytes staged and not yet durable above which calls are refused (`busy`). > 0. */
  readonly pendingBytesMax: number;
  /** A batch holding at least this many bytes takes no more calls; the next batch does. > 0. */
  readonly batchBytesMax: number;
  /** Write on the next turn by itself (true), or only when `flush()` is called (false). */
  readonly autoFlush: boolean;
  /** Monotonic clock in milliseconds, for fsync latency. */
  readonly nowMs: () => number;
}

interface Unit<B> {
  readonly batch: B;
  calls: number;
  entries: number;
  bytes: number;
  /** Some call of the batch needs an fsync. */
  mustSync: boolean;
  readonly done: Promise<void>;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export class GroupCommit<B> {
  readonly stats = new StatsRecorder();
  private readonly queue: Unit<B>[] = [];
  private inFlight: Unit<B> | null = null;
  private scheduled = false;
  private failure: StorageError | null = null;
  private pendingBytesValue = 0;
  private pendingCallsValue = 0;

  constructor(
    private readonly sink: CommitSink<B>,
    private readonly options: GroupCommitOptions,
  ) {
    assert(options.pendingBytesMax > 0 && options.batchBytesMax > 0, 'group commit bounds');
    assert(options.batchBytesMax <= options.pendingBytesMax, 'batchBytesMax <= pendingBytesMax');
  }

  get pendingBytes(): number {
    return this.pendingBytesValue;
  }

  get pendingCalls(): number {
    return this.pendingCallsValue;
  }

  /** The error every call is refused with after a failed write, else null. */
  get failed(): StorageError | null {
    return this.failure;
  }

  /**
   * Throws the error a call of `bytes` bytes would be refused with: `io` after a failed write,
   * `busy` when more than `pendingBytesMax` would be pending (a lone call of any size is let in).
   */
  admit(bytes: number): void {
    if (this.failure) throw this.failure;
    const over = this.pendingBytesValue + bytes > this.options.pendingBytesMax;
    if (this.pendingBytesValue > 0 && over) {
      throw new StorageError(
        'busy',
        `${this.pendingBytesValue} bytes pending, bound ${this.options.pendingBytesMax}`,
      );
    }
  }

  /**
   * Stages one call of `bytes` bytes and `entries` log entries: `fill` adds its writes to the
   * open batch, synchronously. Call `admit(bytes)` first: `submit` assumes it passed. Resolves
   * when the batch is written: durably (fsynced) unless every call of the batch passed
   * `mustSync = false` (writes whose loss is harmless, like a commit index: etcd's MustSync).
   * Rejects with `io` if the write fails.
   */
  submit(bytes: number, entries: number, fill: (batch: B) => void, mustSync = true): Promise<void> {
    assert(this.failure === null, 'submit after a failed write');
    const unit = this.openUnit();
    try {
      fill(unit.batch);
    } catch (error) {
      // A failed assertion in `fill` (a caller bug) must not leave an empty batch that nothing
      // will ever write: barrier() would wait on it forever.
      if (unit.calls === 0) {
        this.queue.pop();
        this.sink.discard?.(unit.batch);
      }
      throw error;
    }
    unit.calls++;
    unit.mustSync ||= mustSync;
    unit.entries += entries;
    unit.bytes += bytes;
    this.pendingBytesValue += bytes;
    this.pendingCallsValue++;
    this.schedule();
    return unit.done;
  }

  /** Resolves when everything staged so far is durable (at once if nothing is pending). */
  barrier(): Promise<void> {
    const last = this.queue.at(-1) ?? this.inFlight;
    if (last) return last.done;
    return this.failure ? Promise.reject(this.failure) : Promise.resolve();
  }

  /** Writes everything staged now (for `autoFlush: false`); resolves when it is durable. */
  flush(): Promise<void> {
    const done = this.barrier();
    void this.drain();
    return done;
  }

  /**
   * Takes calls again after a failed write; a no-op when nothing failed. Only for an engine that
   * has made its medium trustworthy again and whose groups all re-read their state before their
   * next write (LevelStorageEngine.reopen): the failed batch may or may not be on disk, so no
   * in-memory plan made before the failure may be written on top of it. Nothing is staged or
   * in flight after a failure (fail() aborted the rest, and admit() refused new calls).
   */
  reset(): void {
    if (this.failure === null) return;
    assert(this.inFlight === null && this.queue.length === 0, 'reset with writes pending');
    this.failure = null;
  }

  /**
   * Drops every staged batch that is not being written, rejecting its calls with `error`
   * (the memory engine's crash hook: what was not yet durable is lost).
   */
  abort(error: StorageError): void {
    for (const unit of this.queue.splice(0)) {
      this.sink.discard?.(unit.batch);
      this.pendingBytesValue -= unit.bytes;
      this.pendingCallsValue -= unit.calls;
      unit.reject(error);
    }
  }

  private openUnit(): Unit<B> {
    const last = this.queue[this.queue.length - 1];
    if (last && last.bytes < this.options.batchBytesMax) return last;
    let resolve!: () => void;
    let reject!: (error: Error) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // Calls may be fire-and-forget from the caller's view; a rejection must not crash Node as
    // unhandled. Callers that await the promise still see it.
    done.catch(() => undefined);
    const batch = this.sink.create();
    const unit: Unit<B> = {
      batch,
      calls: 0,
      entries: 0,
      bytes: 0,
      mustSync: false,
      done,
      resolve,
      reject,
    };
    this.queue.push(unit);
    return unit;
  }

  private schedule(): void {
    if (!this.options.autoFlush || this.scheduled || this.inFlight) return;
    this.scheduled = true;
    // setImmediate runs after this turn's I/O callbacks and microtasks: every call made in the
    // turn joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.drain();
    });
  }

  private async drain(): Promise<void> {
    if (this.inFlight) return;
    while (this.queue.length > 0 && this.failure === null) {
      const unit = defined(this.queue.shift(), 'queued unit');
      this.inFlight = unit;
      const startedMs = this.options.nowMs();
      try {
        await this.sink.write(unit.batch, unit.mustSync);
      } catch (cause) {
        this.inFlight = null;
        this.fail(unit, cause);
        return;
      }
      this.inFlight = null;
      const latencyMs = this.options.nowMs() - startedMs;
      if (unit.mustSync) this.stats.recordBatch(unit.calls, unit.entries, unit.bytes, latencyMs);
      else this.stats.recordUnsynced(unit.calls, unit.bytes);
      this.pendingBytesValue -= unit.bytes;
      this.pendingCallsValue -= unit.calls;
      unit.resolve();
    }
  }

  private fail(unit: Unit<B>, cause: unknown): void {
    // After a failed fsync the state of the file is unknown (fsyncgate): refuse everything until
    // the engine re-reads its medium and calls reset().
    const error = new StorageError('io', `batch write failed: ${String(cause)}`, { cause });
    this.failure = error;
    this.pendingBytesValue -= unit.bytes;
    this.pendingCallsValue -= unit.calls;
    unit.reject(error);
    this.abort(error);
  }
}
