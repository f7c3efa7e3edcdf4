import { MqError, SpoolEngine } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { LocalCommandLog } from '../../src/host/command-log.js';
import { CursorCodec } from '../../src/host/cursors.js';
import { HostedSpoolService } from '../../src/host/hosted-service.js';
import { PatternCache } from '../../src/host/patterns.js';
import { SpoolHost } from '../../src/host/spool-host.js';
import { TokenCodec } from '../../src/host/tokens.js';
import { SALT, SECRET, expectError } from './helpers.js';

function service(growthGuard?: () => MqError | null): HostedSpoolService {
  const clock = new ManualClock();
  const engine = new SpoolEngine();
  const host = new SpoolHost({
    name: 'main',
    engine,
    log: new LocalCommandLog(engine, clock),
    clock,
    tokens: new TokenCodec(SECRET, SALT),
    cursors: new CursorCodec(SECRET, SALT),
    patterns: new PatternCache(),
    appliesSynchronously: true,
  });
  host.openPrimary();
  return new HostedSpoolService(new Map([['main', host]]), undefined, growthGuard);
}

describe('HostedSpoolService', () => {
  it('routes to the spool host, and every method rejects (never throws) 404 spool_not_found for others', async () => {
    const s = service();
    expect(s.ready()).toBe(true);
    await s.createQueue('main', 'q', {});
    expect((await s.describeQueue('main', 'q')).name).toBe('q');
    const lease = 'A'.repeat(56);
    const send = { payload: new Uint8Array(), delayMs: 0, wantHandle: false };
    const calls: (() => Promise<unknown>)[] = [
      () => s.checkTarget('x'),
      () => s.describeSpool('x'),
      () => s.spoolStats('x', { limit: 1 }),
      () => s.listQueues('x', { limit: 1 }),
      () => s.describeQueue('x', 'q'),
      () => s.createQueue('x', 'q', {}),
      () => s.updateQueue('x', 'q', {}),
      () => s.deleteQueue('x', 'q', 'force'),
      () => s.send('x', 'q', send),
      () => s.receive('x', 'q', { waitMs: 0 }),
      () => s.ack('x', lease),
      () => s.nack('x', lease),
      () => s.release('x', lease, 0),
      () => s.fail('x', lease),
      () => s.renew('x', lease),
      () => s.peek('x', lease),
      () => s.recover('x', { lease }, 0),
      () => s.discard('x', { lease }),
      () => s.listMessages('x', 'q', { limit: 1, withHandles: false }),
      () => s.failureHead('x', 'q'),
      () => s.ackAndSend('x', lease, 'q', send),
    ];
    for (const call of calls) {
      const pending = call();
      expect(pending).toBeInstanceOf(Promise);
      await expectError(pending, 'spool_not_found');
    }
    // Synchronous host errors become rejections too.
    const peek = s.peek('main', lease);
    expect(peek).toBeInstanceOf(Promise);
    await expectError(peek, 'gone', { reason: 'stale' });
  });

  it('asks the growth guard before create queue, send and ack-and-send only, after the spool', async () => {
    let refusal: MqError | null = null;
    let asked = 0;
    const s = service(() => {
      asked++;
      return refusal;
    });
    await s.createQueue('main', 'q', {});
    const send = { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false };
    await s.send('main', 'q', send);
    await s.send('main', 'q', send);
    expect(asked).toBe(3);
    refusal = new MqError('storage_full', 'disk low');
    await expectError(s.send('main', 'q', send), 'storage_full');
    await expectError(s.createQueue('main', 'r', {}), 'storage_full');
    // An unknown spool answers 404 first: a member that is not the primary redirects.
    await expectError(s.send('x', 'q', send), 'spool_not_found');
    // Everything that drains keeps working under the alarm.
    const first = await s.receive('main', 'q', { waitMs: 0 });
    expect(first).not.toBeNull();
    await expectError(s.ackAndSend('main', first!.lease, 'q', send), 'storage_full');
    await s.ack('main', first!.lease);
    const second = await s.receive('main', 'q', { waitMs: 0 });
    await s.nack('main', second!.lease);
    const again = await s.receive('main', 'q', { waitMs: 0 });
    await s.fail('main', again!.lease);
    await s.deleteQueue('main', 'q', 'force');
    expect((await s.listQueues('main', { limit: 10 })).items).toEqual([]);
    refusal = null;
    await s.createQueue('main', 'q', {});
    expect((await s.send('main', 'q', send)).messageId).toBeTypeOf('string');
  });
});
