// The auth push on a fake metadata replica: one push per turn after applied entries, the table
// built from the metadata, watchers bounded, and a propagation wait ended by the event that makes
// it hold (a push, an acknowledgement, a watcher leaving), by its time on the cluster clock, or
// by close; no timer left behind.

import { describe, expect, it } from 'vitest';
import { ManualClock, settle } from '@spoolmq/protocol';
import { AuthPush } from '../../src/cluster/auth-push.js';
import { MetaState } from '../../src/cluster/meta-state.js';
import { ACCOUNT_WATCHERS_MAX } from '../../src/rpc/accounts-rpc.js';

function fixture() {
  const clock = new ManualClock();
  const state = new MetaState();
  const meta = { applied: 0 };
  const replica = { state, status: () => ({ appliedIndex: meta.applied }) };
  const flags = { closing: false, current: true };
  const auth = new AuthPush({
    meta: () => replica as never,
    isClosing: () => flags.closing,
    metaCurrent: () => flags.current,
    messageSizeMaxBytes: 1_024,
    clock,
  });
  return { clock, meta, flags, auth };
}

describe('AuthPush', () => {
  it('pushes once per turn, at the applied index, the table version', async () => {
    const f = fixture();
    let pushes = 0;
    const unsubscribe = f.auth.onAuthChange(() => pushes++);
    f.meta.applied = 7;
    f.auth.schedule();
    f.auth.schedule();
    expect(pushes).toBe(0);
    await settle();
    expect(pushes).toBe(1);
    expect(f.auth.authTable()).toEqual({ version: 7, accounts: [], keys: [] });
    expect(f.auth.propagated(7)).toBe(true);
    expect(f.auth.propagated(8)).toBe(false);
    unsubscribe();
    f.auth.schedule();
    await settle();
    expect(pushes).toBe(1);
  });

  it('waits for every watcher to acknowledge, and not for one that left', async () => {
    const f = fixture();
    const a = f.auth.addWatcher()!;
    const b = f.auth.addWatcher()!;
    f.meta.applied = 3;
    let result: boolean | null = null;
    void f.auth.whenPropagated(3, 1_000).then((held) => (result = held));
    f.auth.schedule();
    await settle();
    expect(result).toBeNull();
    f.auth.ackWatcher(a, 3);
    f.auth.ackWatcher(a, 2); // older: ignored
    await settle();
    expect(result).toBeNull();
    f.auth.removeWatcher(b);
    await settle();
    expect(result).toBe(true);
    expect(f.clock.pendingTimers).toBe(0);
  });

  it('answers what holds once the wait runs out on the cluster clock; false on close', async () => {
    const f = fixture();
    f.auth.addWatcher();
    const late = f.auth.whenPropagated(1, 500);
    await f.clock.advance(500);
    await expect(late).resolves.toBe(false);
    expect(await f.auth.whenPropagated(1, 0)).toBe(false);
    const closing = f.auth.whenPropagated(1, 500);
    f.auth.close();
    await expect(closing).resolves.toBe(false);
    expect(f.clock.pendingTimers).toBe(0);
  });

  it('bounds its watchers', () => {
    const f = fixture();
    for (let i = 0; i < ACCOUNT_WATCHERS_MAX; i++) expect(f.auth.addWatcher()).not.toBeNull();
    expect(f.auth.addWatcher()).toBeNull();
    expect(f.auth.metaCurrent()).toBe(true);
  });
});
