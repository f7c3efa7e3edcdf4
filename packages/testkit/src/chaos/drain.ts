// After the workload (and, in a chaos run, after every fault healed): drain the queues, then
// collect the final state for the checker.
//
// The drain receives and acks (recorded in the history, client `drain`, and `drain.<i>` when it
// runs several receivers per queue) until every queue holds only failed messages: it waits out
// delays and leases still held (abandoned by a consumer, or from before a failover) by re-reading
// the listing, bounded by `boundMs`. The collection walks every queue's listing with handles,
// peeks each message for its payload, and reads the stats.

import {
  isMqClientError,
  isMqTransportError,
  type MessageInfo,
  type MqClient,
} from '@spoolmq/client';
import { describePayload } from './backlog-payload.js';
import type { FinalMessage, FinalQueue, FinalState } from './final-state.js';
import type { History } from './history.js';
import { Recorder } from './recorder.js';
import { type WorkloadTarget, deliveryFields, workloadClient } from './workload-executor.js';
import type { WorkloadModel } from './workload.js';

export interface DrainOptions {
  readonly model: WorkloadModel;
  readonly target: WorkloadTarget;
  readonly history: History;
  /**
   * Give up once this long has passed without a pass acking anything, ms; default 60,000 (and
   * after DRAIN_TOTAL_MS_MAX in all).
   */
  readonly boundMs?: number;
  /** Client id in the history; default `drain`. */
  readonly client?: string;
  /**
   * Receivers per queue, each its own client in the history (`drain`, `drain.1`, ...), 1-16;
   * default 1. More drain a large backlog faster.
   */
  readonly receivers?: number;
}

export interface DrainSummary {
  /** Messages received and acked. */
  readonly acked: number;
  /** True when every queue held only failed messages at the end (false: the bound ran out). */
  readonly drained: boolean;
  /** Messages not failed at the last look, per queue. */
  readonly remaining: Readonly<Record<string, number>>;
}

/** The whole drain at most, however much it acks, ms. */
const DRAIN_TOTAL_MS_MAX = 30 * 60_000;
/** Longest wait between looks at the listing while delays and leases run out, ms. */
const DRAIN_POLL_MS_MAX = 250;
/** Receives per queue per pass at most, so one pass cannot run unbounded. */
const DRAIN_PASS_RECEIVES_MAX = 100_000;
/** Receivers per queue at most. */
const DRAIN_RECEIVERS_MAX = 16;
/** Listing pages walked per queue at most (1,000 messages a page). */
const LISTING_PAGES_MAX = 10_000;

/**
 * Drains the model's queues (see the file comment). Never rejects for a server's refusal:
 * those are recorded and the drain carries on until the bound; rejects only on a bug.
 */
export async function drainQueues(options: DrainOptions): Promise<DrainSummary> {
  const { model, history } = options;
  const boundMs = options.boundMs ?? 60_000;
  const client = workloadClient(options.target, model.spool);
  const name = options.client ?? 'drain';
  const receivers = options.receivers ?? 1;
  if (!(Number.isInteger(receivers) && receivers >= 1 && receivers <= DRAIN_RECEIVERS_MAX)) {
    throw new RangeError(`drain: receivers must be 1-${DRAIN_RECEIVERS_MAX}, got ${receivers}`);
  }
  const recorders = Array.from({ length: receivers }, (_, i) => {
    const id = i === 0 ? name : `${name}.${i}`;
    return new Recorder(history, id, model.requestTimeoutMs);
  });
  // `boundMs` runs from the last pass that acked anything: a backlog the workload left (the
  // consumers lag behind the producers on a loaded machine) takes as long as it takes, and only
  // messages that stay undeliverable that long are left to count as stuck. DRAIN_TOTAL_MS_MAX
  // bounds the whole drain.
  const startedMs = performance.now();
  let deadlineMs = startedMs + boundMs;
  let acked = 0;
  let remaining: Record<string, number> = {};
  // Bounded by the deadline and the cap: every pass ends with a wait or returns.
  while (performance.now() < deadlineMs) {
    let passAcked = 0;
    for (const queue of model.queues) {
      const each = recorders.map((recorder) => drainOnce(client, recorder, queue.name, history));
      passAcked += (await Promise.all(each)).reduce((sum, n) => sum + n, 0);
    }
    acked += passAcked;
    if (passAcked > 0) {
      deadlineMs = Math.min(performance.now() + boundMs, startedMs + DRAIN_TOTAL_MS_MAX);
    }
    const look = await lookAtQueues(client, model);
    remaining = look.remaining;
    if (look.settled) return { acked, drained: true, remaining };
    const dueInMs = look.nextDueMs - Date.now();
    const leftMs = deadlineMs - performance.now();
    const waitMs = Math.max(1, Math.min(DRAIN_POLL_MS_MAX, dueInMs, leftMs));
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
  return { acked, drained: false, remaining };
}

/** Receives (no wait) and acks until the queue answers empty; returns how many were acked. */
async function drainOnce(
  client: MqClient,
  recorder: Recorder,
  queue: string,
  history: History,
): Promise<number> {
  let acked = 0;
  for (let i = 0; i < DRAIN_PASS_RECEIVES_MAX && !history.full; i += 1) {
    const received = await recorder.call(
      'recv',
      { queue },
      (signal) => client.receive(queue, { waitSeconds: 0, signal }),
      deliveryFields,
    );
    if (received.outcome !== 'ok' || received.value === null || history.full) return acked;
    const { lease, messageId } = received.value;
    const ack = await recorder.call(
      'ack',
      { queue, lease, messageId },
      (signal) => client.ack(lease, { signal }),
      () => ({ status: 204 }),
    );
    if (ack.outcome === 'ok') acked += 1;
  }
  return acked;
}

interface Look {
  /** Every queue holds failed messages only. */
  readonly settled: boolean;
  readonly remaining: Record<string, number>;
  /** Epoch ms of the earliest delay or lease expiry seen; +Infinity when none. */
  readonly nextDueMs: number;
}

async function lookAtQueues(client: MqClient, model: WorkloadModel): Promise<Look> {
  const remaining: Record<string, number> = {};
  let nextDueMs = Number.POSITIVE_INFINITY;
  let settled = true;
  for (const queue of model.queues) {
    let messages: MessageInfo[];
    try {
      messages = await listAll(client, queue.name, false);
    } catch (error) {
      // A listing that fails (a failover in progress) means: look again later.
      if (!isMqClientError(error) && !isMqTransportError(error)) throw error;
      settled = false;
      continue;
    }
    const open = messages.filter((m) => m.state !== 'failed');
    remaining[queue.name] = open.length;
    if (open.length > 0) settled = false;
    for (const m of open) {
      const due = Date.parse(m.visibleAt ?? m.leaseExpiresAt ?? '');
      if (!Number.isNaN(due)) nextDueMs = Math.min(nextDueMs, due);
    }
  }
  return { settled, remaining, nextDueMs };
}

async function listAll(client: MqClient, queue: string, handle: boolean): Promise<MessageInfo[]> {
  const items: MessageInfo[] = [];
  let pages = 0;
  for await (const page of client.messagePages(queue, { limit: 1_000, handle })) {
    items.push(...page.items);
    pages += 1;
    if (pages >= LISTING_PAGES_MAX) {
      throw new Error(`listing of ${queue} exceeds ${LISTING_PAGES_MAX} pages`);
    }
  }
  return items;
}

export interface CollectOptions {
  readonly model: WorkloadModel;
  readonly target: WorkloadTarget;
  readonly history: History;
  /** Peek each listed message for its payload; default true. */
  readonly payloads?: boolean;
}

/**
 * Reads every queue's listing (with payloads through handle + peek) and stats into a
 * FinalState stamped with the history's clock. Rejects with the client's error when a listing or
 * the stats cannot be read (the harness retries after the cluster settles).
 */
export async function collectFinalState(options: CollectOptions): Promise<FinalState> {
  const { model, history } = options;
  const client = workloadClient(options.target, model.spool);
  const collectedAtMs = history.now();
  const names = model.queues.map((q) => q.name);
  const stats = new Map<string, { total: number; dedupWindowSeconds: number }>();
  for await (const page of client.statsPages({ queues: names, limit: 1_000 })) {
    for (const entry of page.queues.items) {
      const { total } = entry.stats;
      stats.set(entry.name, { total, dedupWindowSeconds: entry.settings.dedupWindowSeconds });
    }
  }
  const queues: FinalQueue[] = [];
  for (const name of names) {
    const listed = await listAll(client, name, options.payloads !== false);
    const messages: FinalMessage[] = [];
    for (const item of listed) {
      messages.push(await finalMessage(client, item, options.payloads !== false));
    }
    const entry = stats.get(name);
    if (entry === undefined) throw new Error(`stats do not list queue ${name}`);
    const { dedupWindowSeconds, total } = entry;
    queues.push({ name, dedupWindowSeconds, messages, stats: { total } });
  }
  return { collectedAtMs, queues };
}

async function finalMessage(
  client: MqClient,
  item: MessageInfo,
  payloads: boolean,
): Promise<FinalMessage> {
  const base: FinalMessage = {
    id: item.id,
    state: item.state,
    retries: item.retries,
    ...(item.visibleAt === undefined ? {} : { visibleAt: item.visibleAt }),
    ...(item.leaseExpiresAt === undefined ? {} : { leaseExpiresAt: item.leaseExpiresAt }),
  };
  if (!payloads || item.handle === undefined) return base;
  try {
    const peeked = await client.peek(item.handle);
    return { ...base, payload: describePayload(peeked.body) };
  } catch (error) {
    // The message moved since the listing (410): its payload stays unknown.
    if (isMqClientError(error)) return base;
    throw error;
  }
}
