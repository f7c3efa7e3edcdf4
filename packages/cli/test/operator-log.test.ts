import { describe, expect, it } from 'vitest';
import type { MemberStatus } from '@spoolmq/member';
import { operatorEvents } from '../src/operator-log.js';

interface Group {
  readonly term: number;
  readonly leaderId: string | null;
  readonly serving?: boolean;
  readonly failure?: string | null;
  readonly lackingHandOffs?: number;
  readonly payloadsMissing?: number;
}

const VOTERS = ['n1', 'n2', 'n3'];

function raft(group: string, g: Group, voters: readonly string[]) {
  const role = g.leaderId === 'n1' ? 'leader' : 'follower';
  return {
    id: 'n1', group, role, term: g.term, leaderId: g.leaderId, commitIndex: 0, appliedIndex: 0,
    lastIndex: 0, snapshotIndex: 0, config: { voters, learners: [] }, progress: {},
    proposalsPending: 0,
  };
}

function status(
  meta: Group,
  spools: Record<string, Group>,
  voters: readonly string[] = VOTERS,
): MemberStatus {
  return {
    id: 'n1',
    initialized: true,
    meta: raft('meta', meta, voters),
    spools: Object.entries(spools).map(([spool, g]) => ({
      ...raft(`s-${spool}`, g, voters), spool, serving: g.serving ?? false, openings: 0,
      restores: 0, failure: g.failure ?? null, lackingHandOffs: g.lackingHandOffs ?? 0,
      payloadsMissing: g.payloadsMissing ?? 0,
    })),
    depths: [],
  } as unknown as MemberStatus;
}

const kinds = (before: MemberStatus, after: MemberStatus) =>
  operatorEvents(before, after).map((e) => [e.level, e.fields['event']]);
const META = { term: 2, leaderId: 'n2' };

describe('operator log', () => {
  it('says nothing when nothing changed', () => {
    const s = status(META, { 'acme/default': { term: 3, leaderId: 'n1' } });
    expect(operatorEvents(s, s)).toEqual([]);
  });

  it('warns when this member, elected lacking payloads, handed the leadership on', () => {
    const before = status(META, { 'acme/default': { term: 3, leaderId: 'n2' } });
    const lacking = { term: 4, leaderId: 'n1', lackingHandOffs: 1, payloadsMissing: 12 };
    const after = status(META, { 'acme/default': lacking });
    const events = operatorEvents(before, after).filter((e) => e.level === 'warn');
    expect(events.map((e) => e.fields)).toEqual([{
      event: 'lacking_hand_off', member: 'n1', spool: 'acme/default', group: 's-acme/default',
      term: 4, missing: 12,
    }]);
    expect(events[0]!.message).toBe('n1 was elected for spool acme/default lacking 12 payloads '
      + 'and handed the leadership to an up-to-date replica instead of opening');
    expect(kinds(after, after)).toEqual([]); // once per hand-over, not while the count stays
  });

  it('logs a primary change once, with from, to and term', () => {
    const before = status(META, { 'acme/default': { term: 3, leaderId: 'n2' } });
    const after = status(META, { 'acme/default': { term: 4, leaderId: 'n1', serving: true } });
    const events = operatorEvents(before, after);
    expect(events.map((e) => e.fields['event'])).toEqual(['leader_changed', 'primary_opened']);
    expect(events[0]!.fields).toMatchObject({
      spool: 'acme/default', from: 'n2', to: 'n1', term: 4, member: 'n1',
    });
    expect(events[0]!.message).toBe('spool acme/default primary is now n1 (was n2, term 4)');
  });

  it('logs a lost leader as a warning and a re-election of the same leader', () => {
    const a = status(META, {});
    const lost = status({ term: 3, leaderId: null }, {});
    const back = status({ term: 4, leaderId: 'n2' }, {});
    expect(kinds(a, lost)).toEqual([['warn', 'leader_lost']]);
    expect(kinds(lost, back)).toEqual([['info', 'leader_changed']]);
    expect(kinds(a, back)).toEqual([['info', 'election']]);
  });

  it('logs members joining and leaving, replicas added and removed, a failed replica', () => {
    const before = status(META, { a: { term: 1, leaderId: 'n2' } });
    const voters = ['n1', 'n2', 'n4'];
    const after = status(META, { b: { term: 1, leaderId: 'n2' } }, voters);
    expect(kinds(before, after)).toEqual([
      ['info', 'member_joined'], ['info', 'member_left'],
      // A new replica that already knows its primary says who it is.
      ['info', 'replica_added'], ['info', 'leader_changed'], ['info', 'replica_removed'],
    ]);
    const failed = status(META, { b: { term: 1, leaderId: 'n2', failure: 'EIO' } }, voters);
    const events = operatorEvents(after, failed).map((e) => [
      e.level, e.fields['event'], e.fields['reason'],
    ]);
    expect(events).toEqual([['error', 'replica_failed', 'EIO']]);
  });

  it('logs the disk alarm raised (warn) and cleared (info), also both between two samples', () => {
    const disk = (alarm: boolean, raisedTotal: number, freeBytes: number) => ({
      alarm, raisedTotal, freeBytes, totalBytes: 10_000, reserveBytes: 1_000, clearBytes: 1_100,
      refusedTotal: 0, probeErrorsTotal: 0, probeError: null,
    });
    const base = status(META, {});
    const ok = { ...base, disk: disk(false, 0, 5_000) };
    const low = { ...base, disk: disk(true, 1, 900) };
    const back = { ...base, disk: disk(false, 1, 2_000) };
    const blip = { ...base, disk: disk(false, 2, 2_000) };
    expect(kinds(ok, ok)).toEqual([]);
    expect(kinds(ok, low)).toEqual([['warn', 'disk_alarm_raised']]);
    expect(operatorEvents(ok, low)[0]!.fields).toMatchObject({ freeBytes: 900, reserveBytes: 1_000 });
    expect(kinds(low, low)).toEqual([]);
    expect(kinds(low, back)).toEqual([['info', 'disk_alarm_cleared']]);
    expect(kinds(back, blip)).toEqual([['warn', 'disk_alarm_raised'], ['info', 'disk_alarm_cleared']]);
    expect(kinds(base, base)).toEqual([]); // no disk watched
  });
});
