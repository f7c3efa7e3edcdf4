// Prometheus text for what a process knows beyond its HTTP requests: a member's Raft groups and
// spool replicas (from Member.status()), its storage engine's write and fsync counters (from
// Member.storageStats()), and a gateway's links to members (from RemoteSpoolService.metrics()).
// Appended to the gateway's own /metrics through `metricsExtra`. Labels come from member ids and
// spool names, both bounded by the cluster's shape.

import {
  type AccountWatchStats,
  Families,
  type Labels,
  type MemberMetrics,
  type MetricType,
  type RemoteServiceMetrics,
} from '@spoolmq/gateway';
import type { DiskMonitorStatus, MemberStatus, SpoolReplicaStatus } from '@spoolmq/member';
import { addMemoryFamilies } from './memory-options.js';
import { type MemberRow, addMemberRows } from './member-rows.js';
import { FSYNC_BUCKET_BOUNDS_MS, type StorageStats } from '@spoolmq/raft';

interface GroupRow {
  readonly group: string;
  readonly role: string;
  readonly term: number;
  readonly leaderId: string | null;
  readonly commitIndex: number;
  readonly appliedIndex: number;
  readonly lastIndex: number;
  readonly snapshotIndex: number;
  readonly storageDamage: unknown;
}

/** Per-group gauges: name, help, value. */
const GROUP_GAUGES: readonly (readonly [string, string, (row: GroupRow) => number])[] = [
  ['mq_member_raft_term', 'Current Raft term of each group.', (row) => row.term],
  ['mq_member_raft_commit_index', 'Highest log index known committed.', (row) => row.commitIndex],
  ['mq_member_raft_applied_index', 'Highest log index applied here.', (row) => row.appliedIndex],
  ['mq_member_raft_last_index', 'Last log index stored here.', (row) => row.lastIndex],
  ['mq_member_raft_snapshot_index', 'Index of the latest snapshot.', (row) => row.snapshotIndex],
  [
    'mq_member_raft_storage_damaged',
    'Entries lost to bad bytes here, awaiting repair from a peer (1) or none (0).',
    (row) => (row.storageDamage !== null ? 1 : 0),
  ],
];

/** Per-spool-replica metrics: name, type, help, value. */
const SPOOL_METRICS: readonly (readonly [
  string,
  MetricType,
  string,
  (replica: SpoolReplicaStatus) => number | boolean,
])[] = [
  ['mq_member_spool_serving', 'gauge', 'This member is the open primary.', (s) => s.serving],
  ['mq_member_spool_openings_total', 'counter', 'Openings as primary.', (s) => s.openings],
  ['mq_member_spool_restores_total', 'counter', 'Snapshots restored.', (s) => s.restores],
  ['mq_member_spool_failed', 'gauge', 'Stopped on a storage failure.', (s) => s.failure !== null],
  [
    'mq_member_spool_payloads_missing',
    'gauge',
    'Messages whose payload this replica lacks (being fetched; unavailable meanwhile).',
    (s) => s.payloadsMissing,
  ],
  [
    'mq_member_spool_payloads_unrepaired',
    'gauge',
    'Missing payloads no other replica had a good copy of at the last try.',
    (s) => s.payloadsUnrepaired,
  ],
  [
    'mq_member_spool_payload_read_failures_total',
    'counter',
    'Payload reads that failed their checksum here (or found no record).',
    (s) => s.payloadReadFailures,
  ],
  [
    'mq_member_spool_payloads_fetched_total',
    'counter',
    'Payloads fetched from other replicas.',
    (s) => s.payloadsFetched,
  ],
  [
    'mq_member_spool_payloads_recovered_total',
    'counter',
    'Payloads a restored snapshot lacked that this replica still held (not fetched).',
    (s) => s.payloadsRecovered,
  ],
  [
    'mq_member_spool_payloads_scrubbed_total',
    'counter',
    'Payload records the background scrub read and checked.',
    (s) => s.payloadsScrubbed,
  ],
  [
    'mq_member_spool_payloads_scrub_bad_total',
    'counter',
    'Payload records the scrub found bad (a good copy is fetched).',
    (s) => s.payloadsScrubBad,
  ],
  [
    'mq_member_spool_scrub_passes_total',
    'counter',
    'Scrub passes completed over every live payload record since the start.',
    (s) => s.scrubPasses,
  ],
  [
    'mq_member_spool_lacking_hand_offs_total',
    'counter',
    'Leaderships handed to an up-to-date voter instead of opening with payloads lacking.',
    (s) => s.lackingHandOffs,
  ],
];

/** Storage counters and gauges of a member (one engine shared by all its groups). */
const STORAGE_METRICS: readonly MemberRow<StorageStats>[] = [
  [
    'mq_member_storage_fsyncs_total',
    'counter',
    'Synced batches written (one fsync each).',
    (s) => s.fsyncs,
  ],
  [
    'mq_member_storage_batches_total',
    'counter',
    'Batches written, synced or not (only commit-index changes go unsynced).',
    (s) => s.fsyncs + s.writesUnsynced,
  ],
  [
    'mq_member_storage_calls_written_total',
    'counter',
    'Storage calls (save, snapshot, compact, destroy) written.',
    (s) => s.callsWritten,
  ],
  [
    'mq_member_storage_entries_written_total',
    'counter',
    'Raft log entries made durable.',
    (s) => s.entriesWritten,
  ],
  [
    'mq_member_storage_bytes_written_total',
    'counter',
    'Encoded bytes written.',
    (s) => s.bytesWritten,
  ],
  [
    'mq_member_storage_snapshots_written_total',
    'counter',
    'Snapshot files written.',
    (s) => s.snapshotsWritten,
  ],
  [
    'mq_member_storage_snapshots_corrupt_total',
    'counter',
    'Snapshot files that failed their checksum on load.',
    (s) => s.snapshotsCorrupt,
  ],
  [
    'mq_member_storage_torn_entries_dropped_total',
    'counter',
    'Log entries dropped on load (bad checksum or a gap).',
    (s) => s.tornEntriesDropped,
  ],
  [
    'mq_member_storage_hard_states_restored_total',
    'counter',
    'Hard state records found unreadable on load and restored from their copy.',
    (s) => s.hardStatesRestored,
  ],
  [
    'mq_member_storage_hard_states_lost_total',
    'counter',
    'Loads that found a hard state record and its copy both unreadable (the group stays down).',
    (s) => s.hardStatesLost,
  ],
  [
    'mq_member_storage_pending_bytes',
    'gauge',
    'Bytes staged, not yet durable.',
    (s) => s.pendingBytes,
  ],
  [
    'mq_member_storage_pending_calls',
    'gauge',
    'Calls staged, not yet durable.',
    (s) => s.pendingCalls,
  ],
  [
    'mq_member_storage_batch_bytes_max',
    'gauge',
    'Most bytes in one batch so far.',
    (s) => s.batchBytesMax,
  ],
];

/**
 * A member's state: whether it is ready and initialized, each Raft group's role, term, leader and
 * indexes, for each spool replica whether this member is its serving primary (the harness finds
 * primaries with `mq_member_spool_serving`), and when `storage` is given its storage engine's
 * fsyncs, entries and bytes written and fsync latencies (`mq_member_storage_*`).
 */
export function renderMemberMetrics(
  status: MemberStatus,
  ready: boolean,
  storage: StorageStats | null = null,
): string {
  return renderMemberProcessMetrics(status, ready, storage) + renderMemberGroupMetrics(status);
}

/**
 * What a member's public /metrics shows: readiness and its storage engine, nothing that names a
 * spool or an account (those are on the admin listener: renderMemberGroupMetrics).
 */
export function renderMemberProcessMetrics(
  status: MemberStatus,
  ready: boolean,
  storage: StorageStats | null = null,
): string {
  const out = new Families();
  const self = { member: status.id };
  const one = [status];
  out.add('mq_member_ready', 'gauge', 'This member can serve.', one, () => [self, ready]);
  out.add('mq_member_initialized', 'gauge', 'The cluster secret is known here.', one, (s) => [
    self,
    s.initialized,
  ]);
  addDiskFamilies(out, status);
  addMemoryFamilies(out, status);
  if (storage !== null) {
    addMemberRows(out, status.id, STORAGE_METRICS, storage);
    out.histogram(
      'mq_member_storage_fsync_seconds',
      'Latency of writing and syncing one batch.',
      self,
      FSYNC_BUCKET_BOUNDS_MS.map((ms) => ms / 1000),
      storage.fsyncMsHistogram,
      storage.fsyncMsTotal / 1000,
    );
  }
  return out.text();
}

/** Disk watermark metrics of a member that watches its data volume (none otherwise). */
const DISK_METRICS: readonly MemberRow<DiskMonitorStatus>[] = [
  [
    'mq_member_disk_alarm',
    'gauge',
    'Free space is below the reserve: growth refused (507).',
    (d) => d.alarm,
  ],
  [
    'mq_member_disk_free_bytes',
    'gauge',
    'Free bytes on the data volume (latest sample).',
    (d) => d.freeBytes,
  ],
  [
    'mq_member_disk_reserve_bytes',
    'gauge',
    'Free bytes below which growth is refused.',
    (d) => d.reserveBytes,
  ],
  [
    'mq_member_disk_alarms_total',
    'counter',
    'Times the disk alarm was raised.',
    (d) => d.raisedTotal,
  ],
  [
    'mq_member_disk_refused_total',
    'counter',
    'Calls refused with 507 storage_full.',
    (d) => d.refusedTotal,
  ],
  [
    'mq_member_disk_probe_errors_total',
    'counter',
    'Failed samples of the data volume.',
    (d) => d.probeErrorsTotal,
  ],
];

function addDiskFamilies(out: Families, status: MemberStatus): void {
  const disk = status.disk ?? null;
  if (disk !== null) addMemberRows(out, status.id, DISK_METRICS, disk);
}

/** The disk watermark of a member (for the admin listener's /metrics; public /metrics has it). */
export function renderMemberDiskMetrics(status: MemberStatus): string {
  const out = new Families();
  addDiskFamilies(out, status);
  return out.text();
}

/**
 * A member's Raft groups, spool replicas and spool depths, labelled by group and spool (so by
 * account): for the admin listener's /metrics only.
 */
export function renderMemberGroupMetrics(status: MemberStatus): string {
  const out = new Families();
  const self = { member: status.id };
  const groups: GroupRow[] = [status.meta, ...status.spools];
  const groupOf = (row: GroupRow): Labels => ({ ...self, group: row.group });
  out.add('mq_member_raft_role', 'gauge', 'Raft role in each group.', groups, (row) => [
    { ...groupOf(row), role: row.role },
    1,
  ]);
  out.add('mq_member_raft_leader', 'gauge', 'Known leader of each group.', groups, (row) =>
    row.leaderId === null ? null : [{ ...groupOf(row), leader: row.leaderId }, 1],
  );
  for (const [name, help, value] of GROUP_GAUGES) {
    out.add(name, 'gauge', help, groups, (row) => [groupOf(row), value(row)]);
  }
  for (const [name, type, help, value] of SPOOL_METRICS) {
    out.add(name, type, help, status.spools, (s) => [
      { ...self, spool: s.spool, group: s.group },
      value(s),
    ]);
  }
  const states = ['delayed', 'visible', 'pending', 'failed', 'unavailable'] as const;
  const depthRows = status.depths.flatMap((depth) => states.map((state) => ({ depth, state })));
  out.add(
    'mq_member_spool_messages',
    'gauge',
    'Messages by state, on spools served here.',
    depthRows,
    (r) => [{ ...self, spool: r.depth.spool, state: r.state }, r.depth[r.state]],
  );
  out.add(
    'mq_member_spool_leases',
    'gauge',
    'Live leases (pending messages), on spools served here.',
    status.depths,
    (d) => [{ ...self, spool: d.spool }, d.pending],
  );
  out.add(
    'mq_member_spool_stored_messages',
    'gauge',
    'Stored messages (the plan-capped count).',
    status.depths,
    (d) => [{ ...self, spool: d.spool }, d.total],
  );
  out.add(
    'mq_member_spool_stored_bytes',
    'gauge',
    'Stored payload bytes (the plan-capped bytes).',
    status.depths,
    (d) => [{ ...self, spool: d.spool }, d.dataBytes],
  );
  return out.text();
}

/** A gateway's view of the members: calls, retries, failovers and each link's state. */
export function renderRemoteMetrics(metrics: RemoteServiceMetrics): string {
  const out = new Families();
  const members = Object.entries(metrics.members).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const counters: readonly (readonly [string, string, (m: MemberMetrics) => number])[] = [
    ['mq_gateway_member_calls_total', 'Calls sent to the member (each attempt).', (m) => m.calls],
    ['mq_gateway_member_retries_total', 'Attempts retrying a call tried before.', (m) => m.retries],
    ['mq_gateway_member_failovers_total', 'Times it stopped being primary.', (m) => m.failovers],
  ];
  for (const [name, help, value] of counters) {
    out.add(name, 'counter', help, members, ([id, m]) => [{ member: id }, value(m)]);
  }
  out.add('mq_gateway_member_link_ready', 'gauge', 'gRPC link connected.', members, ([id, m]) =>
    m.link === undefined ? null : [{ member: id }, m.link.ready],
  );
  const inflightHelp = 'Calls written to the member and not yet answered.';
  out.add('mq_gateway_member_link_inflight_calls', 'gauge', inflightHelp, members, ([id, m]) =>
    m.link === undefined ? null : [{ member: id }, m.link.inflightCalls],
  );
  const totals = [metrics];
  out.add('mq_gateway_unavailable_total', 'counter', 'Calls answered 503.', totals, (m) => [
    {},
    m.unavailable,
  ]);
  out.add('mq_gateway_unconfirmed_total', 'counter', 'Writes answered 500.', totals, (m) => [
    {},
    m.unconfirmed,
  ]);
  return out.text();
}

/** A standalone gateway's accounts watch: which member, tables installed, switches, version. */
export function renderAccountMetrics(stats: AccountWatchStats): string {
  const out = new Families();
  const rows = [stats];
  out.add('mq_gateway_accounts_tables_total', 'counter', 'Account tables installed.', rows, (s) => [
    {},
    s.tables,
  ]);
  const switchHelp = 'Times the accounts watch moved to another member.';
  out.add('mq_gateway_accounts_watch_switches_total', 'counter', switchHelp, rows, (s) => [
    {},
    s.switches,
  ]);
  const watchHelp = 'The member whose accounts table this gateway watches.';
  out.add('mq_gateway_accounts_watch_member', 'gauge', watchHelp, rows, (s) =>
    s.member === null ? null : [{ member: s.member }, 1],
  );
  const versionHelp = 'Metadata index of the account table in force (-1: none yet).';
  out.add('mq_gateway_accounts_version', 'gauge', versionHelp, rows, (s) => [{}, s.version]);
  return out.text();
}
