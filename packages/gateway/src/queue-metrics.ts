// Per-queue metrics for alerting and autoscaling: depth by state, the age of the oldest visible
// message and cumulative counters, labelled by account, spool and queue. Served on the admin
// listener's /metrics (labelled families never go on the public /metrics). Cardinality is
// bounded: at most QUEUE_SERIES_MAX queues per process, in spool then queue name order; the
// rest are counted in mq_queue_series_dropped.

import type { Counts, SpoolService } from '@spoolmq/engine';
import { Families, type Labels } from './prometheus-text.js';

/** Queues exported by one process (each costs 13 series and one listing per scrape). */
export const QUEUE_SERIES_MAX = 500;
/** Queues read from a spool per stats call. */
const STATS_PAGE_LIMIT = 1_000;

const STATES = ['delayed', 'visible', 'pending', 'failed', 'unavailable'] as const;

const COUNTERS: readonly (readonly [string, string, keyof Counts])[] = [
  ['mq_queue_added_total', 'Messages appended since the spool opened here.', 'addedTotal'],
  ['mq_queue_acked_total', 'Messages acked.', 'ackedTotal'],
  ['mq_queue_failed_total', 'Messages moved to the failure queue.', 'failedTotal'],
  ['mq_queue_expired_total', 'Messages discarded by retention.', 'expiredTotal'],
];

export interface QueueSample {
  readonly labels: Labels;
  readonly counts: Counts;
  /** Seconds since the oldest visible message was sent; 0 when none is visible. */
  readonly oldestVisibleAgeSeconds: number;
}

/** `account/spool` (a spool's cluster identity) as labels; a bare name has account "". */
export function spoolLabels(identity: string): Labels {
  const slash = identity.indexOf('/');
  if (slash < 0) return { account: '', spool: identity };
  return { account: identity.slice(0, slash), spool: identity.slice(slash + 1) };
}

async function oldestVisibleAgeSeconds(
  service: SpoolService,
  spool: string,
  queue: string,
  nowMs: number,
): Promise<number> {
  // Listings are in send order: the first visible message is the one waiting longest.
  const page = await service.listMessages(spool, queue, {
    state: 'visible',
    limit: 1,
    withHandles: false,
  });
  const first = page.items[0];
  return first === undefined ? 0 : Math.max(0, nowMs - first.createdAtMs) / 1000;
}

/**
 * Samples the queues of `spools` (cluster identities this process serves) at `nowMs`: at most
 * QUEUE_SERIES_MAX queues in all. A spool that fails to answer (moved, closing) is skipped.
 */
export async function sampleQueues(
  service: SpoolService,
  spools: readonly string[],
  nowMs: number,
): Promise<{ readonly samples: QueueSample[]; readonly dropped: number }> {
  const samples: QueueSample[] = [];
  let dropped = 0;
  for (const spool of [...spools].sort()) {
    let after: string | undefined;
    do {
      const room = QUEUE_SERIES_MAX - samples.length;
      let page;
      try {
        const query = { limit: STATS_PAGE_LIMIT, ...(after === undefined ? {} : { after }) };
        page = await service.spoolStats(spool, query);
      } catch {
        break;
      }
      for (const queue of page.queues.items.slice(0, Math.max(0, room))) {
        const ageSeconds = await oldestVisibleAgeSeconds(service, spool, queue.name, nowMs).catch(
          () => 0,
        );
        const labels = { ...spoolLabels(spool), queue: queue.name };
        samples.push({ labels, counts: queue.stats, oldestVisibleAgeSeconds: ageSeconds });
      }
      dropped += Math.max(0, page.queues.items.length - Math.max(0, room));
      after = page.queues.next;
    } while (after !== undefined);
  }
  return { samples, dropped };
}

/** The Prometheus text of `sampleQueues`'s result. */
export function renderQueueSamples(samples: readonly QueueSample[], dropped: number): string {
  const out = new Families();
  const depthRows = samples.flatMap((s) => STATES.map((state) => ({ s, state })));
  out.add('mq_queue_messages', 'gauge', 'Messages in each state, per queue.', depthRows, (r) => [
    { ...r.s.labels, state: r.state },
    r.s.counts[r.state],
  ]);
  out.add('mq_queue_stored_bytes', 'gauge', 'Payload bytes stored, per queue.', samples, (s) => [
    s.labels,
    s.counts.dataBytes,
  ]);
  const ageHelp = 'Seconds since the oldest visible message was sent (0: none visible).';
  out.add('mq_queue_oldest_visible_age_seconds', 'gauge', ageHelp, samples, (s) => [
    s.labels,
    s.oldestVisibleAgeSeconds,
  ]);
  for (const [name, help, field] of COUNTERS) {
    out.add(name, 'counter', help, samples, (s) => [s.labels, s.counts[field]]);
  }
  const droppedHelp = `Queues not exported: past the cap of ${QUEUE_SERIES_MAX} per process.`;
  out.add('mq_queue_series_dropped', 'gauge', droppedHelp, [dropped], (n) => [{}, n]);
  return out.text();
}

/** `sampleQueues` rendered: the admin listener's per-queue /metrics. */
export async function renderQueueMetrics(
  service: SpoolService,
  spools: readonly string[],
  nowMs: number,
): Promise<string> {
  const { samples, dropped } = await sampleQueues(service, spools, nowMs);
  return renderQueueSamples(samples, dropped);
}
