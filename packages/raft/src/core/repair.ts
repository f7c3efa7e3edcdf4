// Repair without a leader: what a replica answers to a damaged one's RepairRequest. Pure.
//
// A damaged replica (RaftCore's `damage`: it acknowledged entries up to (damageTerm,
// damageIndex) and lost them to bad bytes) neither campaigns nor votes for a log that does not
// cover that end, so it is normally repaired by the leader like any follower. When no leader
// can be elected without it (simulation seed 696573: the one voter that could win lost its
// tail; its only other copy is on a learner, and the other voter's log is older), it asks its
// peers for the log instead.
//
// Why taking a peer's log is safe. A replica answers only if its log holds an entry of term
// `damageTerm` at `damageIndex`; call its log up to there P. P is a log Raft produced, so the
// Log Matching Property holds between P and every other log, and:
//   - every entry committed by a majority that counted the asker's acknowledgement is in P.
//     That majority committed an entry c of some term T that the asker held (entries before c
//     commit with it), so c sat in the lost log at an index <= damageIndex, and T <= damageTerm
//     (the mark is the lost log's end, or its term raised to the asker's term). If T <
//     damageTerm, the leader that wrote P's last entry held c when elected (Leader Completeness,
//     Raft 5.4.3); if T = damageTerm, that leader wrote c itself; either way P holds c, and all
//     before it, by Log Matching.
//   - the asker only ever gains entries: the answer continues from the asker's last entry when
//     this replica holds it with the same term, and never replaces what the asker holds with
//     other entries (a request that disagrees is not answered), except by a snapshot when the
//     asker's log ends before this replica's; a snapshot is applied state, committed, and holds
//     every committed entry up to its index.
// So once its log ends at (damageTerm, damageIndex) the asker holds everything committed that
// it had acknowledged, in a log whose end is at least as up to date as the lost one: every vote
// it gives is one Raft would give with its old log, and the proof of Leader Completeness needs
// nothing of the log's origin but Log Matching. Its damage ends there, as after a leader's repair.

import {
  MessageType,
  type AppendEntries,
  type NodeId,
  type RepairRequest,
  type Snapshot,
  type StorageDamage,
} from '../types.js';
import type { RaftLog } from './log.js';
import type { SnapshotSend } from './ready.js';

/** What the answering replica holds (read only). */
export interface RepairSource {
  readonly id: NodeId;
  readonly term: number;
  readonly log: RaftLog;
  readonly snapshot: Snapshot | null;
  readonly appendBytesMax: number;
  readonly snapshotChunkBytes: number;
}

export type RepairAnswer =
  | { readonly kind: 'entries'; readonly message: AppendEntries }
  | { readonly kind: 'snapshot'; readonly send: SnapshotSend }
  /** This replica does not hold the damaged end: pass the request on (once). */
  | { readonly kind: 'relay' }
  /** It holds the end but has nothing the asker may take (or the asker needs nothing). */
  | { readonly kind: 'none' };

/** The answer to `m` from `source` (see the file comment). */
export function repairAnswer(source: RepairSource, m: RepairRequest): RepairAnswer {
  const log = source.log;
  if (log.term(m.damageIndex) !== m.damageTerm) return { kind: 'relay' };
  // Entries whose payloads a leader released are not sent: past them, only a snapshot helps.
  if (m.lastLogIndex >= log.releasedIndex()) {
    // Only ever extend the asker's log: one that disagrees with ours is not ours to replace.
    if (m.lastLogIndex >= m.damageIndex || !log.matchTerm(m.lastLogIndex, m.lastLogTerm)) {
      return { kind: 'none' };
    }
    const entries = log.slice(m.lastLogIndex + 1, m.damageIndex + 1, source.appendBytesMax);
    const message: AppendEntries = {
      type: MessageType.AppendEntries,
      from: source.id,
      to: m.origin,
      term: source.term,
      prevLogIndex: m.lastLogIndex,
      prevLogTerm: m.lastLogTerm,
      entries,
      leaderCommit: 0,
      leaderTick: 0,
      repair: true,
    };
    return { kind: 'entries', message };
  }
  const snapshot = source.snapshot;
  if (snapshot === null) return { kind: 'none' };
  const { meta, data } = snapshot;
  // The snapshot must lie on P: at or below the damaged end, and part of this log.
  if (meta.index > m.damageIndex || log.term(meta.index) !== meta.term) return { kind: 'none' };
  const size = data.dataBytes;
  const offset = m.snapshotIndex === meta.index ? Math.min(m.snapshotOffset, size) : 0;
  const end = Math.min(size, offset + source.snapshotChunkBytes);
  const send: SnapshotSend = {
    from: source.id,
    to: m.origin,
    term: source.term,
    meta,
    offset,
    end,
    done: end === size,
    data,
    repair: true,
  };
  return { kind: 'snapshot', send };
}

/** A damaged replica's request for its lost log, to `to`. */
export function repairRequest(
  from: NodeId,
  to: NodeId,
  term: number,
  damage: StorageDamage,
  log: RaftLog,
  receiving: { readonly index: number; readonly offset: number } | null,
): RepairRequest {
  return {
    type: MessageType.RepairRequest,
    from,
    to,
    term,
    origin: from,
    damageIndex: damage.lastIndex,
    damageTerm: damage.lastTerm,
    lastLogIndex: log.lastIndex(),
    lastLogTerm: log.lastTerm(),
    snapshotIndex: receiving?.index ?? 0,
    snapshotOffset: receiving?.offset ?? 0,
  };
}
