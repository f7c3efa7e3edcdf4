// What a member adds to its admin listener for the console and for alerting: its Raft groups
// (role, term, leader, commit lag) and fsync latency as JSON, and the per-queue metrics of the
// spools it serves. Both read Member.status() and Member.storageStats(); nothing new is tracked.

import { type AdminAppOptions, renderQueueMetrics } from '@spoolmq/gateway';
import type { Member, MemberStatus } from '@spoolmq/member';
import { FSYNC_BUCKET_BOUNDS_MS, type StorageStats } from '@spoolmq/raft';
import { renderMemberDiskMetrics, renderMemberGroupMetrics } from './status-metrics.js';

export interface GroupStatusJson {
  readonly group: string;
  readonly spool: string | null;
  readonly role: string;
  readonly term: number;
  readonly leaderId: string | null;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  /** Entries committed but not yet applied here. */
  readonly commitLag: number;
  readonly serving: boolean;
}

export interface FsyncJson {
  readonly count: number;
  readonly meanMs: number;
  readonly maxMs: number;
  /** Upper bucket bound under which 99% of fsyncs fell (null: none yet or past every bound). */
  readonly p99UpToMs: number | null;
}

/** The bound of the bucket holding quantile `q` of `histogram` (FSYNC_BUCKET_BOUNDS_MS). */
export function histogramQuantileMs(histogram: readonly number[], q: number): number | null {
  const total = histogram.reduce((sum, n) => sum + n, 0);
  if (total === 0) return null;
  let seen = 0;
  for (const [i, count] of histogram.entries()) {
    seen += count;
    if (seen >= q * total) return FSYNC_BUCKET_BOUNDS_MS[i] ?? null;
  }
  return null;
}

/** A member's status as the console's cluster page shows it. */
export function memberStatusJson(status: MemberStatus, storage: StorageStats | null): object {
  const meta: GroupStatusJson = {
    group: status.meta.group,
    spool: null,
    role: status.meta.role,
    term: status.meta.term,
    leaderId: status.meta.leaderId,
    commitIndex: status.meta.commitIndex,
    appliedIndex: status.meta.appliedIndex,
    commitLag: status.meta.commitIndex - status.meta.appliedIndex,
    serving: false,
  };
  const spools = status.spools.map(
    (s): GroupStatusJson => ({
      group: s.group,
      spool: s.spool,
      role: s.role,
      term: s.term,
      leaderId: s.leaderId,
      commitIndex: s.commitIndex,
      appliedIndex: s.appliedIndex,
      commitLag: s.commitIndex - s.appliedIndex,
      serving: s.serving,
    }),
  );
  const fsync: FsyncJson | null =
    storage === null
      ? null
      : {
          count: storage.fsyncs,
          meanMs: storage.fsyncs === 0 ? 0 : storage.fsyncMsTotal / storage.fsyncs,
          maxMs: storage.fsyncMsMax,
          p99UpToMs: histogramQuantileMs(storage.fsyncMsHistogram, 0.99),
        };
  return { id: status.id, voters: status.meta.config.voters, groups: [meta, ...spools], fsync };
}

/** The admin listener's console status and per-queue /metrics of `member`. */
export function memberConsoleOptions(
  member: Member,
): Pick<AdminAppOptions, 'metrics' | 'memberStatus'> {
  return {
    memberStatus: () => memberStatusJson(member.status(), member.storageStats()),
    // Everything labelled by spool or account lives here, behind the admin token: the Raft
    // groups and replicas, then the per-queue families.
    metrics: async () =>
      renderMemberGroupMetrics(member.status()) +
      renderMemberDiskMetrics(member.status()) +
      (await renderQueueMetrics(
        member.service,
        member.status().depths.map((depth) => depth.spool),
        Date.now(),
      )),
  };
}
