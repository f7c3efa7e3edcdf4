// The Raft settings a member applies to every group it hosts (metadata and spools).

import type { RaftNodeOptions } from '@spoolmq/raft';

/** Optional RaftNode settings; absent ones take the raft package's defaults. */
export type RaftTuning = Partial<
  Pick<
    RaftNodeOptions,
    | 'tickMs'
    | 'electionTicks'
    | 'heartbeatTicks'
    | 'leaseTicks'
    | 'inflightMessagesMax'
    | 'appendBytesMax'
    | 'snapshotChunkBytes'
    | 'snapshotEntries'
    | 'snapshotSliceBytes'
    | 'snapshotLogBytes'
    | 'retainEntries'
    | 'retainBytes'
    | 'logBudget'
    | 'proposalsPendingMax'
    | 'random'
    | 'nowMs'
    | 'soleMember'
  >
>;

/** Tick length (ms) the raft package uses when `tickMs` is not set. */
export const RAFT_TICK_MS_DEFAULT = 50;

const MEMBER_RAFT_SETTINGS = { guardLostStorage: true, releaseAppliedPayloads: true } as const;
type MemberRaftSettings = typeof MEMBER_RAFT_SETTINGS;

/**
 * The tuning without undefined fields, ready to spread into RaftNodeOptions, plus
 * `guardLostStorage`: a member whose data directory was lost starts with empty storage and
 * bootstraps every group again; it must not vote as if it had never voted or acknowledged
 * anything (RaftConfig.guardLostStorage); and `releaseAppliedPayloads`: a spool's leader holds
 * a payload in its log only until every follower has it (RaftConfig.releaseAppliedPayloads).
 */
export function tuningOptions(tuning: RaftTuning | undefined): RaftTuning & MemberRaftSettings {
  const out: Record<string, unknown> = { ...MEMBER_RAFT_SETTINGS };
  for (const [key, value] of Object.entries(tuning ?? {})) {
    if (value !== undefined) out[key] = value;
  }
  return out as RaftTuning & MemberRaftSettings;
}

