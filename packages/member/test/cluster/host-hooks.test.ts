// The hooks the cluster added to the host: a receive guard (the leader lease) and a resolver
// behind HostedSpoolService. Run on one host with the local log and a manual clock.

import { MqError, SpoolEngine, resolvePlan } from '@spoolmq/engine';
import { notPrimaryError, ManualClock } from '@spoolmq/protocol';
import { describe, expect, it } from 'vitest';
import { LocalCommandLog } from '../../src/host/command-log.js';
import { CursorCodec } from '../../src/host/cursors.js';
import { HostedSpoolService } from '../../src/host/hosted-service.js';
import { PatternCache } from '../../src/host/patterns.js';
import { SpoolHost } from '../../src/host/spool-host.js';
import { TokenCodec } from '../../src/host/tokens.js';
import { bytes, expectError } from './helpers.js';

const SECRET = new Uint8Array(32).fill(3);
const SALT = new Uint8Array(8).fill(4);

function guardedHost(guard: () => MqError | null): { host: SpoolHost; clock: ManualClock } {
  const clock = new ManualClock();
  const engine = new SpoolEngine(resolvePlan());
  const host = new SpoolHost({
    name: 'default',
    engine,
    log: new LocalCommandLog(engine, clock),
    clock,
    tokens: new TokenCodec(SECRET, SALT),
    cursors: new CursorCodec(SECRET, SALT),
    patterns: new PatternCache(),
    appliesSynchronously: true,
    receiveGuard: guard,
    receiveGuardRetryMs: 50,
  });
  host.openPrimary();
  return { host, clock };
}

describe('receive guard', () => {
  it('refuses a receive while the guard refuses; nothing is leased', async () => {
    let lease = false;
    const { host } = guardedHost(() => (lease ? null : new MqError('unavailable', 'no lease')));
    await host.createQueue('q', {});
    await host.send('q', { payload: bytes(1), delayMs: 0, wantHandle: false });
    expect(() => host.receive('q', { waitMs: 0 })).toThrow(MqError);
    lease = true;
    expect(await host.receive('q', { waitMs: 0 })).toMatchObject({ payload: bytes(1), retries: 0 });
  });

  it('keeps parked receivers waiting while it refuses and serves them once it allows', async () => {
    let lease = true;
    const { host, clock } = guardedHost(() => (lease ? null : new MqError('unavailable', 'no lease')));
    await host.createQueue('q', {});
    let result: unknown = 'pending';
    void host.receive('q', { waitMs: 20_000 }).then((d) => (result = d));
    lease = false;
    await host.send('q', { payload: bytes(2), delayMs: 0, wantHandle: false });
    await clock.advance(0);
    expect(result).toBe('pending');
    lease = true;
    await clock.advance(50); // the spool timer asks the guard again
    expect(result).toMatchObject({ payload: bytes(2) });
  });
});

describe('HostedSpoolService with a resolver', () => {
  it('routes by the resolver and answers with what it throws', async () => {
    const { host } = guardedHost(() => null);
    const refusal = notPrimaryError('other', 'n2');
    let ready = false;
    const service = new HostedSpoolService(
      (spool) => {
        if (spool === 'default') return host;
        throw refusal;
      },
      () => ready,
    );
    await service.createQueue('default', 'q', {});
    expect((await service.listQueues('default', { limit: 5 })).items.map((q) => q.name)).toEqual(['q']);
    const error = await expectError(service.describeSpool('other'), 'unavailable');
    expect(error).toBe(refusal);
    expect(service.ready()).toBe(false);
    ready = true;
    expect(service.ready()).toBe(true);
  });
});
