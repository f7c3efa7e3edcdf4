// Following the metadata, on recorded effects: each applied command runs the effects it may
// need (a restart of the groups, all of them), one queued reconciliation per batch of applies or
// node event, the periodic one on the cluster clock until close; and when the metadata counts
// as caught up.

import { EventEmitter } from 'node:events';
import type { RaftNode } from '@spoolmq/raft';
import { describe, expect, it } from 'vitest';
import { ManualClock, settle } from '@spoolmq/protocol';
import {
  type MetaEffects,
  MetaFollower,
  RECONCILE_INTERVAL_MS,
  metaCaughtUp,
} from '../../src/cluster/meta-follower.js';

function fixture() {
  const clock = new ManualClock();
  const log: string[] = [];
  const flags = { closing: false };
  const effects: MetaEffects = {
    isClosing: () => flags.closing,
    clock,
    spoolDeleted: (name) => void log.push(`deleted ${name}`),
    membersAdded: () => void log.push('added'),
    membershipChanged: () => void log.push('membership'),
    authChanged: () => void log.push('auth'),
    plansChanged: () => void log.push('plans'),
    movesChanged: () => void log.push('moves'),
    reconcile: () => void log.push('reconcile'),
  };
  return { clock, log, flags, follower: new MetaFollower(effects) };
}

describe('MetaFollower', () => {
  it('runs the effects each command needs, then one reconciliation after the batch', async () => {
    const f = fixture();
    f.follower.applied({ type: 'deleteSpool', name: 'a/b' }, { kind: 'ok' });
    f.follower.applied({ type: 'putPlan', name: 'p', plan: {} as never }, { kind: 'ok' });
    f.follower.applied({ type: 'addMember', id: 'n4', address: 'h:1' }, { kind: 'ok' });
    expect(f.log).toEqual([
      'deleted a/b', 'reconcile',
      'auth', 'plans', 'reconcile',
      'added', 'membership', 'reconcile',
    ]);
    f.log.length = 0;
    await settle();
    expect(f.log).toEqual(['reconcile']); // queued once for the whole batch
  });

  it('runs every effect but a deletion after the groups restarted', () => {
    const f = fixture();
    f.follower.applied(null, null);
    expect(f.log).toEqual(['added', 'membership', 'auth', 'plans', 'reconcile', 'moves']);
  });

  it('reconciles after node events and every interval until closed', async () => {
    const f = fixture();
    const node = new EventEmitter();
    f.follower.watch(node as unknown as RaftNode);
    node.emit('leader-change', 'n2', 3);
    node.emit('config-change');
    await settle();
    expect(f.log).toEqual(['reconcile']);
    f.follower.start();
    await f.clock.advance(RECONCILE_INTERVAL_MS * 2);
    expect(f.log).toEqual(['reconcile', 'reconcile', 'reconcile']);
    f.follower.close();
    expect(f.clock.pendingTimers).toBe(0);
  });

  it('counts the metadata caught up: a leader known, all it committed applied', () => {
    const status = { leaderId: 'n2' as string | null, appliedIndex: 5, commitIndex: 5 };
    const lease = { held: false };
    const node = { status: () => status, hasLeaderLease: () => lease.held } as unknown as RaftNode;
    expect(metaCaughtUp(undefined, 'n1')).toBe(false);
    expect(metaCaughtUp(node, 'n1')).toBe(true);
    status.appliedIndex = 4;
    expect(metaCaughtUp(node, 'n1')).toBe(false);
    status.appliedIndex = 5;
    status.leaderId = 'n1'; // this member leads: only with its lease (its term's entry applied)
    expect(metaCaughtUp(node, 'n1')).toBe(false);
    lease.held = true;
    expect(metaCaughtUp(node, 'n1')).toBe(true);
  });
});
