// What a RaftNode replicates: the application's deterministic state machine.

/** A committed application entry, handed to `StateMachine.apply` exactly once, in log order. */
export interface AppliedEntry {
  readonly index: number;
  readonly term: number;
  readonly data: Uint8Array;
}

export interface StateMachine {
  /**
   * Applies a committed entry. Must be deterministic (same entries, same state on every
   * replica). The return value goes to the proposer (on the leader that proposed it). Throwing
   * is treated as a bug: the node stops.
   */
  apply(entry: AppliedEntry): unknown;
  /** The whole state as bytes, reflecting every entry applied so far. */
  snapshot(): Uint8Array;
  /** Replaces the whole state by one produced by `snapshot()` (on any replica). */
  restore(data: Uint8Array): void;
}
