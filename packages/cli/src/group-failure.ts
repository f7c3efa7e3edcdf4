// What `mq member` and `mq serve` do when one of their Raft groups stops on its own state (a
// broken invariant): the group serves nothing more in this process, so the process logs the
// group at error level, stops gracefully and exits with EXIT_GROUP_FAILED for its supervisor
// (systemd, Kubernetes) to restart it; /readyz answers 503 meanwhile. A storage failure (a write
// refused: the disk full or failing) is not fatal: the member recovers in process once the disk
// does, and each step is logged here. Messages from peers that contradict the member's log are
// dropped and logged, never fatal.

import type {
  BallastEvent,
  RecoveryEvent,
  ScrubFinding,
  UnrepairedPayload,
} from '@spoolmq/member';
import type { RaftRepair, TornTailReport } from '@spoolmq/raft';
import type { Logger } from './logger.js';

/** Exit status of a member whose Raft group stopped (EX_SOFTWARE). */
export const EXIT_GROUP_FAILED = 70;

export interface GroupFailureWatch {
  /** For MemberOptions: the member's hooks. */
  readonly hooks: {
    readonly onGroupFailure: (group: string, error: Error) => void;
    readonly onRaftRejected: (group: string, from: string, reason: string) => void;
    readonly onRaftRepaired: (group: string, repair: RaftRepair) => void;
    readonly onTornTail: (report: TornTailReport) => void;
    readonly onHardStateRestored: (group: string) => void;
    readonly onDiskBallast: (event: BallastEvent) => void;
    readonly onStorageRecovery: (event: RecoveryEvent) => void;
    readonly onPayloadUnrepaired: (report: UnrepairedPayload) => void;
    readonly onPayloadScrubBad: (finding: ScrubFinding) => void;
  };
  /** Resolves with the first failed group's name. */
  readonly failed: Promise<string>;
}

export function watchGroupFailures(logger: Logger | undefined): GroupFailureWatch {
  let report: (group: string) => void = () => undefined;
  const failed = new Promise<string>((resolve) => (report = resolve));
  const keptSnapshots = new Set<string>();
  return {
    failed,
    hooks: {
      onGroupFailure: (group, error) => {
        logger?.error({ group, err: error }, `raft group ${group} stopped: ${error.message}`);
        report(group);
      },
      onRaftRejected: (group, from, reason) => {
        logger?.warn({ group, from, reason }, `dropped a raft message from ${from}: ${reason}`);
      },
      onRaftRepaired: (group, repair) => {
        const { damage, from, fromPeer } = repair;
        const how = fromPeer ? `from ${from}, with no leader` : `from the leader ${from}`;
        logger?.warn(
          { group, from, fromPeer, damage },
          `raft group ${group}: the entries lost to bad bytes (up to index ${damage.lastIndex}, ` +
            `term ${damage.lastTerm}) are held again, ${how}; it votes and campaigns again`,
        );
      },
      onTornTail: (report) => {
        // A sole member's corrupt snapshot is found again at every start attempt: log it once.
        if (report.reason === 'snapshot-kept' || report.reason === 'hard-state-lost') {
          const key = `${report.reason} ${report.group}`;
          if (keptSnapshots.has(key)) return;
          keptSnapshots.add(key);
        }
        logTornTail(logger, report);
      },
      onHardStateRestored: (group) => {
        logger?.error(
          { group },
          `raft group ${group}: the hard state record failed its checksum (bad bytes on disk); ` +
            'term, vote and damage mark were restored from its copy and the record rewritten ' +
            '(mq_member_storage_hard_states_restored_total)',
        );
      },
      onStorageRecovery: (event) => logRecovery(logger, event),
      onDiskBallast: (event) => logBallast(logger, event),
      onPayloadUnrepaired: (report) => logUnrepaired(logger, report),
      onPayloadScrubBad: (finding) => logScrubBad(logger, finding),
    },
  };
}

/** One line for entries dropped on load: bad bytes at error level, a stale tail at warn. */
function logTornTail(logger: Logger | undefined, report: TornTailReport): void {
  const { group, firstDroppedIndex: from, droppedEntries: count, reason } = report;
  if (reason === 'snapshot') {
    logger?.error(
      { group, count, reason },
      `raft group ${group}: its snapshot file failed its checksum (bad bytes on disk); it and ` +
        `the ${count} entries after it were dropped and this replica starts empty, voting as ` +
        'if it still held them until a peer has sent it a snapshot ' +
        '(mq_member_storage_snapshots_corrupt_total, mq_member_raft_storage_damaged)',
    );
    return;
  }
  if (reason === 'snapshot-kept') {
    logger?.error(
      { group, reason },
      `raft group ${group}: its snapshot file failed its checksum (bad bytes on disk) and no ` +
        'peer holds a copy (sole member): what it held is lost, so this group stays down while ' +
        'the others serve (mq_member_storage_snapshots_corrupt_total)',
    );
    return;
  }
  if (reason === 'hard-state-lost') {
    logger?.error(
      { group, reason },
      `raft group ${group}: its hard state record and the record's copy both failed their ` +
        'checksums (bad bytes on disk); its vote is unknown and voting again could elect two ' +
        'leaders in one term, so this group stays down while the others serve; move its ' +
        'replica to another member to rebuild it from peers ' +
        '(mq_member_storage_hard_states_lost_total)',
    );
    return;
  }
  if (reason === 'checksum') {
    logger?.error(
      { group, from, count, reason },
      `raft group ${group}: ${count} stored entries from index ${from} failed their checksum ` +
        '(bad bytes on disk) and were dropped; this replica votes as if it still held them ' +
        'until a peer has repaired them (mq_member_raft_storage_damaged); a group without ' +
        'peers has lost them',
    );
  } else {
    logger?.warn({ group, from, count, reason }, `raft group ${group}: dropped a stale log tail`);
  }
}

/** One line per release (warn) and rewrite (info) of the disk ballast; a failed rewrite warns. */
function logBallast(logger: Logger | undefined, event: BallastEvent): void {
  const fields = { event: `disk_ballast_${event.kind}` };
  switch (event.kind) {
    case 'released':
      logger?.warn(
        { ...fields, bytes: event.bytes, freeBytes: event.freeBytes },
        `data volume nearly full (${event.freeBytes} bytes free): deleted the ` +
          `${event.bytes}-byte disk ballast so storage can open and consumers drain; ` +
          'free space on the volume',
      );
      return;
    case 'restored':
      logger?.info(
        { ...fields, bytes: event.bytes },
        `disk ballast of ${event.bytes} bytes written again`,
      );
      return;
    case 'restore_failed':
      logger?.warn(
        { ...fields, err: event.error },
        `writing the disk ballast failed: ${event.error.message}`,
      );
      return;
  }
}

/** One line per payload no replica could repair: its message stays unavailable. */
function logUnrepaired(logger: Logger | undefined, report: UnrepairedPayload): void {
  const { group, queue, seq, asked } = report;
  const spool = group.slice('spool:'.length, group.lastIndexOf('#'));
  const where = asked === 0 ? 'no other replica to ask' : `none of ${asked} other replicas has it`;
  logger?.error(
    { event: 'payload_unrepaired', spool, queue, seq, group, asked },
    `spool ${spool} queue ${queue} message seq ${seq}: its payload failed its checksum or is ` +
      `missing here and ${where}; the message stays unavailable (mq_member_spool_payloads_` +
      'unrepaired) and is asked for again; everything else is served',
  );
}

/** One line per bad payload record the background scrub found: a good copy is fetched. */
function logScrubBad(logger: Logger | undefined, finding: ScrubFinding): void {
  const { group, queue, seq, problem } = finding;
  const spool = group.slice('spool:'.length, group.lastIndexOf('#'));
  logger?.error(
    { event: 'payload_scrub_bad', spool, queue, seq, group, problem },
    `spool ${spool} queue ${queue} message seq ${seq}: the scrub found its payload record bad ` +
      `here (${problem}); the message reads unavailable until a good copy is fetched from ` +
      'another replica (mq_member_spool_payloads_scrub_bad_total)',
  );
}

/** One line per step of a storage recovery: its start and retries (error), its end (info). */
function logRecovery(logger: Logger | undefined, event: RecoveryEvent): void {
  const fields = { event: `storage_recovery_${event.kind}` };
  switch (event.kind) {
    case 'started':
      logger?.error(
        { ...fields, group: event.group, err: event.error },
        `storage write failed (${event.error.message}): every group stops and starts again ` +
          'from disk once the storage reopens; calls answer 503 meanwhile',
      );
      return;
    case 'retrying':
      logger?.error(
        { ...fields, attempt: event.attempt, err: event.error },
        `storage still failing (${event.error.message}); retrying`,
      );
      return;
    case 'recovered':
      logger?.info(
        { ...fields, attempts: event.attempts, downMs: event.downMs },
        `storage recovered after ${event.downMs} ms (${event.attempts} attempts); serving again`,
      );
      return;
  }
}

/**
 * Waits for `shutdown` or the first group failure; returns the exit status the command ends
 * with (0, or EXIT_GROUP_FAILED naming the group in the log).
 */
export async function untilShutdownOrFailure(
  shutdown: AbortSignal,
  failed: Promise<string>,
  logger: Logger,
): Promise<number> {
  const stopped = new Promise<null>((resolve) => {
    if (shutdown.aborted) resolve(null);
    else shutdown.addEventListener('abort', () => resolve(null), { once: true });
  });
  const group = await Promise.race([stopped, failed]);
  if (group === null) return 0;
  logger.error({ group }, `exiting: raft group ${group} stopped; a restart recovers it from disk`);
  return EXIT_GROUP_FAILED;
}
