// A worker loop: `concurrency` slots each long-poll receive, run the handler, renew the lease
// while it runs, ack on success and nack on throw. Aborting `signal` stops receiving at once
// (the open long polls are cancelled); handlers already running finish and are settled.

import type { MqClient } from './client.js';
import { isMqClientError } from './errors.js';
import type { Delivery } from './types.js';

export interface HandlerContext {
  /** Aborted when the lease was lost (a renew answered 410): the ack will not count. */
  readonly signal: AbortSignal;
}

export type Handler = (delivery: Delivery, context: HandlerContext) => Promise<void> | void;

export type WorkerStage = 'receive' | 'handler' | 'ack' | 'nack' | 'renew';

export interface WorkerOptions {
  readonly client: MqClient;
  /** Spool of the queue; default the client's spool. */
  readonly spool?: string;
  readonly queue: string;
  readonly handler: Handler;
  /** Parallel deliveries, 1-1000; default 1. */
  readonly concurrency?: number;
  /** Stops the worker; runWorker resolves once every slot finished its current delivery. */
  readonly signal: AbortSignal;
  /** Long-poll wait per receive, 0-20 seconds; default 20. */
  readonly waitSeconds?: number;
  /** Renew when this fraction of the remaining lease time has passed, in (0, 1); default 1/3. */
  readonly renewFraction?: number;
  /** Wait after a failed receive before the next, in milliseconds; default 1,000. */
  readonly errorBackoffMs?: number;
  /** Told about every failure the loop survives (and handler throws). Default: ignore. */
  readonly onError?: (error: unknown, stage: WorkerStage) => void;
}

export interface WorkerCounts {
  received: number;
  acked: number;
  nacked: number;
  /** Handler throws. */
  handlerErrors: number;
  renewed: number;
  /** Deliveries whose lease was lost while the handler ran. */
  leasesLost: number;
}

export const WORKER_CONCURRENCY_MAX = 1_000;
/** Shortest renew interval, in milliseconds, whatever the lease; keeps clock skew from spinning. */
export const RENEW_INTERVAL_MS_MIN = 200;

/**
 * Runs the worker until `signal` aborts. Resolves with the counts. Rejects when receive meets a
 * verdict that retrying cannot fix (a 4xx other than 409/429: unknown queue, bad key), after
 * stopping the other slots and letting their handlers finish.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerCounts> {
  const concurrency = options.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > WORKER_CONCURRENCY_MAX) {
    throw new RangeError(`concurrency must be an integer in 1..${WORKER_CONCURRENCY_MAX}`);
  }
  const renewFraction = options.renewFraction ?? 1 / 3;
  if (!(renewFraction > 0 && renewFraction < 1)) {
    throw new RangeError('renewFraction must be in (0, 1)');
  }
  const client =
    options.spool === undefined ? options.client : options.client.forSpool(options.spool);
  const stop = new AbortController();
  const onStop = (): void => stop.abort(options.signal.reason);
  if (options.signal.aborted) onStop();
  else options.signal.addEventListener('abort', onStop, { once: true });
  const counts: WorkerCounts = {
    received: 0,
    acked: 0,
    nacked: 0,
    handlerErrors: 0,
    renewed: 0,
    leasesLost: 0,
  };
  const slot = new Slot(client, options, renewFraction, stop, counts);
  try {
    const results = await Promise.allSettled(Array.from({ length: concurrency }, () => slot.run()));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
    return counts;
  } finally {
    options.signal.removeEventListener('abort', onStop);
  }
}

class Slot {
  constructor(
    private readonly client: MqClient,
    private readonly options: WorkerOptions,
    private readonly renewFraction: number,
    private readonly stop: AbortController,
    private readonly counts: WorkerCounts,
  ) {}

  /** One receive-handle-settle loop; ends when the stop signal aborts. */
  async run(): Promise<void> {
    while (!this.stop.signal.aborted) {
      const delivery = await this.receive();
      if (delivery === null) continue;
      this.counts.received += 1;
      await this.process(delivery);
    }
  }

  private async receive(): Promise<Delivery | null> {
    try {
      return await this.client.receive(this.options.queue, {
        waitSeconds: this.options.waitSeconds ?? 20,
        signal: this.stop.signal,
      });
    } catch (error) {
      if (this.stop.signal.aborted) return null;
      if (isFatal(error)) {
        this.stop.abort(error);
        throw error;
      }
      this.report(error, 'receive');
      await pause(this.options.errorBackoffMs ?? 1_000, this.stop.signal);
      return null;
    }
  }

  private async process(delivery: Delivery): Promise<void> {
    const leaseLost = new AbortController();
    const onRenewError = (error: unknown): void => this.report(error, 'renew');
    const renewer = new Renewer(
      this.client,
      delivery,
      this.renewFraction,
      leaseLost,
      this.counts,
      onRenewError,
    );
    let handlerFailed = false;
    try {
      await this.options.handler(delivery, { signal: leaseLost.signal });
    } catch (error) {
      handlerFailed = true;
      this.counts.handlerErrors += 1;
      this.report(error, 'handler');
    } finally {
      await renewer.stop();
    }
    if (leaseLost.signal.aborted) {
      this.counts.leasesLost += 1;
      return;
    }
    await this.settle(delivery.lease, handlerFailed);
  }

  private async settle(lease: string, handlerFailed: boolean): Promise<void> {
    try {
      if (handlerFailed) {
        await this.client.nack(lease);
        this.counts.nacked += 1;
      } else {
        await this.client.ack(lease);
        this.counts.acked += 1;
      }
    } catch (error) {
      this.report(error, handlerFailed ? 'nack' : 'ack');
    }
  }

  private report(error: unknown, stage: WorkerStage): void {
    this.options.onError?.(error, stage);
  }
}

/** Renews one delivery's lease on a timer while its handler runs. */
class Renewer {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private inFlight: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly client: MqClient,
    private readonly delivery: Delivery,
    private readonly fraction: number,
    private readonly leaseLost: AbortController,
    private readonly counts: WorkerCounts,
    private readonly report: (error: unknown) => void,
  ) {
    this.schedule(delivery.leaseExpiresAt);
  }

  /** Cancels the timer and waits for a renew already on the wire, so settling comes after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.inFlight;
  }

  private schedule(leaseExpiresAt: string | undefined): void {
    if (leaseExpiresAt === undefined || this.stopped) return;
    const remainingMs = Date.parse(leaseExpiresAt) - Date.now();
    const delayMs = Math.max(RENEW_INTERVAL_MS_MIN, Math.floor(remainingMs * this.fraction));
    this.timer = setTimeout(() => {
      this.inFlight = this.renew();
    }, delayMs);
  }

  private async renew(): Promise<void> {
    try {
      const renewed = await this.client.renew(this.delivery.lease);
      this.counts.renewed += 1;
      this.schedule(renewed.leaseExpiresAt);
    } catch (error) {
      if (isMqClientError(error) && error.status === 410) {
        this.leaseLost.abort(error);
        return;
      }
      this.report(error);
      // A failed renew (transport, 5xx) is tried again soon; the lease may still be live.
      this.schedule(new Date(Date.now() + RENEW_INTERVAL_MS_MIN * 2).toISOString());
    }
  }
}

function isFatal(error: unknown): boolean {
  if (!isMqClientError(error)) return false;
  const { status } = error;
  return status >= 400 && status < 500 && status !== 409 && status !== 429;
}

/** Waits `delayMs`, or less if `signal` aborts; never rejects. */
function pause(delayMs: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, delayMs);
    signal.addEventListener('abort', done, { once: true });
  });
}
