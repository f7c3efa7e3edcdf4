// Shared vocabulary of the Raft package: log entries, hard state, messages, and the two
// interfaces the driver is given (storage and transport). The pure core depends on the data
// types only; the interfaces are implemented by the I/O shell (memory, LevelDB, gRPC, simulator).

/** Member id, unique in the cluster. Short ASCII (`n1`, `member-2`). */
export type NodeId = string;
/** Raft group id: `meta` for the metadata group, `spool:<name>` for a spool. */
export type GroupId = string;

/**
 * The largest term any member accepts or reaches: 2^32 - 1, an election a second for 136 years.
 * Terms travel in tokens (32 bits), so a term past this is refused at the transport, and a node
 * at this term does not campaign again (see raft.ts).
 */
export const RAFT_TERM_MAX = 0xffff_ffff;

export const enum EntryType {
  /** Application command, opaque bytes for the state machine. */
  Normal = 0,
  /** Empty entry a new leader appends to commit entries of earlier terms (Raft 5.4.2). */
  Noop = 1,
  /** Membership change; `data` is an encoded ConfChange (see conf-change.ts). */
  ConfChange = 2,
}

export interface Entry {
  readonly index: number;
  readonly term: number;
  readonly type: EntryType;
  readonly data: Uint8Array;
}

/** Must be durable before any message that depends on it leaves the node. */
export interface HardState {
  readonly term: number;
  readonly vote: NodeId | null;
  readonly commit: number;
  /**
   * Set by storage when it found entries it had stored unreadable (a flipped bit, a torn
   * record) and dropped them; kept durable until the replica has caught up again (see
   * RaftCore's `damage`). Absent or null: nothing was lost.
   */
  readonly damage?: StorageDamage | null;
}

/**
 * What a replica may have acknowledged and then lost: its log reached at least `lastIndex`,
 * ending in an entry of term `lastTerm` or lower (storage gives an upper bound when the last
 * record itself is unreadable). A leader may have counted those acknowledgements toward a commit.
 */
export interface StorageDamage {
  readonly lastIndex: number;
  readonly lastTerm: number;
}

export interface ClusterConfig {
  readonly voters: readonly NodeId[];
  readonly learners: readonly NodeId[];
}

export interface SnapshotMeta {
  /** Last log index the snapshot covers (inclusive). */
  readonly index: number;
  readonly term: number;
  readonly config: ClusterConfig;
}

/**
 * A snapshot's state-machine bytes, as produced by the application, held in memory (the chunks
 * they were produced or received in) or in a file that storage reads a frame at a time: never
 * joined into one buffer (a typed array has a length limit, and a state of gigabytes would
 * need one that large). The core keeps only this handle; the shell reads through it.
 */
export interface SnapshotData extends Iterable<Uint8Array> {
  /** Total bytes. */
  readonly dataBytes: number;
  /**
   * The bytes in order, in chunks of bounded size, each checked as it is read from a file
   * (StorageError `corrupt` or `io` when that fails).
   */
  [Symbol.iterator](): Iterator<Uint8Array>;
  /** Bytes `[start, end)` (an InstallSnapshot chunk); throws as iterating does. */
  slice(start: number, end: number): Uint8Array;
}

export interface Snapshot {
  readonly meta: SnapshotMeta;
  readonly data: SnapshotData;
}

/** Snapshot data held in memory as `chunks` (empty ones dropped), never joined. */
export class ChunkedSnapshotData implements SnapshotData {
  readonly chunks: readonly Uint8Array[];
  readonly dataBytes: number;

  constructor(chunks: Iterable<Uint8Array>) {
    const kept: Uint8Array[] = [];
    let dataBytes = 0;
    for (const chunk of chunks) {
      if (chunk.byteLength === 0) continue;
      kept.push(chunk);
      dataBytes += chunk.byteLength;
    }
    this.chunks = kept;
    this.dataBytes = dataBytes;
  }

  [Symbol.iterator](): Iterator<Uint8Array> {
    return this.chunks[Symbol.iterator]();
  }

  /** A view of one chunk when the range lies in it, otherwise a copy of just the range. */
  slice(start: number, end: number): Uint8Array {
    const chunks = this.chunks;
    let base = 0;
    let i = 0;
    while (i < chunks.length && base + chunks[i]!.byteLength <= start) {
      base += chunks[i++]!.byteLength;
    }
    if (i === chunks.length || end <= start) return new Uint8Array(0);
    const first = chunks[i]!;
    if (end - base <= first.byteLength) return first.subarray(start - base, end - base);
    const out = new Uint8Array(Math.min(end, this.dataBytes) - start);
    let at = 0;
    for (; i < chunks.length && at < out.length; base += chunks[i++]!.byteLength) {
      const chunk = chunks[i]!;
      const from = Math.max(0, start - base);
      const to = Math.min(chunk.byteLength, end - base);
      out.set(chunk.subarray(from, to), at);
      at += to - from;
    }
    return out;
  }
}

/** A snapshot of `chunks` held in memory. */
export function snapshotOf(meta: SnapshotMeta, chunks: Iterable<Uint8Array>): Snapshot {
  return { meta, data: new ChunkedSnapshotData(chunks) };
}

export const enum MessageType {
  AppendEntries = 0,
  AppendEntriesResponse = 1,
  RequestVote = 2,
  RequestVoteResponse = 3,
  InstallSnapshot = 4,
  InstallSnapshotResponse = 5,
  TimeoutNow = 6,
  RepairRequest = 7,
}

interface MessageBase {
  readonly from: NodeId;
  readonly to: NodeId;
  readonly term: number;
}

export interface AppendEntries extends MessageBase {
  readonly type: MessageType.AppendEntries;
  readonly prevLogIndex: number;
  readonly prevLogTerm: number;
  readonly entries: readonly Entry[];
  readonly leaderCommit: number;
  /**
   * The leader's logical clock (ticks) when it sent this message, echoed back in the response:
   * an acknowledgement proves the follower heard from the leader no earlier than this tick, which
   * is what the leader lease is measured from (Raft thesis 6.4.1). Opaque to followers.
   */
  readonly leaderTick: number;
  /**
   * Sent by a replica holding a damaged replica's lost log end, not by a leader (see
   * RepairRequest): the receiver neither adopts the term nor takes the sender for a leader.
   */
  readonly repair?: boolean;
}

export interface AppendEntriesResponse extends MessageBase {
  readonly type: MessageType.AppendEntriesResponse;
  readonly success: boolean;
  /**
   * On success: highest index now durably matching the leader. On failure: the request's
   * `prevLogIndex` that did not match (lets the leader ignore stale or duplicated rejections).
   */
  readonly matchIndex: number;
  /** On failure: fast-backtracking hints (conflicting term and its first index, or log length). */
  readonly conflictIndex: number;
  readonly conflictTerm: number;
  /** Echo of the request's `leaderTick` (see AppendEntries). */
  readonly leaderTick: number;
}

export interface RequestVote extends MessageBase {
  readonly type: MessageType.RequestVote;
  /** Pre-vote (Raft thesis 9.6): `term` is the term the candidate would campaign in. */
  readonly preVote: boolean;
  readonly lastLogIndex: number;
  readonly lastLogTerm: number;
  /**
   * Set when campaigning because of TimeoutNow (leadership transfer): bypasses leader stickiness.
   */
  readonly transfer: boolean;
}

export interface RequestVoteResponse extends MessageBase {
  readonly type: MessageType.RequestVoteResponse;
  readonly preVote: boolean;
  readonly granted: boolean;
}

export interface InstallSnapshot extends MessageBase {
  readonly type: MessageType.InstallSnapshot;
  readonly meta: SnapshotMeta;
  /** Byte offset of this chunk in the snapshot data. */
  readonly offset: number;
  readonly chunk: Uint8Array;
  readonly done: boolean;
  /** A chunk of a repair, not from a leader (see AppendEntries `repair`). */
  readonly repair?: boolean;
}

export interface InstallSnapshotResponse extends MessageBase {
  readonly type: MessageType.InstallSnapshotResponse;
  readonly snapshotIndex: number;
  /** Next offset the follower expects; equals total length when done. */
  readonly nextOffset: number;
  readonly done: boolean;
  readonly success: boolean;
}

export interface TimeoutNow extends MessageBase {
  readonly type: MessageType.TimeoutNow;
}

/**
 * A damaged replica (RaftCore's `damage`) that hears from no leader asks its peers for the log it
 * lost: only a replica whose log holds an entry of term `damageTerm` at `damageIndex` answers,
 * with the entries after the asker's last one (a repair AppendEntries) or, when it no longer
 * holds those, chunks of its snapshot (a repair InstallSnapshot). A replica that cannot answer
 * a request straight from the asker passes it once to the members it knows. `term` is the
 * sender's and changes nobody's.
 */
export interface RepairRequest extends MessageBase {
  readonly type: MessageType.RepairRequest;
  /** The damaged replica (a relayed request keeps it): answers go there. */
  readonly origin: NodeId;
  readonly damageIndex: number;
  readonly damageTerm: number;
  /** The end of the asker's log now: entries are sent from there on. */
  readonly lastLogIndex: number;
  readonly lastLogTerm: number;
  /** The snapshot the asker is receiving (0: none) and the offset it needs next. */
  readonly snapshotIndex: number;
  readonly snapshotOffset: number;
}

export type Message =
  | AppendEntries
  | AppendEntriesResponse
  | RequestVote
  | RequestVoteResponse
  | InstallSnapshot
  | InstallSnapshotResponse
  | TimeoutNow
  | RepairRequest;

/** What a group finds on disk at start. `entries` follow the snapshot (or index 1) contiguously. */
export interface RestoredState {
  readonly hardState: HardState;
  readonly snapshot: Snapshot | null;
  readonly entries: readonly Entry[];
}

/**
 * Durable storage of one Raft group. Many groups share one `StorageEngine` (one LevelDB per
 * process); everything saved during one event-loop turn, for all groups, is written in one synced
 * batch (group commit). A returned promise resolves only once the write is durable (fsynced),
 * with one exception (etcd's MustSync): a `save` with no entries whose hard state differs from
 * the previous one only in `commit` may resolve without an fsync of its own; a crash may lose
 * that commit index (harmless: it is learned again from the leader).
 */
export interface LoadOptions {
  /**
   * A snapshot that fails its checksum is dropped with every entry after it (useless without
   * it), durably, and the hard state gets a `damage` mark covering the lost log's end: the
   * replica starts empty and a peer sends it a snapshot. Only for a group with peers: without
   * one, what was lost is beyond repair and the load must fail instead.
   */
  readonly dropCorruptSnapshot?: boolean;
}

export interface GroupStorage {
  readonly group: GroupId;
  /**
   * Reads what was durably stored; a torn tail (partial batch, bad checksum) is dropped.
   * Call it once before any write: writes are planned against what it found. A snapshot file
   * that fails its checksum rejects `corrupt`, unless `options.dropCorruptSnapshot` (see
   * LoadOptions).
   */
  load(options?: LoadOptions): Promise<RestoredState>;
  /**
   * Persists `hardState` (if given) and `entries` (contiguous, ascending). Entries at or after
   * `entries[0].index` that were stored before are replaced (log truncation on conflict).
   */
  save(hardState: HardState | null, entries: readonly Entry[]): Promise<void>;
  /**
   * Stores a snapshot durably and drops log entries with index <= snapshot.meta.index. Entries
   * after it are kept only if the stored entry at snapshot.meta.index has the snapshot's term;
   * otherwise the whole log is discarded (Raft figure 13, InstallSnapshot steps 6-7). Resolves
   * with the stored data (read from where it was stored: the caller may drop what it held).
   */
  saveSnapshot(snapshot: Snapshot): Promise<SnapshotData>;
  /**
   * Optional: begins storing the snapshot `meta` describes from its chunks as they are produced
   * (a state machine's slices), so that it is never held whole in memory. The sink's `finish`
   * then stores it as saveSnapshot does, in call order with the group's other snapshot saves.
   */
  beginSnapshot?(meta: SnapshotMeta): SnapshotSink;
  /**
   * Drops log entries with index <= `index` (after a local snapshot). `index` must not pass the
   * latest saved snapshot's index (that would leave a gap after it): an assertion fails.
   */
  compact(index: number): Promise<void>;
  /** Removes everything of the group (member removed from the group). */
  destroy(): Promise<void>;
}

/** A snapshot being stored as it is produced (GroupStorage.beginSnapshot). Await each call. */
export interface SnapshotSink {
  /** Writes the next chunk; resolves once it is written (synced as the file grows). */
  append(chunk: Uint8Array): Promise<void>;
  /** Stores the snapshot durably; resolves with the stored data, as saveSnapshot does. */
  finish(): Promise<SnapshotData>;
  /** Drops what was written (the work was abandoned); never rejects. */
  abort(): Promise<void>;
}

export interface StorageEngine {
  group(id: GroupId): GroupStorage;
  /** Groups that have any state on disk. */
  groups(): Promise<GroupId[]>;
  close(): Promise<void>;
  /**
   * After a failed write (calls rejected with StorageError `io`), makes the engine writable
   * again by re-reading what the medium holds; never assumes the failed write happened or did
   * not. Call it only once no group is in use (their nodes closed); every group must `load()`
   * again before it writes. Rejects while the medium still fails (the engine stays refusing).
   * Optional: an engine without it cannot recover in process.
   */
  reopen?(): Promise<void>;
}

/** Delivers messages between members. Best effort: may drop, delay, reorder or duplicate. */
export interface Transport {
  /** Queues messages for delivery; never blocks, never throws for an unreachable peer. */
  send(group: GroupId, messages: readonly Message[]): void;
  /** Registers the receiver of messages addressed to this member. */
  onMessage(handler: (group: GroupId, message: Message) => void): void;
  close(): Promise<void>;
}
