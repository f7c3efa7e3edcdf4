// A bounded, steady load through the gateway with an account of everything: each logical send
// has a unique payload, doubling as its dedup key, so a send with no answer is retried safely and
// every acknowledged (201/200) payload must come out of a receive. Consumers receive and ack
// throughout; a scenario may also hold leases across a fault and ack them after it.

import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueueHttp, isDelivery, type Delivery } from './queue-http.js';

/** The queue every scenario uses: a dedup window for safe retries, leases that outlast a fault. */
export const WORKLOAD_QUEUE_SETTINGS = { dedupWindowSeconds: 300, leaseTimeoutSeconds: 120 };
/** Statuses after which a send certainly appended nothing, or may have: retried with its key. */
const SEND_RETRY_STATUSES = new Set([0, 409, 429, 500, 502, 503, 504]);
/** Ack answers that certainly changed nothing (retry) or may have (retry; 410 then means done). */
const ACK_RETRY_STATUSES = new Set([0, 500, 502, 503, 504]);
const RETRY_PAUSE_MS = 100;
/** A send retried this long without an answer counts as unconfirmed (well inside the window). */
const SEND_GIVE_UP_MS = 60_000;
const ACK_ATTEMPTS_MAX = 50;
/** The longest `hold` waits for its messages. */
const HOLD_WAIT_MS = 60_000;
/** A drain ends after this many empty long polls in a row on every consumer. */
const DRAIN_EMPTY_POLLS = 2;

export interface WorkloadOptions {
  readonly queue: string;
  /** Payload prefix: unique per scenario. */
  readonly prefix: string;
  readonly sendsPerSecond: number;
  readonly senders: number;
  readonly consumers: number;
  /** Bounds: the load stops at whichever comes first. */
  readonly maxSends: number;
  readonly maxDurationMs: number;
}

type StatusCounts = Readonly<Record<string, number>>;

export interface Tally {
  readonly acknowledged: number;
  readonly received: number;
  readonly lost: number;
  /** Deliveries past a payload's first. */
  readonly redelivered: number;
  /** Sends that never got a definite answer (may or may not be stored; not counted as lost). */
  readonly unconfirmed: number;
  /** Payloads received that no send carried. */
  readonly unexpected: number;
  readonly acks: Readonly<Record<string, number>>;
  /**
   * Answers that were retried, by status: a 500 here is a write whose outcome the cluster could
   * not confirm (operation_unconfirmed), which a planned restart should never cause.
   */
  readonly retried: { readonly sends: StatusCounts; readonly acks: StatusCounts };
  readonly longestSendMs: number;
}

export class Workload {
  private readonly acknowledged = new Set<string>();
  private readonly unconfirmed = new Set<string>();
  private readonly sent = new Set<string>();
  private readonly deliveries = new Map<string, number>();
  private readonly ackStatuses = new Map<number, number>();
  private readonly sendRetries = new Map<number, number>();
  private readonly ackRetries = new Map<number, number>();
  private longestSendMs = 0;
  private sendsStarted = 0;
  private sending = false;
  private draining = false;
  private readonly senders: Promise<void>[] = [];
  private readonly consumers: Promise<void>[] = [];

  constructor(
    private http: QueueHttp,
    private readonly options: WorkloadOptions,
  ) {}

  /** Starts senders and consumers; they run until `finish` or the bounds. */
  start(): void {
    this.sending = true;
    const deadline = performance.now() + this.options.maxDurationMs;
    for (let lane = 0; lane < this.options.senders; lane++) {
      this.senders.push(this.sendLane(lane, deadline));
    }
    for (let lane = 0; lane < this.options.consumers; lane++) {
      this.consumers.push(this.consumeLane());
    }
  }

  /** Sends acknowledged so far (for waiting until the load is under way). */
  get acknowledgedCount(): number {
    return this.acknowledged.size;
  }

  /** Stops the senders, lets the consumers drain the queue, and counts. */
  async finish(): Promise<Tally> {
    await this.finishSending();
    return this.drain();
  }

  /** Stops the senders and waits for their last sends; the sends acknowledged. */
  async finishSending(): Promise<number> {
    this.sending = false;
    return this.sendsDone();
  }

  /** Waits until the senders reach their bounds; the sends acknowledged. */
  async sendsDone(): Promise<number> {
    await Promise.all(this.senders);
    return this.acknowledged.size;
  }

  /** Sends from now on go to another gateway (the cluster came back on a new port). */
  retarget(http: QueueHttp): void {
    this.http = http;
  }

  /** Consumers (running ones and `extra` new ones) empty the queue; then counts. */
  async drain(extra = 0): Promise<Tally> {
    this.draining = true;
    for (let lane = 0; lane < extra; lane++) this.consumers.push(this.consumeLane());
    await Promise.all(this.consumers);
    return this.tally();
  }

  /** Receives `count` messages and keeps their leases unsettled (to ack after a fault). */
  async hold(count: number): Promise<Delivery[]> {
    const held: Delivery[] = [];
    const deadline = performance.now() + HOLD_WAIT_MS;
    while (held.length < count) {
      if (performance.now() > deadline) {
        throw new Error(`hold: ${held.length} of ${count} messages came in ${HOLD_WAIT_MS} ms`);
      }
      const got = await this.http.recv(this.options.queue, 1);
      if (isDelivery(got)) {
        this.received(got.payload);
        held.push(got);
      } else if (got !== null) {
        await sleep(RETRY_PAUSE_MS);
      }
    }
    return held;
  }

  /** Acks held deliveries; the final status of each ack, counted (204 is settled). */
  async settle(held: readonly Delivery[]): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const delivery of held) {
      const status = await this.ack(delivery.lease);
      counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }

  private async sendLane(lane: number, deadline: number): Promise<void> {
    const intervalMs = (1_000 * this.options.senders) / this.options.sendsPerSecond;
    let next = performance.now();
    for (let i = 0; this.sending && performance.now() < deadline; i++) {
      if (this.sendsStarted >= this.options.maxSends) break;
      this.sendsStarted++;
      await this.sendOne(`${this.options.prefix}-${lane}-${i}`);
      next += intervalMs;
      const waitMs = next - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      else next = performance.now();
    }
  }

  private async sendOne(payload: string): Promise<void> {
    this.sent.add(payload);
    const startedMs = performance.now();
    while (performance.now() - startedMs < SEND_GIVE_UP_MS) {
      const answer = await this.http.send(this.options.queue, payload, payload);
      if (answer.status === 201 || answer.status === 200) {
        this.acknowledged.add(payload);
        this.longestSendMs = Math.max(this.longestSendMs, performance.now() - startedMs);
        return;
      }
      if (!SEND_RETRY_STATUSES.has(answer.status)) {
        throw new Error(`send ${payload}: ${answer.status} ${answer.body}`);
      }
      count(this.sendRetries, answer.status);
      await sleep(RETRY_PAUSE_MS);
    }
    this.unconfirmed.add(payload);
  }

  private async consumeLane(): Promise<void> {
    let empty = 0;
    for (;;) {
      const got = await this.http.recv(this.options.queue, 1);
      if (isDelivery(got)) {
        empty = 0;
        this.received(got.payload);
        this.countAck(await this.ack(got.lease));
      } else if (got === null) {
        empty = this.draining ? empty + 1 : 0;
        if (empty >= DRAIN_EMPTY_POLLS) return;
      } else {
        await sleep(RETRY_PAUSE_MS);
      }
    }
  }

  /** An ack retried while it certainly or possibly changed nothing; its final status. */
  private async ack(lease: string): Promise<number> {
    let status = 0;
    for (let attempt = 1; attempt <= ACK_ATTEMPTS_MAX; attempt++) {
      status = (await this.http.ack(lease)).status;
      if (!ACK_RETRY_STATUSES.has(status)) return status;
      count(this.ackRetries, status);
      await sleep(RETRY_PAUSE_MS);
    }
    return status;
  }

  private countAck(status: number): void {
    count(this.ackStatuses, status);
  }

  private received(payload: string): void {
    this.deliveries.set(payload, (this.deliveries.get(payload) ?? 0) + 1);
  }

  private tally(): Tally {
    const lost = [...this.acknowledged].filter((p) => !this.deliveries.has(p));
    let redelivered = 0;
    let unexpected = 0;
    for (const [payload, times] of this.deliveries) {
      redelivered += times - 1;
      if (!this.sent.has(payload)) unexpected++;
    }
    return {
      acknowledged: this.acknowledged.size,
      received: [...this.acknowledged].filter((p) => this.deliveries.has(p)).length,
      lost: lost.length,
      redelivered,
      unconfirmed: this.unconfirmed.size,
      unexpected,
      acks: byStatus(this.ackStatuses),
      retried: { sends: byStatus(this.sendRetries), acks: byStatus(this.ackRetries) },
      longestSendMs: Math.round(this.longestSendMs),
    };
  }
}

function count(counts: Map<number, number>, status: number): void {
  counts.set(status, (counts.get(status) ?? 0) + 1);
}

function byStatus(counts: ReadonlyMap<number, number>): Record<string, number> {
  return Object.fromEntries([...counts].map(([status, n]) => [String(status), n]));
}

function statuses(counts: Readonly<Record<string, number>>): string {
  const listed = Object.entries(counts).map(([s, n]) => `${s}:${n}`).join(' ');
  return listed === '' ? 'none' : listed;
}

/** One line a person reads in CI's log. */
export function formatTally(scenario: string, tally: Tally): string {
  return (
    `e2e ${scenario}: acknowledged ${tally.acknowledged}, received ${tally.received}, ` +
    `lost ${tally.lost}, redelivered ${tally.redelivered}, unconfirmed ${tally.unconfirmed}, ` +
    `unexpected ${tally.unexpected}; acks ${statuses(tally.acks)}; retried sends ` +
    `${statuses(tally.retried.sends)}, acks ${statuses(tally.retried.acks)}; ` +
    `longest send ${tally.longestSendMs} ms`
  );
}
