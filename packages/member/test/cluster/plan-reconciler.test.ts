// The plan reconciler on a fake member: a served spool whose engine runs an older plan than the
// metadata's gets one setPlan at a time, retried a tick after a failure; a spool outside
// accounts, or one not served here, gets none.

import { describe, expect, it } from 'vitest';
import { type Plan, SpoolEngine } from '@spoolmq/engine';
import { ManualClock, settle } from '@spoolmq/protocol';
import { type AccountPlan, resolveAccountPlan } from '../../src/cluster/meta-commands.js';
import type { MetaState } from '../../src/cluster/meta-state.js';
import { PlanReconciler } from '../../src/cluster/plan-reconciler.js';

const T0 = 1_800_000_000_000;
const TICK_MS = 50;

function fixture(serving: boolean) {
  const engine = new SpoolEngine();
  const clock = new ManualClock();
  const proposed: { plan: Plan; version: number }[] = [];
  let failures = 0;
  const replica = {
    engine,
    isServing: () => serving,
    route: () => ({
      kind: 'local' as const,
      host: {
        setPlan: async (plan: Plan, version: number): Promise<void> => {
          proposed.push({ plan, version });
          if (failures > 0) {
            failures--;
            throw new Error('no leader lease');
          }
          engine.apply({ type: 'setPlan', plan, version }, T0);
        },
      },
    }),
  };
  const reconciler = new PlanReconciler({
    replica: (spool) => (spool === 'acme:default' ? replica : undefined),
    spools: () => ['acme:default'],
    clock,
    retryMs: TICK_MS,
  });
  const plan: AccountPlan = resolveAccountPlan({ queuesPerSpoolMax: 7 });
  const state = (epoch: number): Pick<MetaState, 'spools' | 'planOfSpool' | 'planEpoch'> => ({
    spools: new Map([['acme:default', {}], ['system', {}]]) as unknown as MetaState['spools'],
    planOfSpool: (spool) => (spool === 'acme:default' ? plan : null),
    planEpoch: epoch,
  });
  return { engine, clock, proposed, reconciler, state, failWith: (n: number) => (failures = n) };
}

describe('PlanReconciler', () => {
  it('logs the metadata plan into a served spool that runs an older one', async () => {
    const f = fixture(true);
    expect(f.reconciler.behind('acme:default', f.engine)).toBe(false); // no metadata yet
    f.reconciler.refresh(f.state(3));
    await settle();
    expect(f.proposed.map((p) => [p.plan.queuesPerSpoolMax, p.version])).toEqual([[7, 3]]);
    expect(f.reconciler.behind('acme:default', f.engine)).toBe(false);
    expect(f.reconciler.behind('system', f.engine)).toBe(false); // outside accounts: no plan
  });

  it('proposes once at a time, and again a tick after a failure', async () => {
    const f = fixture(true);
    f.failWith(1);
    f.reconciler.refresh(f.state(3));
    f.reconciler.reconcile('acme:default'); // in flight already: no second proposal
    await settle();
    expect(f.proposed).toHaveLength(1);
    expect(f.clock.pendingTimers).toBe(1);
    await f.clock.advance(TICK_MS);
    await settle();
    expect(f.proposed).toHaveLength(2);
    expect(f.reconciler.behind('acme:default', f.engine)).toBe(false);
  });

  it('proposes nothing for a spool this member does not serve', async () => {
    const f = fixture(false);
    f.reconciler.refresh(f.state(3));
    await settle();
    expect(f.proposed).toEqual([]);
    // Behind all the same: a call reaching it as primary is turned away until the plan is logged.
    expect(f.reconciler.behind('acme:default', f.engine)).toBe(true);
  });
});
