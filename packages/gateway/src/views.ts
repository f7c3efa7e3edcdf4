// Service results -> the JSON the interface shows. Times arrive as epoch milliseconds (`...AtMs`)
// and leave as RFC 3339 UTC with milliseconds (`...At`). Fields are copied one by one so nothing
// the service carries internally leaks into a response.

import assert from 'node:assert/strict';
import type {
  Counts,
  MessageView,
  Page,
  QueueStatsView,
  QueueView,
  SettingsView,
  SpoolView,
  StatsPage,
} from '@spoolmq/engine';

/** Epoch milliseconds -> `2026-11-21T10:00:00.000Z`. Asserts a finite, representable time. */
export function timestamp(ms: number): string {
  assert(Number.isFinite(ms), 'timestamps are finite epoch milliseconds');
  return new Date(ms).toISOString();
}

export function settingsJson(settings: SettingsView): object {
  return {
    leaseTimeoutSeconds: settings.leaseTimeoutSeconds,
    maxRetries: settings.maxRetries,
    dedupWindowSeconds: settings.dedupWindowSeconds,
    retentionSeconds: settings.retentionSeconds,
    effectiveRetentionSeconds: settings.effectiveRetentionSeconds,
    recvRateLimit: {
      intervalMicros: settings.recvRateLimit.intervalMicros,
      burst: settings.recvRateLimit.burst,
    },
  };
}

export function countsJson(counts: Counts): Record<string, number | string> {
  return {
    total: counts.total,
    dataBytes: counts.dataBytes,
    delayed: counts.delayed,
    visible: counts.visible,
    pending: counts.pending,
    failed: counts.failed,
    unavailable: counts.unavailable,
    addedTotal: counts.addedTotal,
    ackedTotal: counts.ackedTotal,
    nackedTotal: counts.nackedTotal,
    releasedTotal: counts.releasedTotal,
    failedTotal: counts.failedTotal,
    discardedTotal: counts.discardedTotal,
    expiredTotal: counts.expiredTotal,
  };
}

export function queueJson(queue: QueueView): object {
  return {
    name: queue.name,
    createdAt: timestamp(queue.createdAtMs),
    state: queue.state,
    settings: settingsJson(queue.settings),
  };
}

function queueStatsJson(queue: QueueStatsView): object {
  return { ...queueJson(queue), stats: countsJson(queue.stats) };
}

export function spoolJson(spool: SpoolView): object {
  const stats = countsJson(spool.stats);
  stats['sampledAt'] = timestamp(spool.stats.sampledAtMs);
  stats['startedAt'] = timestamp(spool.stats.startedAtMs);
  return { name: spool.name, queueCount: spool.queueCount, stats };
}

export function messageJson(message: MessageView): object {
  const json: Record<string, string | number> = {
    id: message.id,
    state: message.state,
    retries: message.retries,
    createdAt: timestamp(message.createdAtMs),
  };
  if (message.visibleAtMs !== undefined) json['visibleAt'] = timestamp(message.visibleAtMs);
  if (message.leaseExpiresAtMs !== undefined) {
    json['leaseExpiresAt'] = timestamp(message.leaseExpiresAtMs);
  }
  if (message.expiresAtMs !== undefined) json['expiresAt'] = timestamp(message.expiresAtMs);
  if (message.handle !== undefined) json['handle'] = message.handle;
  return json;
}

/** `{items, next?}` with each item rendered by `render`; `next` only when the service gave one. */
export function pageJson<T>(page: Page<T>, render: (item: T) => object): object {
  const items = page.items.map(render);
  return page.next === undefined ? { items } : { items, next: page.next };
}

export function statsPageJson(page: StatsPage): object {
  return {
    queueCount: page.queueCount,
    stats: countsJson(page.stats),
    queues: pageJson(page.queues, queueStatsJson),
  };
}
