// Waits on a group's applies, on a fake node whose turns the test runs: the condition is judged
// on each turn, time runs out on the cluster clock (judged on the next turn), and a closing
// member or node ends the wait with 503. A restarted node's catch-up ends when it applied its
// commit index, when its time runs out, or when it closes.

import type { RaftNode } from '@spoolmq/raft';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { appliedCommitted, untilApplied } from '../../src/cluster/node-wait.js';

type Check = (resolve: () => void, reject: (error: Error) => void) => void;

function fixture() {
  const clock = new ManualClock();
  const checks: { check: Check; resolve: () => void; reject: (error: Error) => void }[] = [];
  const node = {
    watch: (check: Check) =>
      new Promise<void>((resolve, reject) => checks.push({ check, resolve, reject })),
  } as unknown as RaftNode;
  const flags = { closing: false };
  const host = { id: 'n1', clock, isClosing: () => flags.closing };
  /** One turn of the node: every watcher's check runs. */
  const turn = (): void => {
    for (const watcher of checks) watcher.check(watcher.resolve, watcher.reject);
  };
  return { clock, node, flags, host, turn, checks };
}

describe('untilApplied', () => {
  it('resolves true on the turn the condition holds, at once when it holds already', async () => {
    const f = fixture();
    expect(await untilApplied(f.host, f.node, () => true, 1_000)).toBe(true);
    const state = { applied: false };
    const wait = untilApplied(f.host, f.node, () => state.applied, 1_000);
    f.turn();
    state.applied = true;
    f.turn();
    expect(await wait).toBe(true);
    expect(f.clock.pendingTimers).toBe(0);
  });

  it('resolves false on the first turn after its time ran out on the cluster clock', async () => {
    const f = fixture();
    const wait = untilApplied(f.host, f.node, () => false, 1_000);
    await f.clock.advance(1_000);
    f.turn();
    expect(await wait).toBe(false);
  });

  it('rejects 503 when the member closes, or the node rejects its watchers', async () => {
    const f = fixture();
    const closing = untilApplied(f.host, f.node, () => false, 1_000);
    f.flags.closing = true;
    f.turn();
    await expect(closing).rejects.toThrow('member n1 closed; run the command again');
    f.flags.closing = false;
    const closed = untilApplied(f.host, f.node, () => false, 1_000);
    f.checks.at(-1)!.reject(new Error('node closed'));
    await expect(closed).rejects.toMatchObject({ kind: 'unavailable' });
    expect(f.clock.pendingTimers).toBe(0);
  });
});

describe('appliedCommitted', () => {
  function node(applied: Promise<void>) {
    return {
      status: () => ({ commitIndex: 7 }),
      appliedThrough: (index: number) => (index === 7 ? applied : Promise.reject(new Error('?'))),
    } as unknown as RaftNode;
  }

  it('resolves once the node applied its commit index, leaving no timer', async () => {
    const clock = new ManualClock();
    await appliedCommitted(node(Promise.resolve()), clock, 1_000);
    expect(clock.pendingTimers).toBe(0);
  });

  it('resolves after its time on the clock, or when the node closes, never rejecting', async () => {
    const clock = new ManualClock();
    let done = false;
    const waiting = appliedCommitted(node(new Promise(() => undefined)), clock, 1_000);
    void waiting.then(() => (done = true));
    await clock.advance(999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    await appliedCommitted(node(Promise.reject(new Error('closed'))), clock, 1_000);
    expect(clock.pendingTimers).toBe(0);
  });
});
