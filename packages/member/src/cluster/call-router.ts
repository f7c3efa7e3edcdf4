// Where a gateway's call to a spool runs: one decision, as a typed answer. `route` says `local`
// (this member's host serves the spool now) or `forward` (the member that leads it, when known,
// and the spool's replicas); `hostFor` turns a forward into the one not-primary error the wire
// carries (@spoolmq/protocol), so the gateway retries on the member it names. Failures that are
// no route at all (this member closing, metadata not loaded, a spool that does not exist or is
// starting here) throw the MqError that answers the call.

import { MqError } from '@spoolmq/engine';
import type { SpoolHost } from '../host/spool-host.js';
import { notPrimary, unavailable } from './cluster-errors.js';
import type { MetaState } from './meta-state.js';
import type { PlanReconciler } from './plan-reconciler.js';
import type { SpoolReplica } from './spool-replica.js';

export type Route =
  | { readonly kind: 'local'; readonly host: SpoolHost }
  /** The primary is `member` (null: not known now); `replicas` may name it when not. */
  | {
      readonly kind: 'forward';
      readonly member: string | null;
      readonly replicas: readonly string[];
    };

/** What the router needs of its member. */
export interface RouterHost {
  readonly id: string;
  isClosing(): boolean;
  /** This member's replica of `spool`, if it holds one. */
  replica(spool: string): Pick<SpoolReplica, 'route' | 'engine'> | undefined;
  /** The metadata as applied here (undefined before the metadata group started). */
  metaState(): Pick<MetaState, 'initialized' | 'spools'> | undefined;
  /** Whether the spool's engine lags the metadata's plan, and the proposal that fixes it. */
  readonly plans: Pick<PlanReconciler, 'behind' | 'reconcile'>;
}

export class CallRouter {
  constructor(private readonly host: RouterHost) {}

  /** Where a call to `spool` runs now. Throws MqError when it runs nowhere (see the header). */
  route(spool: string): Route {
    const host = this.host;
    if (host.isClosing()) throw unavailable(`member ${host.id} is closing`);
    const replica = host.replica(spool);
    if (replica !== undefined) {
      const route = replica.route();
      if (route.kind === 'forward') return { ...route, replicas: [] };
      if (host.plans.behind(spool, replica.engine)) {
        // The account's plan is not in the spool's log yet: nothing is served under another
        // plan. The gateway retries here shortly (this member is the primary).
        host.plans.reconcile(spool);
        return { kind: 'forward', member: host.id, replicas: [] };
      }
      return route;
    }
    const state = host.metaState();
    if (state === undefined || !state.initialized) {
      throw unavailable('cluster metadata is not loaded yet; retry');
    }
    const record = state.spools.get(spool);
    if (record === undefined) throw new MqError('spool_not_found', `spool ${spool} does not exist`);
    if (record.replicas.includes(host.id)) throw unavailable(`spool ${spool} is starting; retry`);
    return { kind: 'forward', member: null, replicas: record.replicas };
  }

  /** The host of `spool` here; a forward throws 503 unavailable not-primary with its hint. */
  hostFor(spool: string): SpoolHost {
    const route = this.route(spool);
    if (route.kind === 'local') return route.host;
    throw notPrimary(spool, route.member, route.replicas);
  }
}
