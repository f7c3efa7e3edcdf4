// Runs a WorkloadModel against a base URL through @spoolmq/client, recording every request in a
// History: producers send (retrying an unanswered send only on a dedup queue, with its key,
// inside half its window; retrying refusals the interface calls transient), consumers receive
// and settle as the model's mix says, and now and then list failed messages to recover or
// discard one, or read stats. Each client draws its choices from its own seeded Prng.
//
// Every client call is one attempt (`retries: 0`): retries are the executor's, so each attempt
// is its own operation in the history.

import {
  MqClient,
  isMqClientError,
  type Delivery,
  type FetchFn,
  type MessageInfo,
} from '@spoolmq/client';
import { describePayload } from './backlog-payload.js';
import type { CompletionFields, History } from './history.js';
import { Prng } from '@spoolmq/raft';
import { Recorder } from './recorder.js';
import {
  type PlannedSend,
  type QueueSpec,
  type WorkloadModel,
  clientId,
  clientSeed,
  planSend,
  planSettle,
} from './workload.js';

export interface WorkloadTarget {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  readonly baseUrl: string;
  /** Bearer key; the local variant accepts any. */
  readonly apiKey: string;
  /** Replacement fetch (tests). */
  readonly fetch?: FetchFn;
}

export interface RunWorkloadOptions {
  readonly model: WorkloadModel;
  readonly target: WorkloadTarget;
  readonly history: History;
  /** Clients stop starting operations after this long, ms. */
  readonly durationMs: number;
  /**
   * Clients stop starting operations once the history holds this many; default half the
   * history's bound, leaving room for the drain. At most `history.opsMax`.
   */
  readonly opsMax?: number;
  /** Aborting stops the clients early (operations in flight finish or time out). */
  readonly signal?: AbortSignal;
}

export interface WorkloadSummary {
  /** Operations the workload recorded. */
  readonly operations: number;
  /** Logical sends started. */
  readonly logicalSends: number;
  /** Deliveries received. */
  readonly deliveries: number;
}

/** Pause before retrying a refusal the interface calls transient (503, 429, dedup_in_flight). */
const TRANSIENT_RETRY_MS = 100;

/** A client for `target` and `spool` whose calls are single attempts. */
export function workloadClient(target: WorkloadTarget, spool: string): MqClient {
  return new MqClient({
    baseUrl: target.baseUrl,
    apiKey: target.apiKey,
    spool,
    sendRetry: { retries: 0 },
    fetch: boundedFetch(target.fetch ?? globalThis.fetch),
  });
}

/**
 * Past this, a request of the harness is abandoned as unanswered: longer than any long poll the
 * workload issues plus the gateway's own bounds, so it never cuts an answer that is coming.
 */
export const HARNESS_REQUEST_BOUND_MS = 120_000;

/**
 * `inner` with every request bounded by HARNESS_REQUEST_BOUND_MS besides its own signal: the
 * drain and the final listing pass none, and a request that never completes (a 10-minute run
 * once waited forever after its faults) must end the run with an error, not hang it.
 */
function boundedFetch(inner: FetchFn): FetchFn {
  return (input, init) => {
    const bound = AbortSignal.timeout(HARNESS_REQUEST_BOUND_MS);
    const signal = init.signal == null ? bound : AbortSignal.any([init.signal, bound]);
    return inner(input, { ...init, signal });
  };
}

/**
 * Creates the model's queues with their settings; a queue that already exists (409) is kept.
 * Rejects with the client's error on any other failure.
 */
export async function setupQueues(model: WorkloadModel, target: WorkloadTarget): Promise<void> {
  const client = workloadClient(target, model.spool);
  for (const queue of model.queues) {
    try {
      await client.createQueue(queue.name, {
        leaseTimeoutSeconds: queue.leaseTimeoutSeconds,
        maxRetries: queue.maxRetries,
        dedupWindowSeconds: queue.dedupWindowSeconds,
        retentionSeconds: queue.retentionSeconds,
      });
    } catch (error) {
      if (!(isMqClientError(error) && error.status === 409)) throw error;
    }
  }
}

/** Runs producers and consumers until the duration, the op bound or the signal stops them. */
export async function runWorkload(options: RunWorkloadOptions): Promise<WorkloadSummary> {
  const { model, history } = options;
  // A client checks the bound before a step of up to three operations (receive, renew, ack).
  const headroom = 3 * (model.producers + model.consumers);
  const opsWanted = options.opsMax ?? Math.floor(history.opsMax / 2);
  const opsMax = Math.min(opsWanted, history.opsMax - headroom);
  const startOps = history.size;
  const deadlineMs = history.now() + options.durationMs;
  const run: RunState = {
    stopped: () =>
      options.signal?.aborted === true || history.now() >= deadlineMs || history.size >= opsMax,
    logicalSends: 0,
    deliveries: 0,
  };
  const client = workloadClient(options.target, model.spool);
  const loops: Promise<void>[] = [];
  const worker = (role: 'producer' | 'consumer', i: number): WorkloadClient => {
    const prng = new Prng(clientSeed(model.seed, role, i));
    return new WorkloadClient(model, client, history, clientId(role, i), prng, run);
  };
  for (let i = 0; i < model.producers; i += 1) loops.push(worker('producer', i).produce());
  for (let i = 0; i < model.consumers; i += 1) loops.push(worker('consumer', i).consume());
  await Promise.all(loops);
  const { logicalSends, deliveries } = run;
  return { operations: history.size - startOps, logicalSends, deliveries };
}

interface RunState {
  readonly stopped: () => boolean;
  logicalSends: number;
  deliveries: number;
}

interface Lease {
  readonly queue: QueueSpec;
  readonly lease: string;
  readonly messageId: string;
}

class WorkloadClient {
  private readonly recorder: Recorder;
  private sends = 0;

  constructor(
    private readonly model: WorkloadModel,
    private readonly client: MqClient,
    history: History,
    private readonly id: string,
    private readonly prng: Prng,
    private readonly run: RunState,
  ) {
    this.recorder = new Recorder(history, id, model.requestTimeoutMs);
  }

  async produce(): Promise<void> {
    // Bounded by the run's deadline and op bound (`stopped`).
    while (!this.run.stopped()) {
      this.sends += 1;
      this.run.logicalSends += 1;
      await this.sendWithRetries(planSend(this.model, this.prng, this.id, this.sends));
    }
  }

  async consume(): Promise<void> {
    while (!this.run.stopped()) {
      const queue = this.prng.pick(this.model.queues);
      if (this.prng.chance(this.model.janitorChance)) await this.janitor(queue);
      if (this.prng.chance(this.model.statsChance)) await this.readStats(queue);
      if (this.run.stopped()) return;
      const lease = await this.receive(queue);
      if (lease === undefined) continue;
      this.run.deliveries += 1;
      await this.settle(lease);
    }
  }

  /** One logical send: attempts while the answer allows a retry, up to sendAttemptsMax. */
  private async sendWithRetries(plan: PlannedSend): Promise<void> {
    const spec = this.model.queues.find((q) => q.name === plan.queue)!;
    const startMs = performance.now();
    for (let attempt = 1; attempt <= this.model.sendAttemptsMax; attempt += 1) {
      const result = await this.recorder.call(
        'send',
        {
          queue: plan.queue,
          payload: plan.payload,
          ...(plan.dedupKey === undefined ? {} : { dedupKey: plan.dedupKey }),
          ...(plan.delaySeconds > 0 ? { delayMs: plan.delaySeconds * 1000 } : {}),
        },
        (signal) =>
          this.client.send(plan.queue, plan.payload, {
            retries: 0,
            signal,
            ...(plan.dedupKey === undefined ? {} : { dedupKey: plan.dedupKey }),
            ...(plan.delaySeconds > 0 ? { delaySeconds: plan.delaySeconds } : {}),
          }),
        (sent) => ({ status: sent.duplicate ? 200 : 201, messageId: sent.messageId }),
      );
      if (result.outcome === 'ok' || this.run.stopped()) return;
      if (result.outcome === 'info') {
        // The retry rule: only with a dedup key, and while the window surely remembers it.
        const windowMs = spec.dedupWindowSeconds * 1000;
        if (plan.dedupKey === undefined || performance.now() - startMs > windowMs / 2) return;
        continue;
      }
      if (!isTransient(result.error.status, result.error.kind)) return;
      await new Promise((resolve) => setTimeout(resolve, TRANSIENT_RETRY_MS * attempt));
    }
  }

  private async receive(queue: QueueSpec): Promise<Lease | undefined> {
    const waitSeconds = this.model.receiveWaitSeconds;
    const result = await this.recorder.call(
      'recv',
      { queue: queue.name },
      (signal) => this.client.receive(queue.name, { waitSeconds, signal }),
      deliveryFields,
    );
    if (result.outcome !== 'ok' || result.value === null) return undefined;
    return { queue, lease: result.value.lease, messageId: result.value.messageId };
  }

  private async settle(lease: Lease): Promise<void> {
    const action = planSettle(this.model, this.prng, lease.queue, this.id, () => (this.sends += 1));
    const token = lease.lease;
    switch (action.kind) {
      case 'abandon':
        return;
      case 'ack':
        await this.leaseCall('ack', lease, (signal) => this.client.ack(token, { signal }));
        return;
      case 'nack':
        await this.leaseCall('nack', lease, (signal) => this.client.nack(token, { signal }));
        return;
      case 'fail':
        await this.leaseCall('fail', lease, (signal) => this.client.fail(token, { signal }));
        return;
      case 'discard':
        await this.leaseCall('discard', lease, (signal) =>
          this.client.discard({ lease: token }, { signal }),
        );
        return;
      case 'release': {
        const delay = action.delayMs > 0 ? { delayMs: action.delayMs } : {};
        await this.leaseCall(
          'release',
          lease,
          (signal) => this.client.release(token, { ...delay, signal }),
          delay,
        );
        return;
      }
      case 'renewThenAck':
        return this.renewThenAck(lease);
      case 'ackAndSend':
        return this.ackAndSend(lease, action.send);
    }
  }

  /** A lease operation answered 204 with no headers the checker needs. */
  private async leaseCall(
    kind: 'ack' | 'nack' | 'fail' | 'discard' | 'release',
    lease: Lease,
    perform: (signal: AbortSignal) => Promise<void>,
    extra: { readonly delayMs?: number } = {},
  ): Promise<'ok' | 'fail' | 'info'> {
    const fields = { queue: lease.queue.name, lease: lease.lease, messageId: lease.messageId };
    const result = await this.recorder.call(kind, { ...fields, ...extra }, perform, () => ({
      status: 204,
    }));
    return result.outcome;
  }

  private async renewThenAck(lease: Lease): Promise<void> {
    const fields = { queue: lease.queue.name, lease: lease.lease, messageId: lease.messageId };
    const renewed = await this.recorder.call(
      'renew',
      fields,
      (signal) => this.client.renew(lease.lease, { signal }),
      (r) => ({
        status: 204,
        ...(r.leaseExpiresAt === undefined ? {} : { leaseExpiresAt: r.leaseExpiresAt }),
      }),
    );
    if (renewed.outcome === 'fail') return;
    await this.leaseCall('ack', lease, (signal) => this.client.ack(lease.lease, { signal }));
  }

  private async ackAndSend(lease: Lease, send: PlannedSend): Promise<void> {
    this.run.logicalSends += 1;
    const delayMs = send.delaySeconds * 1000;
    await this.recorder.call(
      'ackAndSend',
      {
        queue: send.queue,
        sourceQueue: lease.queue.name,
        lease: lease.lease,
        messageId: lease.messageId,
        payload: send.payload,
        ...(send.dedupKey === undefined ? {} : { dedupKey: send.dedupKey }),
        ...(delayMs > 0 ? { delayMs } : {}),
      },
      (signal) =>
        this.client.ackAndSend(lease.lease, send.queue, send.payload, {
          signal,
          ...(send.dedupKey === undefined ? {} : { dedupKey: send.dedupKey }),
          ...(delayMs > 0 ? { delayMs } : {}),
        }),
      (sent) => ({ status: 201, messageId: sent.messageId }),
    );
  }

  /** Lists failed messages of `queue` (first page) and recovers or discards one by handle. */
  private async janitor(queue: QueueSpec): Promise<void> {
    const listed = await this.recorder.call(
      'listMessages',
      { queue: queue.name, state: 'failed' },
      (signal) =>
        this.client.listMessages(queue.name, { state: 'failed', handle: true, limit: 20, signal }),
      (page) => ({ status: 200, messages: page.items.map((m) => ({ id: m.id, state: m.state })) }),
    );
    if (listed.outcome !== 'ok') return;
    const candidates = listed.value.items.filter(
      (m): m is MessageInfo & { handle: string } => m.handle !== undefined,
    );
    if (candidates.length === 0 || this.run.stopped()) return;
    const message = this.prng.pick(candidates);
    const fields = { queue: queue.name, handle: message.handle, messageId: message.id };
    const token = { handle: message.handle };
    const noContent = (): { status: number } => ({ status: 204 });
    if (this.prng.chance(0.5)) {
      const recover = (signal: AbortSignal): Promise<void> =>
        this.client.recover(token, { signal });
      await this.recorder.call('recover', fields, recover, noContent);
    } else {
      const discard = (signal: AbortSignal): Promise<void> =>
        this.client.discard(token, { signal });
      await this.recorder.call('discard', fields, discard, noContent);
    }
  }

  private async readStats(queue: QueueSpec): Promise<void> {
    await this.recorder.call(
      'stats',
      { queue: queue.name },
      (signal) => this.client.stats({ queues: [queue.name], signal }),
      (page) => {
        const entry = page.queues.items.find((q) => q.name === queue.name);
        return { status: 200, ...(entry === undefined ? {} : { total: entry.stats.total }) };
      },
    );
  }
}

/**
 * The completion fields of a receive's answer (also used by the drain); the payload as
 * `describePayload` names it.
 */
export function deliveryFields(delivery: Delivery | null): CompletionFields {
  if (delivery === null) return { status: 204 };
  return {
    status: 200,
    messageId: delivery.messageId,
    payload: describePayload(delivery.body),
    lease: delivery.lease,
    retries: delivery.retries,
    ...(delivery.leaseExpiresAt === undefined ? {} : { leaseExpiresAt: delivery.leaseExpiresAt }),
  };
}

/** Refusals the interface calls transient: retry them. */
function isTransient(status: number, kind: string | undefined): boolean {
  return status === 503 || status === 429 || (status === 409 && kind === 'dedup_in_flight');
}
