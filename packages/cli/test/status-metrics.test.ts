import { describe, expect, it } from 'vitest';
import type { MemberStatus } from '@spoolmq/member';
import { FSYNC_BUCKET_BOUNDS_MS, type RaftNodeStatus, type StorageStats } from '@spoolmq/raft';
import { renderMemberMetrics, renderRemoteMetrics } from '../src/index.js';
import { renderMemberDiskMetrics } from '../src/status-metrics.js';

const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.]+(e[-+]?[0-9]+)?$/;

function expectPrometheusText(text: string): void {
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.split('\n').filter((line) => line !== '');
  for (const line of lines) {
    if (line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
    expect(line).toMatch(SAMPLE);
  }
}

const meta = {
  id: 'n1',
  group: 'meta',
  role: 'follower',
  term: 4,
  leaderId: 'n2',
  commitIndex: 9,
  appliedIndex: 9,
  lastIndex: 10,
  snapshotIndex: 0,
  storageDamage: null,
} as unknown as RaftNodeStatus;

const status: MemberStatus = {
  id: 'n1',
  initialized: true,
  meta,
  spools: [
    {
      spool: 'default',
      group: 'spool:default#1',
      role: 'leader',
      term: 7,
      leaderId: 'n1',
      commitIndex: 120,
      appliedIndex: 119,
      lastIndex: 121,
      snapshotIndex: 100,
      serving: true,
      openings: 2,
      restores: 1,
      failure: null,
      storageDamage: { lastIndex: 121, lastTerm: 7 },
      payloadsMissing: 2,
      payloadsUnrepaired: 1,
      payloadReadFailures: 3,
      payloadsFetched: 1,
      payloadsRejected: 0,
      payloadsRecovered: 40,
      payloadsScrubbed: 512,
      payloadsScrubBad: 1,
      scrubPasses: 1,
      lackingHandOffs: 1,
    },
  ],
  depths: [{ spool: 'acme/default', delayed: 1, visible: 5, pending: 2, failed: 3, unavailable: 1, total: 11, dataBytes: 4096 }],
};

describe('renderMemberMetrics', () => {
  it('reports readiness, each group and which spools this member serves', () => {
    const text = renderMemberMetrics(status, false);
    expectPrometheusText(text);
    expect(text).toContain('mq_member_ready{member="n1"} 0\n');
    expect(text).toContain('mq_member_initialized{member="n1"} 1\n');
    expect(text).toContain('mq_member_raft_role{member="n1",group="meta",role="follower"} 1\n');
    expect(text).toContain('mq_member_raft_leader{member="n1",group="meta",leader="n2"} 1\n');
    expect(text).toContain('mq_member_raft_term{member="n1",group="spool:default#1"} 7\n');
    expect(text).toContain('mq_member_raft_applied_index{member="n1",group="spool:default#1"} 119\n');
    expect(text).toContain('mq_member_spool_serving{member="n1",spool="default",group="spool:default#1"} 1\n');
    expect(text).toContain('mq_member_spool_openings_total{member="n1",spool="default",group="spool:default#1"} 2\n');
    expect(text).toContain('mq_member_raft_storage_damaged{member="n1",group="meta"} 0\n');
    expect(text).toContain('mq_member_raft_storage_damaged{member="n1",group="spool:default#1"} 1\n');
    const labels = '{member="n1",spool="default",group="spool:default#1"}';
    expect(text).toContain(`mq_member_spool_payloads_missing${labels} 2\n`);
    expect(text).toContain(`mq_member_spool_payloads_unrepaired${labels} 1\n`);
    expect(text).toContain(`mq_member_spool_payload_read_failures_total${labels} 3\n`);
    expect(text).toContain(`mq_member_spool_payloads_recovered_total${labels} 40\n`);
    expect(text).toContain(`mq_member_spool_payloads_scrubbed_total${labels} 512\n`);
    expect(text).toContain(`mq_member_spool_payloads_scrub_bad_total${labels} 1\n`);
    expect(text).toContain(`mq_member_spool_scrub_passes_total${labels} 1\n`);
    expect(text).toContain(`mq_member_spool_lacking_hand_offs_total${labels} 1\n`);
  });

  it('reports queue depth by state, leases and stored totals of the spools served here', () => {
    const text = renderMemberMetrics(status, true);
    expectPrometheusText(text);
    expect(text).toContain('mq_member_spool_messages{member="n1",spool="acme/default",state="visible"} 5\n');
    expect(text).toContain('mq_member_spool_messages{member="n1",spool="acme/default",state="failed"} 3\n');
    expect(text).toContain('mq_member_spool_messages{member="n1",spool="acme/default",state="unavailable"} 1\n');
    expect(text).toContain('mq_member_spool_leases{member="n1",spool="acme/default"} 2\n');
    expect(text).toContain('mq_member_spool_stored_messages{member="n1",spool="acme/default"} 11\n');
    expect(text).toContain('mq_member_spool_stored_bytes{member="n1",spool="acme/default"} 4096\n');
  });

  it('omits the leader sample when no leader is known', () => {
    const text = renderMemberMetrics({ ...status, meta: { ...meta, leaderId: null }, spools: [] }, true);
    expectPrometheusText(text);
    expect(text).not.toContain('mq_member_raft_leader{');
    expect(text).toContain('mq_member_ready{member="n1"} 1\n');
  });
});

describe('renderMemberMetrics disk', () => {
  it('reports the disk alarm, free space, reserve and refusals of a member watching its volume', () => {
    const disk = {
      alarm: true,
      freeBytes: 900,
      totalBytes: 10_000,
      reserveBytes: 1_000,
      clearBytes: 1_100,
      raisedTotal: 2,
      refusedTotal: 7,
      probeErrorsTotal: 1,
      probeError: null,
    };
    const text = renderMemberMetrics({ ...status, disk }, true);
    expectPrometheusText(text);
    expect(text).toContain('# TYPE mq_member_disk_alarm gauge\n');
    expect(text).toContain('mq_member_disk_alarm{member="n1"} 1\n');
    expect(text).toContain('mq_member_disk_free_bytes{member="n1"} 900\n');
    expect(text).toContain('mq_member_disk_reserve_bytes{member="n1"} 1000\n');
    expect(text).toContain('mq_member_disk_alarms_total{member="n1"} 2\n');
    expect(text).toContain('mq_member_disk_refused_total{member="n1"} 7\n');
    expect(text).toContain('mq_member_disk_probe_errors_total{member="n1"} 1\n');
    expect(renderMemberDiskMetrics({ ...status, disk })).toContain('mq_member_disk_alarm{member="n1"} 1\n');
  });

  it('has no disk families when the member watches no disk, and none before a sample', () => {
    expect(renderMemberMetrics(status, true)).not.toContain('mq_member_disk_');
    const unsampled = {
      alarm: false,
      freeBytes: null,
      totalBytes: null,
      reserveBytes: null,
      clearBytes: null,
      raisedTotal: 0,
      refusedTotal: 0,
      probeErrorsTotal: 0,
      probeError: null,
    };
    const text = renderMemberMetrics({ ...status, disk: unsampled }, true);
    expectPrometheusText(text);
    expect(text).toContain('mq_member_disk_alarm{member="n1"} 0\n');
    expect(text).not.toContain('mq_member_disk_free_bytes{');
  });
});

describe('renderMemberMetrics storage', () => {
  const histogram = new Array<number>(FSYNC_BUCKET_BOUNDS_MS.length + 1).fill(0);
  histogram[0] = 2; // <= 0.25 ms
  histogram[3] = 5; // (1, 2] ms
  histogram[FSYNC_BUCKET_BOUNDS_MS.length] = 1; // > 1024 ms
  const storage: StorageStats = {
    fsyncs: 8,
    callsWritten: 30,
    writesUnsynced: 4,
    entriesWritten: 120,
    bytesWritten: 65_536,
    batchCallsLast: 3,
    batchCallsMax: 9,
    batchBytesLast: 512,
    batchBytesMax: 8_192,
    fsyncMsLast: 1.5,
    fsyncMsMax: 1_500,
    fsyncMsTotal: 1_508.5,
    fsyncMsHistogram: histogram,
    pendingBytes: 100,
    pendingCalls: 2,
    snapshotsWritten: 1,
    snapshotsCorrupt: 0,
    tornEntriesDropped: 0,
    hardStatesRestored: 1,
    hardStatesLost: 2,
  };

  it('exports the engine counters, gauges and a cumulative fsync latency histogram', () => {
    const text = renderMemberMetrics(status, true, storage);
    expectPrometheusText(text);
    expect(text).toContain('# TYPE mq_member_storage_fsyncs_total counter\n');
    expect(text).toContain('mq_member_storage_fsyncs_total{member="n1"} 8\n');
    expect(text).toContain('mq_member_storage_batches_total{member="n1"} 12\n');
    expect(text).toContain('mq_member_storage_calls_written_total{member="n1"} 30\n');
    expect(text).toContain('mq_member_storage_entries_written_total{member="n1"} 120\n');
    expect(text).toContain('mq_member_storage_bytes_written_total{member="n1"} 65536\n');
    expect(text).toContain('mq_member_storage_snapshots_written_total{member="n1"} 1\n');
    expect(text).toContain('mq_member_storage_hard_states_restored_total{member="n1"} 1\n');
    expect(text).toContain('mq_member_storage_hard_states_lost_total{member="n1"} 2\n');
    expect(text).toContain('mq_member_storage_pending_bytes{member="n1"} 100\n');
    expect(text).toContain('# TYPE mq_member_storage_fsync_seconds histogram\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_bucket{member="n1",le="0.00025"} 2\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_bucket{member="n1",le="0.001"} 2\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_bucket{member="n1",le="0.002"} 7\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_bucket{member="n1",le="1.024"} 7\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_bucket{member="n1",le="+Inf"} 8\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_sum{member="n1"} 1.5085\n');
    expect(text).toContain('mq_member_storage_fsync_seconds_count{member="n1"} 8\n');
    const buckets = [...text.matchAll(/^mq_member_storage_fsync_seconds_bucket\{[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
    expect(buckets).toHaveLength(FSYNC_BUCKET_BOUNDS_MS.length + 1);
    expect(buckets).toEqual([...buckets].sort((a, b) => a - b));
  });

  it('leaves the storage families out when the member has no engine stats', () => {
    expect(renderMemberMetrics(status, true)).not.toContain('mq_member_storage_');
    expect(renderMemberMetrics(status, true, null)).not.toContain('mq_member_storage_');
  });
});

describe('renderRemoteMetrics', () => {
  it('reports per-member calls, failovers and link state, and the 503/500 totals', () => {
    const text = renderRemoteMetrics({
      members: {
        n2: { calls: 5, retries: 1, failovers: 1, link: { address: 'a:1', ready: true, inflightCalls: 3, queuedBytes: 0, streamsOpened: 1, framesSent: 4, framesReceived: 4 } },
        n1: { calls: 7, retries: 0, failovers: 0 },
      },
      unavailable: 2,
      unconfirmed: 1,
    });
    expectPrometheusText(text);
    expect(text.indexOf('mq_gateway_member_calls_total{member="n1"} 7')).toBeLessThan(text.indexOf('mq_gateway_member_calls_total{member="n2"} 5'));
    expect(text).toContain('mq_gateway_member_failovers_total{member="n2"} 1\n');
    expect(text).toContain('mq_gateway_member_link_ready{member="n2"} 1\n');
    expect(text).not.toContain('mq_gateway_member_link_ready{member="n1"}');
    expect(text).toContain('mq_gateway_member_link_inflight_calls{member="n2"} 3\n');
    expect(text).toContain('mq_gateway_unavailable_total 2\n');
    expect(text).toContain('mq_gateway_unconfirmed_total 1\n');
  });
});
