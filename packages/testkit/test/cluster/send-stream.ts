// A steady stream of sends through the API for process tests: a few concurrent producers, each
// sending distinct payloads (`<prefix>-<producer>-<n>`) one after another, recording what every
// send answered. What got 201 must be received later; what got 500 operation_unconfirmed may or
// may not be; a 503 means nothing was appended.

import { performance } from 'node:perf_hooks';
import type { Api } from '../../src/conformance/index.js';

export interface SendOutcome {
  readonly payload: string;
  readonly status: number | 'error';
  readonly kind?: string;
  readonly messageId?: string;
  readonly startedMs: number;
  readonly endedMs: number;
}

/** Sends per producer at most: bounds a stream whose stop() is never reached. */
const SENDS_PER_PRODUCER_MAX = 20_000;

export class SendStream {
  readonly outcomes: SendOutcome[] = [];
  private running = true;
  private readonly done: Promise<void>;
  private readonly waiters: Array<{ readonly test: () => boolean; readonly resolve: () => void }> = [];

  constructor(
    private readonly api: Api,
    private readonly queue: string,
    private readonly prefix: string,
    producers: number,
  ) {
    this.done = Promise.all(Array.from({ length: producers }, (_, i) => this.produce(i))).then(() => undefined);
  }

  /** Payloads whose send answered 201. */
  acknowledged(): Map<string, SendOutcome> {
    return new Map(this.outcomes.filter((o) => o.status === 201).map((o) => [o.payload, o]));
  }

  /**
   * Resolves once `test()` holds after some send completes (checked at every completion);
   * rejects with `what` if it does not within `timeoutMs`.
   */
  until(test: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter = {
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`${what}: not within ${timeoutMs} ms (${this.outcomes.length} sends so far)`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Sends answered 201 that started at or after `ms` (performance.now). */
  okStartedAfter(ms: number): SendOutcome[] {
    return this.outcomes.filter((o) => o.status === 201 && o.startedMs >= ms);
  }

  /** Stops after the sends in flight; resolves when every producer is done. */
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async produce(producer: number): Promise<void> {
    for (let n = 0; this.running && n < SENDS_PER_PRODUCER_MAX; n += 1) {
      const payload = `${this.prefix}-${producer}-${n}`;
      const startedMs = performance.now();
      let outcome: SendOutcome;
      try {
        const response = await this.api.send(this.queue, payload);
        const endedMs = performance.now();
        const messageId = response.headers['svc-message-id'];
        const kind = response.status >= 400 ? kindOf(response.body) : undefined;
        outcome = {
          payload,
          status: response.status,
          startedMs,
          endedMs,
          ...(typeof messageId === 'string' ? { messageId } : {}),
          ...(kind === undefined ? {} : { kind }),
        };
      } catch {
        outcome = { payload, status: 'error', startedMs, endedMs: performance.now() };
      }
      this.outcomes.push(outcome);
      this.notify();
      // A refused send (503) is answered fast; a short pause keeps producers from spinning.
      if (outcome.status !== 201) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private notify(): void {
    for (let i = this.waiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.waiters[i]!;
      if (waiter.test()) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}

function kindOf(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { kind?: unknown };
    return typeof parsed.kind === 'string' ? parsed.kind : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Receives and acks every message of `queue` until a receive answers 204 (bounded by
 * `messagesMax`), returning the payloads in the order received.
 */
export async function drainQueue(api: Api, queue: string, messagesMax: number): Promise<string[]> {
  const payloads: string[] = [];
  for (let i = 0; i <= messagesMax; i += 1) {
    const response = await api.recv(queue, 0);
    if (response.status === 204) return payloads;
    if (response.status !== 200) {
      throw new Error(`receive from ${queue} answered ${response.status}: ${response.body.toString('utf8')}`);
    }
    payloads.push(response.body.toString('utf8'));
    const lease = response.headers['svc-lease'];
    const acked = await api.ack(typeof lease === 'string' ? lease : '');
    if (acked.status !== 204) throw new Error(`ack answered ${acked.status}: ${acked.body.toString('utf8')}`);
  }
  throw new Error(`${queue} still had messages after ${messagesMax} receives`);
}
