// What the core hands to its driver in one batch (etcd's Ready). The driver must, in this order:
//   1. if `snapshot`: restore the state machine from it and persist it (storage.saveSnapshot);
//   2. persist `hardState` and `entries` (storage.save), after any earlier Ready's writes;
//   3. send `messages` and `snapshotSends` (read: snapshotMessages) at once (they do not
//      depend on this Ready's writes: the leader replicates in parallel with its own fsync,
//      Raft thesis 10.2.1);
//   4. apply `committed` in order;
//   5. once this Ready's writes (and every earlier one's) are durable, call
//      `core.onPersisted(ready)` and then send `messagesAfterPersist` (votes, append responses:
//      they promise durable state).

import {
  type Entry,
  type HardState,
  type InstallSnapshot,
  type Message,
  MessageType,
  type Snapshot,
  type SnapshotData,
} from '../types.js';

/**
 * An InstallSnapshot chunk to send, without its bytes: the driver reads `[offset, end)` of
 * `data` (from a file, for stored snapshots) into the message (see `snapshotMessages`), so the
 * core never touches snapshot bytes. At most one per follower in snapshot state is in flight.
 */
export interface SnapshotSend {
  readonly from: string;
  readonly to: string;
  readonly term: number;
  readonly meta: Snapshot['meta'];
  readonly offset: number;
  readonly end: number;
  readonly done: boolean;
  readonly data: SnapshotData;
  /** A chunk of a repair, not of a leader's snapshot (see RepairRequest). */
  readonly repair?: boolean;
}

export interface Ready {
  /** Position of this Ready in the sequence handed out (1, 2, ...); `onPersisted` goes in order. */
  readonly seq: number;
  /** Term, vote and commit to persist, or null when unchanged. */
  readonly hardState: HardState | null;
  /** Snapshot received from the leader: persist it and restore the state machine from it. */
  readonly snapshot: Snapshot | null;
  /** Entries to persist; they replace stored entries from `entries[0].index` on. */
  readonly entries: readonly Entry[];
  /** Messages that may leave before this Ready's writes are durable. */
  readonly messages: readonly Message[];
  /** InstallSnapshot chunks to read and send, like `messages` (see SnapshotSend). */
  readonly snapshotSends: readonly SnapshotSend[];
  /** Messages that may leave only once this Ready's writes are durable. */
  readonly messagesAfterPersist: readonly Message[];
  /** Committed entries to apply, ascending and contiguous. */
  readonly committed: readonly Entry[];
}

/** True when the Ready has something to write to storage. */
export function mustPersist(ready: Ready): boolean {
  return ready.hardState !== null || ready.snapshot !== null || ready.entries.length > 0;
}

/** The InstallSnapshot messages of `sends`, each chunk read from its snapshot's data. */
export function snapshotMessages(sends: readonly SnapshotSend[]): InstallSnapshot[] {
  return sends.map((send) => {
    const message: InstallSnapshot = {
      type: MessageType.InstallSnapshot,
      from: send.from,
      to: send.to,
      term: send.term,
      meta: send.meta,
      offset: send.offset,
      chunk: send.data.slice(send.offset, send.end),
      done: send.done,
    };
    return send.repair === true ? { ...message, repair: true } : message;
  });
}
