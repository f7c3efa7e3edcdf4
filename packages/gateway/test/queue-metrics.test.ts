import { afterEach, describe, expect, it } from 'vitest';
import { createLocalService, ManualClock, type LocalService } from '@spoolmq/member';
import {
  QUEUE_SERIES_MAX,
  renderQueueMetrics,
  sampleQueues,
  spoolLabels,
} from '../src/queue-metrics.js';

const SPOOL = 'default';
let service: LocalService | undefined;

afterEach(async () => {
  await service?.close();
  service = undefined;
});

const payload = new TextEncoder().encode('x');
const send = (queue: string, delayMs = 0) =>
  service!.send(SPOOL, queue, { payload, delayMs, wantHandle: false });

function sampleValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('queue metrics', () => {
  it('report depth by state and the oldest visible age of a known workload', async () => {
    const clock = new ManualClock();
    const t0 = clock.nowMs();
    service = createLocalService({ clock });
    await service.createQueue(SPOOL, 'orders', { maxRetries: 0 });
    await service.createQueue(SPOOL, 'idle', {});
    await send('orders'); // A: received, pending
    await send('orders'); // B: received and failed
    await clock.advance(10_000);
    await send('orders'); // C: the oldest visible, sent at t0 + 10 s
    await send('orders'); // D
    await send('orders', 60_000); // E: delayed
    const a = await service.receive(SPOOL, 'orders', { waitMs: 0 });
    const b = await service.receive(SPOOL, 'orders', { waitMs: 0 });
    await service.fail(SPOOL, b!.lease);
    expect(a).not.toBeNull();
    await clock.advance(20_000);

    const text = await renderQueueMetrics(service, [SPOOL], clock.nowMs());
    const labels = 'account="",spool="default",queue="orders"';
    const depth = (state: string) =>
      sampleValue(text, `mq_queue_messages{${labels},state="${state}"}`);
    const depths = [depth('visible'), depth('pending'), depth('failed'), depth('delayed')];
    expect(depths).toEqual([2, 1, 1, 1]);
    expect(depth('unavailable')).toBe(0);
    expect(clock.nowMs() - t0).toBe(30_000);
    expect(sampleValue(text, `mq_queue_oldest_visible_age_seconds{${labels}}`)).toBe(20);
    expect(sampleValue(text, `mq_queue_added_total{${labels}}`)).toBe(5);
    expect(sampleValue(text, `mq_queue_failed_total{${labels}}`)).toBe(1);
    const idle = 'account="",spool="default",queue="idle"';
    expect(sampleValue(text, `mq_queue_oldest_visible_age_seconds{${idle}}`)).toBe(0);
    expect(sampleValue(text, `mq_queue_messages{${idle},state="visible"}`)).toBe(0);
    expect(sampleValue(text, 'mq_queue_series_dropped')).toBe(0);

    // The age follows the clock, and the next oldest once the oldest is received.
    await clock.advance(5_000);
    await service.receive(SPOOL, 'orders', { waitMs: 0 });
    const later = await renderQueueMetrics(service, [SPOOL], clock.nowMs());
    expect(sampleValue(later, `mq_queue_oldest_visible_age_seconds{${labels}}`)).toBe(25);
    expect(sampleValue(later, `mq_queue_messages{${labels},state="visible"}`)).toBe(1);
  });

  it(`export at most ${QUEUE_SERIES_MAX} queues and count the rest`, async () => {
    service = createLocalService({ plan: { queuesPerSpoolMax: QUEUE_SERIES_MAX + 10 } });
    for (let i = 0; i < QUEUE_SERIES_MAX + 3; i++) {
      await service.createQueue(SPOOL, `q${String(i).padStart(4, '0')}`, {});
    }
    const { samples, dropped } = await sampleQueues(service, [SPOOL], Date.now());
    expect(samples).toHaveLength(QUEUE_SERIES_MAX);
    expect(dropped).toBe(3);
    expect(samples[0]!.labels['queue']).toBe('q0000');
  });

  it('skip a spool that does not answer', async () => {
    service = createLocalService();
    await service.createQueue(SPOOL, 'orders', {});
    const { samples } = await sampleQueues(service, ['missing', SPOOL], Date.now());
    expect(samples.map((s) => s.labels['queue'])).toEqual(['orders']);
  });

  it('split a spool identity into account and spool labels', () => {
    expect(spoolLabels('acme/default')).toEqual({ account: 'acme', spool: 'default' });
    expect(spoolLabels('default')).toEqual({ account: '', spool: 'default' });
  });
});
