import { describe, expect, it } from 'vitest';
import type { MemberStatus } from '@spoolmq/member';
import { FSYNC_BUCKET_BOUNDS_MS, type StorageStats } from '@spoolmq/raft';
import { histogramQuantileMs, memberStatusJson } from '../src/console-status.js';

const group = (name: string, role: string, commitIndex: number, appliedIndex: number) => ({
  id: 'n1', group: name, role, term: 3, leaderId: 'n2', commitIndex, appliedIndex,
  lastIndex: commitIndex, snapshotIndex: 0, config: { voters: ['n1', 'n2', 'n3'], learners: [] },
  progress: {}, proposalsPending: 0,
});

describe('console status', () => {
  it('puts the bucket bound holding a quantile', () => {
    const histogram = new Array<number>(FSYNC_BUCKET_BOUNDS_MS.length + 1).fill(0);
    expect(histogramQuantileMs(histogram, 0.99)).toBeNull();
    histogram[0] = 98;
    histogram[3] = 2;
    expect(histogramQuantileMs(histogram, 0.5)).toBe(FSYNC_BUCKET_BOUNDS_MS[0]);
    expect(histogramQuantileMs(histogram, 0.99)).toBe(FSYNC_BUCKET_BOUNDS_MS[3]);
    histogram[FSYNC_BUCKET_BOUNDS_MS.length] = 100;
    expect(histogramQuantileMs(histogram, 0.99)).toBeNull();
  });

  it('reports each group with its commit lag, and fsync latency', () => {
    const status = {
      id: 'n1',
      initialized: true,
      meta: group('meta', 'follower', 10, 8),
      spools: [{ ...group('s1', 'leader', 5, 5), spool: 'acme/default', serving: true }],
      depths: [],
    } as unknown as MemberStatus;
    const histogram = new Array<number>(FSYNC_BUCKET_BOUNDS_MS.length + 1).fill(0);
    histogram[1] = 4;
    const storage = { fsyncs: 4, fsyncMsTotal: 6, fsyncMsMax: 2.5, fsyncMsHistogram: histogram };
    const json = memberStatusJson(status, storage as unknown as StorageStats) as {
      groups: { spool: string | null; commitLag: number; serving: boolean }[];
      fsync: { meanMs: number; p99UpToMs: number };
      voters: string[];
    };
    expect(json.voters).toEqual(['n1', 'n2', 'n3']);
    expect(json.groups.map((g) => [g.spool, g.commitLag, g.serving])).toEqual([
      [null, 2, false],
      ['acme/default', 0, true],
    ]);
    expect(json.fsync).toMatchObject({ meanMs: 1.5, p99UpToMs: FSYNC_BUCKET_BOUNDS_MS[1] });
    expect(memberStatusJson(status, null)).toMatchObject({ fsync: null });
  });
});
