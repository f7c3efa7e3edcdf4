// `SpoolService` over the spool hosts this process serves as primary, as one call runner: a
// `Call` (decoded from a gateway's frame, or built by a method) finds the host of its spool (404
// spool_not_found otherwise) and runs its operation's step in HOST_STEPS. The SpoolService
// methods are derived from the protocol's operations table (installOperations), so a call from a
// gateway goes frame -> Call -> host, never through a method per operation. `runCall` is async,
// so a synchronous throw from a host becomes a rejection, as the interface promises. Calls that
// grow the store (create queue, send, ack-and-send) first ask the growth guard, once the host is
// found (a member that is not the primary still redirects): the disk and memory watermarks
// refuse there.

import { MqError, type SpoolService } from '@spoolmq/engine';
import {
  CALL_RUNNER,
  installOperations,
  type Call,
  type CallOf,
  type CallRunner,
  type Op,
  type OpResults,
  type SpoolOperations,
} from '@spoolmq/protocol';
import type { SpoolHost } from './spool-host.js';

/**
 * Finds the host serving `spool` now, or throws the MqError that answers the call (404
 * spool_not_found, 503 unavailable not-primary with the leader hint in the cluster).
 */
export type HostResolver = (spool: string) => SpoolHost;

/** Refusal of a call that would grow the store (507 storage_full; 503 on memory), or null. */
export type GrowthGuard = () => MqError | null;

type HostStep<O extends Op> = (
  host: SpoolHost,
  call: CallOf<O>,
  signal: AbortSignal | undefined,
) => OpResults[O] | Promise<OpResults[O]>;

/** What each operation does on the spool's host: the one place that names SpoolHost's steps. */
const HOST_STEPS: { readonly [O in Op]: HostStep<O> } = {
  checkTarget: (host, call) => host.checkTarget(call.queue),
  describeSpool: (host) => host.describe(),
  spoolStats: (host, call) => host.stats(call.query),
  listQueues: (host, call) => host.listQueues(call.query),
  describeQueue: (host, call) => host.describeQueue(call.queue),
  createQueue: (host, call) => host.createQueue(call.queue, call.settings),
  updateQueue: (host, call) => host.updateQueue(call.queue, call.settings),
  deleteQueue: (host, call) => host.deleteQueue(call.queue, call.mode),
  send: (host, call) => host.send(call.queue, call.request),
  receive: (host, call, signal) =>
    host.receive(
      call.queue,
      signal === undefined ? { waitMs: call.waitMs } : { waitMs: call.waitMs, signal },
    ),
  ack: (host, call) => host.ack(call.lease),
  nack: (host, call) => host.nack(call.lease),
  release: (host, call) => host.release(call.lease, call.delayMs),
  fail: (host, call) => host.fail(call.lease),
  renew: (host, call) => host.renew(call.lease),
  peek: (host, call) => host.peek(call.handle),
  recover: (host, call) => host.recover(call.token, call.delayMs),
  discard: (host, call) => host.discard(call.token),
  listMessages: (host, call) => host.listMessages(call.queue, call.query),
  failureHead: (host, call) => host.failureHead(call.queue),
  ackAndSend: (host, call) => host.ackAndSend(call.lease, call.queue, call.request),
};

/** Operations that grow the store: refused by the growth guard under a disk or memory alarm. */
const GROWING_OPS: ReadonlySet<Op> = new Set<Op>(['createQueue', 'send', 'ackAndSend']);

// The operations' methods, defined on the prototype from the operations table (see below).
export interface HostedSpoolService extends SpoolOperations {}

export class HostedSpoolService implements SpoolService, CallRunner {
  readonly [CALL_RUNNER] = true as const;

  /**
   * `hosts`: a fixed map (the local variant) or a resolver (the cluster, where the spools served
   * here change with leadership). `isReady`: the answer of `ready()` (default: always ready).
   * `growthGuard`: asked before create queue, send and ack-and-send (default: never refuses).
   */
  constructor(
    private readonly hosts: ReadonlyMap<string, SpoolHost> | HostResolver,
    private readonly isReady: () => boolean = () => true,
    private readonly growthGuard: GrowthGuard = () => null,
  ) {}

  static {
    installOperations(HostedSpoolService.prototype, function (call, signal) {
      return this.runCall(call, signal);
    });
  }

  ready(): boolean {
    return this.isReady();
  }

  /** Runs `call` on its spool's host; rejects with the MqError that answers it. */
  async runCall(call: Call, signal?: AbortSignal): Promise<unknown> {
    const host = this.host(call.spool);
    if (GROWING_OPS.has(call.op)) {
      const refusal = this.growthGuard();
      if (refusal !== null) throw refusal;
    }
    const step = HOST_STEPS[call.op] as HostStep<Op>;
    return step(host, call as CallOf<Op>, signal);
  }

  private host(spool: string): SpoolHost {
    if (typeof this.hosts === 'function') return this.hosts(spool);
    const host = this.hosts.get(spool);
    if (host === undefined) throw new MqError('spool_not_found', `spool ${spool} does not exist`);
    return host;
  }
}
