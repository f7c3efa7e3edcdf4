// Member readiness on a fake member: a waiter resolves on the check after the last placed
// spool started with a known primary, times out on the cluster clock with the start error as
// its cause, and is rejected when the member closes. Payloads being fetched hold readiness.

import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { ManualClock } from '@spoolmq/protocol';
import { MemberReadiness, type ReadyReplica } from '../../src/cluster/member-readiness.js';

function fixture() {
  const clock = new ManualClock();
  const replicas = new Map<string, ReadyReplica>();
  const state = { held: false, fetching: 0, primaryKnown: true, startError: null as Error | null };
  const replica = (): ReadyReplica => ({
    hasKnownPrimary: () => state.primaryKnown,
    payloadsFetching: () => state.fetching,
    status: () => ({ payloadsMissing: state.fetching, payloadsUnrepaired: 0 }) as ReturnType<ReadyReplica['status']>,
  });
  const readiness = new MemberReadiness({
    id: 'n1',
    clock,
    held: () => state.held,
    replicas: () => replicas,
    placements: () => [{ name: 'a', replicas: ['n1', 'n2'] }, { name: 'b', replicas: ['n2'] }],
    lastStartError: () => state.startError,
  });
  return { clock, replicas, state, replica, readiness };
}

describe('MemberReadiness', () => {
  it('resolves a waiter on the check after the placed spool started, not before', async () => {
    const f = fixture();
    expect(f.readiness.serviceReady()).toBe(true);
    expect(f.readiness.memberReady()).toBe(false); // spool a is placed here, not started
    let resolved = false;
    const wait = f.readiness.wait(1_000).then(() => (resolved = true));
    f.readiness.check();
    await Promise.resolve();
    expect(resolved).toBe(false);
    f.replicas.set('a', f.replica());
    f.state.fetching = 2; // fetching payloads it lacks: not ready yet
    f.readiness.check();
    expect(f.readiness.payloadsLacking()).toEqual([{ spool: 'a', fetching: 2, unrepaired: 0 }]);
    f.state.fetching = 0;
    f.readiness.check();
    await wait;
    expect(resolved).toBe(true);
    expect(f.clock.pendingTimers).toBe(0);
  });

  it('times out on the cluster clock with the start error, and rejects waiters on close', async () => {
    const f = fixture();
    f.state.startError = new Error('disk full');
    const late = expect(f.readiness.wait(500)).rejects.toThrow(/not ready within 500 ms \(disk full\)/);
    await f.clock.advance(500);
    await late;
    const closing = f.readiness.wait(500);
    f.readiness.close(new MqError('unavailable', 'member n1 closed'));
    await expect(closing).rejects.toThrow('member n1 closed');
    expect(f.clock.pendingTimers).toBe(0);
  });

  it('is not ready while held (closing, lame duck, no secret, recovering)', () => {
    const f = fixture();
    f.replicas.set('a', f.replica());
    expect(f.readiness.memberReady()).toBe(true);
    f.state.held = true;
    expect(f.readiness.serviceReady()).toBe(false);
  });
});
