// RaftNode configuration: what the node is wired to, and its bounds. Milliseconds appear only
// here; the core counts ticks.

import { RAFT_CONFIG_DEFAULTS, RaftConfigError } from '../core/config.js';
import type { GroupId, GroupStorage, NodeId, Transport } from '../types.js';
import type { LogBudget } from './log-budget.js';
import type { StateMachine } from './state-machine.js';

export interface RaftNodeOptions {
  /** This member's id. */
  readonly id: NodeId;
  /** The Raft group (one per spool, plus `meta`). */
  readonly group: GroupId;
  readonly storage: GroupStorage;
  /** Used to send; incoming messages are handed to `RaftNode.receive` (see GroupRouter). */
  readonly transport: Transport;
  readonly stateMachine: StateMachine;
  /**
   * Founding voters, used only when the storage holds nothing for the group (a brand-new
   * group). Omit for a member joining an existing group: it waits to be added.
   */
  readonly bootstrap?: readonly NodeId[];
  /** Length of one tick in ms (default 50). Election timeout = electionTicks x tickMs. */
  readonly tickMs?: number;
  readonly electionTicks?: number;
  readonly heartbeatTicks?: number;
  readonly leaseTicks?: number;
  readonly inflightMessagesMax?: number;
  readonly appendBytesMax?: number;
  readonly snapshotChunkBytes?: number;
  readonly preVote?: boolean;
  readonly checkQuorum?: boolean;
  /** See RaftConfig.guardLostStorage (default false). */
  readonly guardLostStorage?: boolean;
  /** See RaftConfig.soleMember (default false). */
  readonly soleMember?: boolean;
  /** See RaftConfig.releaseAppliedPayloads (default false; RaftNode honours snapshotWanted). */
  readonly releaseAppliedPayloads?: boolean;
  /**
   * Take a snapshot (and compact the log) once this many entries (default 10,000) were applied
   * since the last one and their bytes reach the last snapshot's size (see maybeSnapshot).
   */
  readonly snapshotEntries?: number;
  /**
   * Or once the entries applied since the last snapshot hold this many bytes (default 16 MiB),
   * whatever their count: a log of large entries is not kept for 10,000 of them, so a restart
   * replays at most about this much (the snapshot holds no payloads, see the spool replica).
   * The unsnapshotted log stays in memory, payloads included, so this bounds a group's share
   * of the member's memory; a snapshot still waits for as many bytes as the last one held.
   */
  readonly snapshotLogBytes?: number;
  /**
   * Bytes a snapshot produced in slices (StateMachine.beginSnapshot) encodes per event-loop turn
   * (default 256 KiB, about half a millisecond for a spool's messages): bounds how long one
   * slice holds up ticks, appends and applies.
   */
  readonly snapshotSliceBytes?: number;
  /**
   * Log entries kept in memory behind a snapshot for lagging followers (default 1,000); with
   * releaseAppliedPayloads also the applied entries whose payloads a follower keeps.
   */
  readonly retainEntries?: number;
  /**
   * And at most this many bytes of them (default 8 MiB): a thousand 64 KiB payloads would hold
   * 64 MiB in memory that a sole member never sends and a follower rarely needs.
   */
  readonly retainBytes?: number;
  /**
   * A bound shared with the other groups of the process on their unsnapshotted log bytes (see
   * LogBudget): past it, the groups holding the most snapshot early. Default none.
   */
  readonly logBudget?: LogBudget;
  /** Bound on proposals buffered or awaiting commit; beyond it `propose` fails `busy`. */
  readonly proposalsPendingMax?: number;
  /** Rounds a new voter gets to catch up before promotion (thesis 4.2.1; default 10). */
  readonly catchUpRoundsMax?: number;
  /** Random source in [0, 1) for election timeouts (default Math.random). */
  readonly random?: () => number;
  /** Monotonic clock in ms (default performance.now). */
  readonly nowMs?: () => number;
}

export interface ResolvedOptions
  extends Required<Omit<RaftNodeOptions, 'bootstrap' | 'logBudget'>> {
  readonly bootstrap: readonly NodeId[] | null;
  readonly logBudget: LogBudget | null;
}

export const RAFT_NODE_DEFAULTS = {
  tickMs: 50,
  snapshotEntries: 10_000,
  snapshotLogBytes: 16 * 1024 * 1024,
  snapshotSliceBytes: 256 * 1024,
  retainEntries: 1_000,
  retainBytes: 8 * 1024 * 1024,
  proposalsPendingMax: 100_000,
  catchUpRoundsMax: 10,
} as const;

function positiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RaftConfigError(`${name} must be a positive integer, got ${value}`);
  }
}

/**
 * Fills in defaults and checks the node's own bounds (the core checks its own when built).
 * Throws `RaftConfigError` for a bound that is not a positive integer (`retainEntries` and
 * `retainBytes` may be 0).
 */
export function resolveOptions(options: RaftNodeOptions): ResolvedOptions {
  const resolved = {
    ...RAFT_CONFIG_DEFAULTS,
    ...RAFT_NODE_DEFAULTS,
    random: Math.random,
    nowMs: () => performance.now(),
    ...withoutUndefined(options),
    id: options.id,
    group: options.group,
    storage: options.storage,
    transport: options.transport,
    stateMachine: options.stateMachine,
    bootstrap: options.bootstrap ?? null,
    logBudget: options.logBudget ?? null,
  } as ResolvedOptions;
  positiveInteger('tickMs', resolved.tickMs);
  positiveInteger('snapshotEntries', resolved.snapshotEntries);
  positiveInteger('snapshotLogBytes', resolved.snapshotLogBytes);
  positiveInteger('snapshotSliceBytes', resolved.snapshotSliceBytes);
  positiveInteger('proposalsPendingMax', resolved.proposalsPendingMax);
  positiveInteger('catchUpRoundsMax', resolved.catchUpRoundsMax);
  for (const name of ['retainEntries', 'retainBytes'] as const) {
    if (!Number.isSafeInteger(resolved[name]) || resolved[name] < 0) {
      throw new RaftConfigError(`${name} must be a non-negative integer`);
    }
  }
  return resolved;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
