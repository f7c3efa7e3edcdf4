// What a RaftNode replicates: the application's deterministic state machine.

/** A committed application entry, handed to `StateMachine.apply` exactly once, in log order. */
export interface AppliedEntry {
  readonly index: number;
  readonly term: number;
  readonly data: Uint8Array;
}

/**
 * A snapshot of the state as it was when `beginSnapshot()` was called, produced in slices so
 * no single turn blocks for long. Entries applied between slices do not change the result.
 */
export interface SnapshotWork {
  /**
   * Encodes roughly `budgetBytes` more and returns the bytes encoded by this step (the next
   * chunk of the snapshot, possibly empty), and whether it was the last. The chunks are stored
   * and sent as they are, never joined. Not called again after the last.
   */
  step(budgetBytes: number): SnapshotSlice;
  /**
   * Abandons the work (the state was replaced by a restore, or the node stops); step is never
   * called after.
   */
  cancel(): void;
}

export interface SnapshotSlice {
  readonly chunk: Uint8Array;
  readonly done: boolean;
}

export interface StateMachine {
  /**
   * Applies a committed entry. Must be deterministic (same entries, same state on every
   * replica). The return value goes to the proposer (on the leader that proposed it). Throwing
   * is treated as a bug: the node stops.
   */
  apply(entry: AppliedEntry): unknown;
  /**
   * Optional: called after each run of applied entries (one Ready's committed entries), so the
   * writes those applies buffered go out as one. Throwing stops the node, as apply's does.
   */
  afterApply?(): void;
  /** The whole state as bytes, reflecting every entry applied so far. */
  snapshot(): Uint8Array;
  /**
   * Optional: begins a snapshot of the state as it is now (every entry applied so far), finished
   * by SnapshotWork.step over later turns. Without it, snapshot() is used.
   */
  beginSnapshot?(): SnapshotWork;
  /**
   * Replaces the whole state by one produced by `snapshot()` or `beginSnapshot()` (on any
   * replica), given as the chunks it is stored or received in, read once, in order. A chunk
   * may be read from a file as it is reached: iterating can throw (StorageError).
   */
  restore(chunks: Iterable<Uint8Array>): void;
}
