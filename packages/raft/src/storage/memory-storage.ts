// In-memory StorageEngine with the same semantics as the LevelDB one, for tests and the local
// variant. "Durable" is modelled: writes are staged and become durable when their batch is
// written (next turn by default, or on `sync()`), and `crash()` loses what was not yet durable.

import assert from 'node:assert/strict';
import { defined } from '../core/assert.js';
import {
  type Entry,
  type GroupId,
  type GroupStorage,
  type HardState,
  type RestoredState,
  type Snapshot,
  type SnapshotData,
  type SnapshotMeta,
  type SnapshotSink,
  snapshotOf,
  type StorageEngine,
} from '../types.js';
import { GroupCommit } from './group-commit.js';
import { LogSpan } from './log-span.js';
import { StorageError } from './storage-error.js';
import type { StorageStats } from './storage-stats.js';

export interface MemoryStorageOptions {
  /** Make writes durable on the next turn by themselves (default), or only on `sync()`. */
  readonly autoSync?: boolean;
  /** Backpressure bound on staged, not yet durable bytes (default 64 MiB). */
  readonly pendingBytesMax?: number;
}

const EMPTY_HARD_STATE: HardState = { term: 0, vote: null, commit: 0 };
/** Accounting size of a call beyond its payload bytes (keys, headers). */
const CALL_OVERHEAD_BYTES = 64;
const ENTRY_OVERHEAD_BYTES = 32;

interface DurableGroup {
  hardState: HardState;
  snapshot: Snapshot | null;
  /** Entries after the snapshot (or from index 1), contiguous. */
  entries: Entry[];
}

type DurableState = Map<GroupId, DurableGroup>;
type MemoryBatch = Array<(state: DurableState) => void>;

export class MemoryStorageEngine implements StorageEngine {
  private readonly durable: DurableState = new Map();
  private readonly handles = new Map<GroupId, MemoryGroupStorage>();
  private readonly commit: GroupCommit<MemoryBatch>;
  private closed = false;

  constructor(options: MemoryStorageOptions = {}) {
    const pendingBytesMax = options.pendingBytesMax ?? 64 * 1024 * 1024;
    this.commit = new GroupCommit<MemoryBatch>(
      {
        create: () => [],
        write: async (batch) => {
          for (const apply of batch) apply(this.durable);
        },
      },
      {
        pendingBytesMax,
        batchBytesMax: pendingBytesMax,
        autoFlush: options.autoSync ?? true,
        nowMs: () => performance.now(),
      },
    );
  }

  /** The storage of group `id`; the same object for the same id until `crash()`. */
  group(id: GroupId): GroupStorage {
    assert(id.length > 0, 'empty group id');
    let handle = this.handles.get(id);
    if (!handle) {
      handle = new MemoryGroupStorage(id, this.commit, this.durable, () => this.closed);
      this.handles.set(id, handle);
    }
    return handle;
  }

  /** Groups with durable state, in byte order. */
  async groups(): Promise<GroupId[]> {
    return [...this.durable.keys()].sort();
  }

  /** Waits for staged writes (call `sync()` first when `autoSync` is off), then refuses calls. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.commit.barrier().catch(() => undefined);
    this.closed = true;
  }

  /**
   * Test hook: the process "crashes". Everything staged and not yet durable is lost (those calls
   * reject with `crashed`), and every handle handed out so far is dead (its calls reject with
   * `crashed`), so a stale node cannot write into the restarted one's state. Handles obtained
   * afterwards see only durable state after `load()`.
   */
  crash(): void {
    this.commit.abort(new StorageError('crashed', 'crash hook: not yet durable'));
    for (const handle of this.handles.values()) handle.kill();
    this.handles.clear();
  }

  /** Makes everything staged so far durable (the fsync of `autoSync: false`). */
  sync(): Promise<void> {
    return this.commit.flush();
  }

  stats(): StorageStats {
    return this.commit.stats.snapshot(this.commit.pendingBytes, this.commit.pendingCalls);
  }
}

class MemoryGroupStorage implements GroupStorage {
  private span: LogSpan | null = null;
  private dead = false;

  constructor(
    readonly group: GroupId,
    private readonly commit: GroupCommit<MemoryBatch>,
    private readonly durable: DurableState,
    private readonly engineClosed: () => boolean,
  ) {}

  kill(): void {
    this.dead = true;
  }

  /**
   * Durable state of the group after everything staged before is durable. Call it before writing.
   */
  async load(): Promise<RestoredState> {
    this.check();
    await this.commit.barrier();
    this.check();
    const stored = this.durable.get(this.group);
    const snapshot = stored?.snapshot ?? null;
    const entries = stored ? [...stored.entries] : [];
    this.span = LogSpan.of(snapshot?.meta.index ?? 0, snapshot?.meta.term ?? 0, entries);
    return { hardState: stored?.hardState ?? EMPTY_HARD_STATE, snapshot, entries };
  }

  save(hardState: HardState | null, entries: readonly Entry[]): Promise<void> {
    let bytes = CALL_OVERHEAD_BYTES;
    for (const entry of entries) bytes += entry.data.length + ENTRY_OVERHEAD_BYTES;
    return this.stage(bytes, entries.length, (span, batch) => {
      span.append(entries);
      const copy = entries.slice();
      const group = this.group;
      if (!hardState && copy.length === 0) return;
      batch.push((state) => {
        const stored = durableGroup(state, group);
        if (hardState) stored.hardState = hardState;
        if (copy.length === 0) return;
        const first = defined(copy[0], 'first entry').index;
        const position = first - (stored.snapshot?.meta.index ?? 0) - 1;
        stored.entries.length = position;
        for (const entry of copy) stored.entries.push(entry);
      });
    });
  }

  /** Collects the chunks in memory; `finish` saves them as saveSnapshot does. */
  beginSnapshot(meta: SnapshotMeta): SnapshotSink {
    const chunks: Uint8Array[] = [];
    return {
      append: (chunk) => {
        chunks.push(chunk);
        return Promise.resolve();
      },
      finish: () => this.saveSnapshot(snapshotOf(meta, chunks)),
      abort: () => Promise.resolve(),
    };
  }

  /** Keeps the snapshot's data as given (chunks in memory); resolves with it. */
  saveSnapshot(snapshot: Snapshot): Promise<SnapshotData> {
    const bytes = CALL_OVERHEAD_BYTES + snapshot.data.dataBytes;
    const staged = this.stage(bytes, 0, (span, batch) => {
      const { index, term } = snapshot.meta;
      const dropped = span.applySnapshot(index, term);
      const group = this.group;
      batch.push((state) => {
        const stored = durableGroup(state, group);
        const previousIndex = stored.snapshot?.meta.index ?? 0;
        stored.entries = dropped.to > index ? [] : stored.entries.slice(index - previousIndex);
        stored.snapshot = snapshot;
      });
    });
    return staged.then(() => snapshot.data);
  }

  compact(index: number): Promise<void> {
    return this.stage(CALL_OVERHEAD_BYTES, 0, (span) => span.checkCompact(index));
  }

  destroy(): Promise<void> {
    return this.stage(CALL_OVERHEAD_BYTES, 0, (_span, batch) => {
      this.span = new LogSpan();
      const group = this.group;
      batch.push((state) => {
        state.delete(group);
      });
    });
  }

  private stage(
    bytes: number,
    entries: number,
    fill: (span: LogSpan, batch: MemoryBatch) => void,
  ): Promise<void> {
    try {
      this.check();
      this.commit.admit(bytes);
    } catch (error) {
      return Promise.reject(error);
    }
    const span = this.span;
    assert(span !== null, `group ${this.group}: load() before writing`);
    return this.commit.submit(bytes, entries, (batch) => fill(span, batch));
  }

  private check(): void {
    if (this.dead) {
      throw new StorageError('crashed', `group ${this.group}: handle from before a crash`);
    }
    if (this.engineClosed()) throw new StorageError('closed', 'engine closed');
  }
}

function durableGroup(state: DurableState, group: GroupId): DurableGroup {
  let stored = state.get(group);
  if (!stored) {
    stored = { hardState: EMPTY_HARD_STATE, snapshot: null, entries: [] };
    state.set(group, stored);
  }
  return stored;
}
