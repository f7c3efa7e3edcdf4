// Configuration of one Raft core. Time is counted in ticks; the driver decides how long a tick
// is. Every bound is named, and the relations between bounds are checked once, at construction,
// so that a misconfigured replica refuses to start instead of misbehaving under load.

import type { NodeId } from '../types.js';

export interface RaftConfig {
  /** This member's id. */
  readonly id: NodeId;
  /**
   * Base election timeout T in ticks (>= 2). A follower that hears nothing from a leader for a
   * randomized timeout in [T, 2T) campaigns (Raft 5.2). Also the check-quorum period.
   */
  readonly electionTicks: number;
  /** Heartbeat interval in ticks (>= 1, < electionTicks). */
  readonly heartbeatTicks: number;
  /**
   * Leader lease in ticks (>= 1, < electionTicks). The leader holds the lease while a quorum has
   * acknowledged messages it sent less than `leaseTicks` ago; the margin to `electionTicks` is
   * the allowance for clock drift between members (thesis 6.4.1).
   */
  readonly leaseTicks: number;
  /** Bound on AppendEntries messages in flight to one follower (>= 1). */
  readonly inflightMessagesMax: number;
  /** Bound on the entry bytes of one AppendEntries (>= 1); a larger single entry goes alone. */
  readonly appendBytesMax: number;
  /** Bytes of snapshot data per InstallSnapshot chunk (>= 1). */
  readonly snapshotChunkBytes: number;
  /** Pre-vote phase before a real election (thesis 9.6). */
  readonly preVote: boolean;
  /**
   * Leader steps down when it has not heard from a quorum within an election timeout, and
   * followers ignore votes while they have a live leader (leader stickiness, thesis 4.2.3).
   * Required for the leader lease.
   */
  readonly checkQuorum: boolean;
  /** Uniform random source in [0, 1); the only randomness the core uses. */
  readonly random: () => number;
  /**
   * Treat a log holding nothing past the founding entries as possibly lost storage: grant no
   * vote to a candidate whose log is past founding until caught up with a leader (see
   * RaftCore's `rebuilding`). For members whose data directory may be wiped and which then
   * bootstrap again; costs availability only when a majority needs the vote of a replica that
   * never heard from any leader. Default false.
   */
  readonly guardLostStorage?: boolean;
  /**
   * This replica's group never had another voter and never will (a one-member deployment such
   * as `mq serve`): storage damage cannot be repaired from a peer, and nobody else counted its
   * acknowledgements, so it goes on without the damage rules (see RaftCore's `damage`).
   * Default false.
   */
  readonly soleMember?: boolean;
  /**
   * As leader, drop from memory the payloads of applied entries that every follower holds (see
   * RaftCore's `releasePayloads`); a follower that needs them later gets a snapshot, which the
   * driver takes when `snapshotWanted()` says so. The driver must honour that. Default false.
   */
  readonly releaseAppliedPayloads?: boolean;
  /**
   * With releaseAppliedPayloads, a replica that does not lead keeps the payloads of at most its
   * newest `payloadTailEntries` applied entries holding at most `payloadTailBytes` payload bytes
   * (it may lead next and then send them to a peer lagging a little). Default 0 each.
   */
  readonly payloadTailEntries?: number;
  readonly payloadTailBytes?: number;
}

/** Defaults for everything but `id` and `random`. */
export const RAFT_CONFIG_DEFAULTS = {
  electionTicks: 10,
  heartbeatTicks: 1,
  leaseTicks: 8,
  inflightMessagesMax: 256,
  appendBytesMax: 1024 * 1024,
  snapshotChunkBytes: 1024 * 1024,
  preVote: true,
  checkQuorum: true,
  guardLostStorage: false,
  soleMember: false,
} as const;

/** Raised for a configuration that makes no sense; the message names the setting. */
export class RaftConfigError extends Error {
  constructor(message: string) {
    super(`raft: invalid config: ${message}`);
    this.name = 'RaftConfigError';
  }
}

function positiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RaftConfigError(`${name} must be a positive integer, got ${value}`);
  }
}

/**
 * Checks the relations between bounds. Throws `RaftConfigError` when a bound is not a positive
 * integer, `electionTicks < 2`, `heartbeatTicks >= electionTicks`, `leaseTicks >= electionTicks`
 * or the id is empty.
 */
export function validateConfig(config: RaftConfig): void {
  if (config.id.length === 0) throw new RaftConfigError('id must not be empty');
  positiveInteger('electionTicks', config.electionTicks);
  positiveInteger('heartbeatTicks', config.heartbeatTicks);
  positiveInteger('leaseTicks', config.leaseTicks);
  positiveInteger('inflightMessagesMax', config.inflightMessagesMax);
  positiveInteger('appendBytesMax', config.appendBytesMax);
  positiveInteger('snapshotChunkBytes', config.snapshotChunkBytes);
  if (config.electionTicks < 2) throw new RaftConfigError('electionTicks must be >= 2');
  if (config.heartbeatTicks >= config.electionTicks) {
    throw new RaftConfigError('heartbeatTicks must be < electionTicks');
  }
  if (config.leaseTicks >= config.electionTicks) {
    throw new RaftConfigError('leaseTicks must be < electionTicks (lease shorter than election)');
  }
}
