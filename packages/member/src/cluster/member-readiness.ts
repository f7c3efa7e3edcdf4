// When a member can serve, and who waits for it. Two levels:
// - service-ready (`/readyz`, the hosted service): the cluster secret is known, every local
//   spool has a known primary, and no replica here is still fetching payloads it lacks. Why the
//   last: a member that lacks a payload (it was sent a snapshot, or a scrub or read found its
//   copy bad) leaves the other replicas' copies as the only ones until the fetch ends, and a
//   rolling restart (Kubernetes waits for /readyz before it stops the next member; so does the
//   e2e rolling restart) or an operator must not take one of those down meanwhile. Payloads no
//   replica could give (payloadsUnrepaired) do not count: waiting cannot help them, and the
//   member must still serve everything else. The fetch starts at once, so readiness waits only
//   for those bytes to arrive from a peer.
// - member-ready (`Member.ready()`): service-ready, and every spool the metadata places here
//   has started.
// Waiters are resolved by events (the member calls `check` after each reconciliation and
// replica change), bounded by a timer on the cluster clock: nothing polls.

import type { Clock, TimerHandle } from '@spoolmq/protocol';
import { unavailable } from './cluster-errors.js';
import type { SpoolReplica } from './spool-replica.js';

/** What readiness reads of a spool replica here. */
export type ReadyReplica = Pick<SpoolReplica, 'hasKnownPrimary' | 'payloadsFetching' | 'status'>;

/** What readiness needs of its member. */
export interface ReadinessHost {
  readonly id: string;
  /** The cluster layer's clock (wait deadlines). */
  readonly clock: Clock;
  /** Not ready whatever the replicas say: closing, lame duck, secret unknown, recovering. */
  held(): boolean;
  /** The replicas running here, by spool. */
  replicas(): ReadonlyMap<string, ReadyReplica>;
  /** The spools of the metadata with their replica sets. */
  placements(): Iterable<{ readonly name: string; readonly replicas: readonly string[] }>;
  /** Why the last replica failed to start (for a timed-out wait), or null. */
  lastStartError(): Error | null;
}

interface ReadyWaiter {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  readonly timer: TimerHandle;
}

/** A spool whose replica here lacks payloads (for `/readyz` detail). */
export interface PayloadsLacking {
  readonly spool: string;
  readonly fetching: number;
  readonly unrepaired: number;
}

export class MemberReadiness {
  private readonly waiters = new Set<ReadyWaiter>();

  constructor(private readonly host: ReadinessHost) {}

  /** Service-ready (see the header). */
  serviceReady(): boolean {
    if (this.host.held()) return false;
    for (const replica of this.host.replicas().values()) {
      if (!replica.hasKnownPrimary() || replica.payloadsFetching() > 0) return false;
    }
    return true;
  }

  /** Member-ready: service-ready, and every spool placed here has started. */
  memberReady(): boolean {
    if (!this.serviceReady()) return false;
    const replicas = this.host.replicas();
    for (const record of this.host.placements()) {
      if (record.replicas.includes(this.host.id) && !replicas.has(record.name)) return false;
    }
    return true;
  }

  /**
   * Resolves once member-ready. Rejects with 503 unavailable after `timeoutMs` on the cluster
   * clock, or when `close` is called.
   */
  wait(timeoutMs: number): Promise<void> {
    if (this.memberReady()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = this.host.clock.setTimer(() => {
        this.waiters.delete(waiter);
        const error = this.host.lastStartError();
        const cause = error === null ? '' : ` (${error.message})`;
        reject(unavailable(`member ${this.host.id} not ready within ${timeoutMs} ms${cause}`));
      }, timeoutMs);
      const waiter: ReadyWaiter = { resolve, reject, timer };
      this.waiters.add(waiter);
    });
  }

  /** Resolves the waiters if member-ready now (called after every change that may make it). */
  check(): void {
    if (this.waiters.size === 0 || !this.memberReady()) return;
    for (const waiter of this.waiters) {
      this.host.clock.clearTimer(waiter.timer);
      waiter.resolve();
    }
    this.waiters.clear();
  }

  /** The spools whose replica here lacks payloads; empty when none lacks any. */
  payloadsLacking(): PayloadsLacking[] {
    const out: PayloadsLacking[] = [];
    for (const [spool, replica] of this.host.replicas()) {
      const { payloadsMissing, payloadsUnrepaired } = replica.status();
      if (payloadsMissing === 0) continue;
      out.push({ spool, fetching: replica.payloadsFetching(), unrepaired: payloadsUnrepaired });
    }
    return out;
  }

  /** Rejects every waiter with `error` (the member closes). */
  close(error: Error): void {
    for (const waiter of this.waiters) {
      this.host.clock.clearTimer(waiter.timer);
      waiter.reject(error);
    }
    this.waiters.clear();
  }
}
