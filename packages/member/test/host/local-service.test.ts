import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { createLocalService } from '../../src/host/local-service.js';
import { expectError } from './helpers.js';

const payload = new Uint8Array([1]);

describe('createLocalService', () => {
  it('serves the default spool; other spools are 404 spool_not_found', async () => {
    const service = createLocalService({ clock: new ManualClock() });
    expect(service.ready()).toBe(true);
    await service.checkTarget('default');
    await expectError(service.checkTarget('nope'), 'spool_not_found');
    await expectError(service.checkTarget('default', 'q'), 'queue_not_found');
    await expectError(service.describeSpool('nope'), 'spool_not_found');
    await service.createQueue('default', 'q', {});
    await service.checkTarget('default', 'q');
    const sent = await service.send('default', 'q', { payload, delayMs: 0, wantHandle: false });
    const delivery = await service.receive('default', 'q', { waitMs: 0 });
    expect(delivery?.messageId).toBe(sent.messageId);
    await service.ack('default', delivery!.lease);
    expect((await service.describeSpool('default')).stats).toMatchObject({ total: 0, ackedTotal: 1 });
    await service.close();
  });

  it('keeps spools apart: queues, seqs and tokens', async () => {
    const service = createLocalService({ spools: ['a', 'b'], clock: new ManualClock() });
    await service.createQueue('a', 'q', {});
    await service.createQueue('b', 'q', {});
    await service.send('a', 'q', { payload, delayMs: 0, wantHandle: false });
    const lease = (await service.receive('a', 'q', { waitMs: 0 }))!.lease;
    await service.send('b', 'q', { payload, delayMs: 0, wantHandle: false });
    await service.receive('b', 'q', { waitMs: 0 });
    await expectError(service.ack('b', lease), 'gone', { reason: 'stale' });
    await service.ack('a', lease);
    expect((await service.listQueues('a', { limit: 10 })).items.map((q) => q.name)).toEqual(['q']);
    await service.close();
  });

  it('tokens of another instance never verify, even with the same secret', async () => {
    const tokenSecret = new Uint8Array(32).fill(5);
    const first = createLocalService({ tokenSecret, clock: new ManualClock() });
    const second = createLocalService({ tokenSecret, clock: new ManualClock() });
    for (const service of [first, second]) {
      await service.createQueue('default', 'q', {});
      await service.send('default', 'q', { payload, delayMs: 0, wantHandle: false });
    }
    const lease = (await first.receive('default', 'q', { waitMs: 0 }))!.lease;
    await second.receive('default', 'q', { waitMs: 0 });
    await expectError(second.ack('default', lease), 'gone', { reason: 'stale' });
    await first.close();
    await second.close();
  });

  it('applies plan overrides', async () => {
    const service = createLocalService({ plan: { queuesPerSpoolMax: 1 }, clock: new ManualClock() });
    await service.createQueue('default', 'a', {});
    await expectError(service.createQueue('default', 'b', {}), 'queue_limit');
    await service.close();
  });

  it('close() ends long polls with null and refuses later calls with 503', async () => {
    const service = createLocalService({ clock: new ManualClock() });
    await service.createQueue('default', 'q', {});
    const parked = service.receive('default', 'q', { waitMs: 20_000 });
    await service.close();
    expect(await parked).toBeNull();
    await expectError(service.describeSpool('default'), 'unavailable');
  });

  it('works on the system clock by default (a long poll wakes on send)', async () => {
    const service = createLocalService();
    await service.createQueue('default', 'q', {});
    const parked = service.receive('default', 'q', { waitMs: 20_000 });
    await service.send('default', 'q', { payload, delayMs: 0, wantHandle: false });
    expect((await parked)?.payload).toEqual(payload);
    await service.close();
  });

  it('refuses invalid options', () => {
    expect(() => createLocalService({ spools: [] })).toThrow(/at least one spool/);
    expect(() => createLocalService({ spools: ['bad name'] })).toThrow(/invalid spool name/);
    expect(() => createLocalService({ spools: ['a', 'a'] })).toThrow(/twice/);
    expect(() => createLocalService({ tokenSecret: new Uint8Array(4) })).toThrow(/16 bytes/);
    expect(() => createLocalService({ plan: { messagesPerSpoolMax: 0 } })).toThrow(/plan/);
  });
});
