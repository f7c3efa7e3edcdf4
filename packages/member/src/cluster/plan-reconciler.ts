// Keeps the plan each spool's engine runs equal to the plan the metadata gives its account.
// The metadata (accounts, plans) and a spool's replicated state are separate Raft groups, so a
// plan change reaches a spool as a setPlan command its primary logs. This member proposes it for
// the spools it serves, one proposal at a time per spool, again after a failure (a tick later on
// the cluster clock) and again when the metadata moved on meanwhile. Until the spool's log holds
// the plan, its primary serves nothing under the old one (see `behind`).

import type { Plan, SpoolEngine } from '@spoolmq/engine';
import type { Clock } from '@spoolmq/protocol';
import type { SpoolHost } from '../host/spool-host.js';
import { spoolPlanOf } from './meta-commands.js';
import type { MetaState } from './meta-state.js';

/** What the reconciler needs of a spool replica here. */
export interface PlannedReplica {
  readonly engine: SpoolEngine;
  isServing(): boolean;
  /** Where calls to the spool run now (SpoolReplica.route); throws when the replica stopped. */
  route():
    | { readonly kind: 'local'; readonly host: Pick<SpoolHost, 'setPlan'> }
    | { readonly kind: 'forward' };
}

/** What the reconciler needs of its member. */
export interface PlanHost {
  /** This member's replica of `spool`, if it holds one. */
  replica(spool: string): PlannedReplica | undefined;
  /** The spools this member holds a replica of. */
  spools(): Iterable<string>;
  /** The cluster layer's clock (retries). */
  readonly clock: Clock;
  /** Pause before a failed proposal is tried again (ms; a Raft tick). */
  readonly retryMs: number;
}

export class PlanReconciler {
  /** Each account spool's plan as the metadata says (spools outside accounts: none). */
  private plans = new Map<string, Plan>();
  /** The metadata's plan epoch when `plans` was computed (see MetaState.planEpoch). */
  private epoch = 0;
  /** Spools whose setPlan is being proposed here. */
  private readonly proposals = new Set<string>();

  constructor(private readonly host: PlanHost) {}

  /** Recomputes every account spool's plan from `state` and proposes the changed ones. */
  refresh(state: Pick<MetaState, 'spools' | 'planOfSpool' | 'planEpoch'>): void {
    const plans = new Map<string, Plan>();
    for (const name of state.spools.keys()) {
      const plan = state.planOfSpool(name);
      if (plan !== null) plans.set(name, spoolPlanOf(plan));
    }
    this.plans = plans;
    this.epoch = state.planEpoch;
    for (const name of this.host.spools()) this.reconcile(name);
  }

  /**
   * Whether `engine`, the engine of `spool`, runs a plan other than the metadata's that is older
   * than this member's metadata (an engine with a newer plan than lagging metadata is not
   * behind). False for a spool the metadata gives no plan.
   */
  behind(spool: string, engine: SpoolEngine): boolean {
    const plan = this.plans.get(spool);
    return plan !== undefined && this.engineBehind(engine, plan);
  }

  /**
   * While this member serves `spool` and its engine's plan differs from the metadata's, proposes
   * a setPlan (one at a time per spool; retried a tick after a failure while still serving).
   */
  reconcile(spool: string): void {
    const replica = this.host.replica(spool);
    const plan = this.plans.get(spool);
    if (replica === undefined || plan === undefined || !replica.isServing()) return;
    if (!this.engineBehind(replica.engine, plan) || this.proposals.has(spool)) return;
    let route: ReturnType<PlannedReplica['route']>;
    try {
      route = replica.route();
    } catch {
      return; // the replica stopped: nothing to propose on
    }
    // Not under the leader lease yet: the next change or call brings us back.
    if (route.kind !== 'local') return;
    const host = route.host;
    this.proposals.add(spool);
    host.setPlan(plan, this.epoch).then(
      () => {
        this.proposals.delete(spool);
        this.reconcile(spool); // the metadata may have moved on meanwhile
      },
      () => {
        this.host.clock.setTimer(() => {
          this.proposals.delete(spool);
          this.reconcile(spool);
        }, this.host.retryMs);
      },
    );
  }

  private engineBehind(engine: SpoolEngine, plan: Plan): boolean {
    return engine.planVersion < this.epoch && !samePlan(engine.plan, plan);
  }
}

/** Whether two plans set the same limits. */
function samePlan(a: Plan, b: Plan): boolean {
  return (
    a === b ||
    (a.queuesPerSpoolMax === b.queuesPerSpoolMax &&
      a.retentionLimitSeconds === b.retentionLimitSeconds &&
      a.retentionDefaultSeconds === b.retentionDefaultSeconds &&
      a.messagesPerSpoolMax === b.messagesPerSpoolMax &&
      a.payloadBytesPerSpoolMax === b.payloadBytesPerSpoolMax &&
      a.messageSizeMaxBytes === b.messageSizeMaxBytes &&
      a.dedupKeysPerSpoolMax === b.dedupKeysPerSpoolMax)
  );
}
