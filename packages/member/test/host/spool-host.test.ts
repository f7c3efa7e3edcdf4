// The spool host on a manual clock: long polls, lease timeouts, tokens, handles, retention,
// drain, dedup in flight, listings, and the single spool timer.

import {
  MemoryPayloadStore,
  MqError,
  PayloadError,
  SpoolEngine,
  messageIdOf,
  resolvePlan,
} from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { LocalCommandLog } from '../../src/host/command-log.js';
import { CursorCodec } from '../../src/host/cursors.js';
import { PatternCache } from '../../src/host/patterns.js';
import { SpoolHost } from '../../src/host/spool-host.js';
import { TokenCodec, TokenKind } from '../../src/host/tokens.js';
import { GatedLog, SALT, SECRET, TermLog, bytes, expectError, makeHost, recvNow, sendOne } from './helpers.js';

describe('long polls', () => {
  it('a parked receive wakes when a message is sent', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const parked = host.receive('q', { waitMs: 20_000 });
    await sendOne(host, 'q', bytes(42));
    const delivery = await parked;
    expect(delivery?.payload).toEqual(bytes(42));
  });

  it('ends with null when the wait elapses', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', {});
    let result: unknown = 'pending';
    void host.receive('q', { waitMs: 1000 }).then((d) => (result = d));
    await clock.advance(999);
    expect(result).toBe('pending');
    await clock.advance(1);
    expect(result).toBeNull();
    // The message sent afterwards is not lost to the ended waiter.
    await sendOne(host, 'q');
    expect(await host.receive('q', { waitMs: 0 })).not.toBeNull();
  });

  it('ends with null when the client goes away (abort signal)', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const controller = new AbortController();
    const parked = host.receive('q', { waitMs: 20_000, signal: controller.signal });
    controller.abort();
    expect(await parked).toBeNull();
    const already = new AbortController();
    already.abort();
    expect(await host.receive('q', { waitMs: 20_000, signal: already.signal })).toBeNull();
    await sendOne(host, 'q');
    expect(await host.receive('q', { waitMs: 0 })).not.toBeNull();
  });

  it('wakes when a delayed message becomes visible', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', {});
    await sendOne(host, 'q', bytes(1), 3000);
    let result: unknown = 'pending';
    void host.receive('q', { waitMs: 20_000 }).then((d) => (result = d));
    await clock.advance(2999);
    expect(result).toBe('pending');
    await clock.advance(1);
    expect(result).toMatchObject({ payload: bytes(1) });
  });

  it('wakes when a lease returns its message: nack, release, lease timeout, recover', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 5, maxRetries: 5 });
    const id = await sendOne(host, 'q');
    const returns: [string, (lease: string) => Promise<unknown>][] = [
      ['nack', (lease) => host.nack(lease)],
      ['release', (lease) => host.release(lease, 0)],
      ['lease timeout', () => clock.advance(5000)],
    ];
    let holder = await recvNow(host, 'q');
    for (const [how, giveBack] of returns) {
      const parked = host.receive('q', { waitMs: 20_000 });
      await giveBack(holder.lease);
      const woken = await parked;
      expect(woken?.messageId, how).toBe(id);
      holder = woken!;
    }
    expect(holder.retries).toBe(2); // the nack and the timeout spent one each
    await host.fail(holder.lease);
    const parked = host.receive('q', { waitMs: 20_000 });
    await host.recover({ lease: host.failureHead('q')!.lease }, 0);
    expect(await parked).toMatchObject({ messageId: id, retries: 0 });
  });

  it('serves parked receivers in arrival order', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const first = host.receive('q', { waitMs: 20_000 });
    const second = host.receive('q', { waitMs: 20_000 });
    const a = await sendOne(host, 'q');
    const b = await sendOne(host, 'q');
    expect((await first)?.messageId).toBe(a);
    expect((await second)?.messageId).toBe(b);
  });

  it('honours the receive rate limit: a refused receive waits within waitMs, else null', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { recvRateLimit: { intervalMicros: 1_000_000, burst: 1 } });
    for (let i = 0; i < 3; i++) await sendOne(host, 'q');
    await recvNow(host, 'q');
    expect(await host.receive('q', { waitMs: 0 })).toBeNull();
    let short: unknown = 'pending';
    void host.receive('q', { waitMs: 500 }).then((d) => (short = d));
    await clock.advance(500);
    expect(short).toBeNull();
    let long: unknown = 'pending';
    void host.receive('q', { waitMs: 5000 }).then((d) => (long = d));
    await clock.advance(499);
    expect(long).toBe('pending');
    await clock.advance(1); // one token per second since the first receive
    expect(long).toMatchObject({ messageId: '0000000000000002' });
  });

  it('parks a bounded number of receivers per queue; beyond it a receive answers null', async () => {
    const { host } = makeHost({ waitersPerQueueMax: 2 });
    await host.createQueue('q', {});
    const a = host.receive('q', { waitMs: 20_000 });
    const b = host.receive('q', { waitMs: 20_000 });
    expect(await host.receive('q', { waitMs: 20_000 })).toBeNull();
    await sendOne(host, 'q');
    await sendOne(host, 'q');
    expect(await a).not.toBeNull();
    expect(await b).not.toBeNull();
  });

  it('parked receivers end with null when their queue is deleted', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const parked = host.receive('q', { waitMs: 20_000 });
    expect(await host.deleteQueue('q', 'force')).toBe('deleted');
    expect(await parked).toBeNull();
  });

  it('close() ends parked receivers with null, stops the timer, and refuses later calls', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 5 });
    await sendOne(host, 'q');
    await recvNow(host, 'q');
    const parked = host.receive('q', { waitMs: 20_000 });
    host.close();
    expect(await parked).toBeNull();
    expect(clock.pendingTimers).toBe(0);
    await expectError(() => host.receive('q', { waitMs: 0 }), 'unavailable');
    await expectError(host.createQueue('r', {}), 'unavailable');
  });
});

describe('leadership', () => {
  it('stepDown ends long polls and refuses calls until openPrimary; reopening drops leases', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 5 });
    await sendOne(host, 'q');
    const held = await recvNow(host, 'q');
    const parked = host.receive('q', { waitMs: 20_000 });
    host.stepDown();
    expect(await parked).toBeNull();
    expect(clock.pendingTimers).toBe(0);
    await expectError(host.ack(held.lease), 'unavailable');
    await expectError(async () => host.describe(), 'unavailable');
    host.openPrimary();
    // Same term in this test: the old lease names a delivery the new primary never made.
    await expectError(host.ack(held.lease), 'gone', { reason: 'settled' });
    const again = await recvNow(host, 'q');
    expect(again.messageId).toBe(held.messageId);
    expect(again.retries).toBe(0);
    host.close();
    expect(() => host.openPrimary()).toThrow(/closed/);
  });
});

describe('leases', () => {
  it('a lease timeout redelivers with retries + 1; the old lease answers 410 expired', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 2 });
    await sendOne(host, 'q');
    const first = await recvNow(host, 'q');
    expect(first.leaseExpiresAtMs).toBe(clock.nowMs() + 2000);
    await clock.advance(2000);
    const second = await recvNow(host, 'q');
    expect(second.messageId).toBe(first.messageId);
    expect(second.retries).toBe(1);
    await expectError(host.ack(first.lease), 'gone', { reason: 'expired' });
    expect((await host.stats({ limit: 10 })).stats).toMatchObject({ nackedTotal: 1, pending: 1 });
    await host.ack(second.lease);
  });

  it('a lease past its deadline answers expired even before the timer ran', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 2 });
    await sendOne(host, 'q');
    const first = await recvNow(host, 'q');
    clock.set(clock.nowMs() + 2000); // time moves, timers not yet fired
    await expectError(host.ack(first.lease), 'gone', { reason: 'expired' });
  });

  it('a lease timeout that exhausts retries fails the message', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 1, maxRetries: 0 });
    await sendOne(host, 'q', bytes(5));
    await recvNow(host, 'q');
    await clock.advance(1000);
    const head = host.failureHead('q');
    expect(head).toMatchObject({ payload: bytes(5), retries: 0 });
    expect(head).not.toHaveProperty('leaseExpiresAtMs');
    expect((await host.stats({ limit: 10 })).stats).toMatchObject({ failed: 1, failedTotal: 1, nackedTotal: 1 });
  });

  it('renew extends the lease to now + the lease timeout; no timeout means no-op', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 10 });
    await host.createQueue('n', { leaseTimeoutSeconds: 0 });
    await sendOne(host, 'q');
    await sendOne(host, 'n');
    const d = await recvNow(host, 'q');
    await clock.advance(9000);
    expect(host.renew(d.lease)).toEqual({ leaseExpiresAtMs: clock.nowMs() + 10_000 });
    await clock.advance(9000);
    await host.ack(d.lease); // still valid past the original deadline
    const n = await recvNow(host, 'n');
    expect(n).not.toHaveProperty('leaseExpiresAtMs');
    expect(host.renew(n.lease)).toEqual({});
  });

  it('ack, nack, release, fail and discard settle once; the second use is 410 settled', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    for (const settle of [
      (l: string) => host.ack(l),
      (l: string) => host.nack(l),
      (l: string) => host.release(l, 0),
      (l: string) => host.release(l, 1000),
      (l: string) => host.fail(l),
      (l: string) => host.discard({ lease: l }),
    ]) {
      await sendOne(host, 'q');
      const d = await recvNow(host, 'q');
      await settle(d.lease);
      await expectError(host.ack(d.lease), 'gone', { reason: 'settled' });
      await expectError(async () => host.renew(d.lease), 'gone', { reason: 'settled' });
    }
  });

  it('release with a delay makes the message delayed until it elapses', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', {});
    await sendOne(host, 'q');
    const d = await recvNow(host, 'q');
    await host.release(d.lease, 1500);
    expect(await host.receive('q', { waitMs: 0 })).toBeNull();
    expect(host.listMessages('q', { limit: 10, withHandles: false }).items[0]).toMatchObject({
      state: 'delayed',
      visibleAtMs: clock.nowMs() + 1500,
    });
    await clock.advance(1500);
    expect((await recvNow(host, 'q')).retries).toBe(0);
  });

  it('the spool runs one timer, armed at its next deadline, not one per message', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { leaseTimeoutSeconds: 30 });
    for (let i = 0; i < 100; i++) {
      await sendOne(host, 'q', bytes(i), i % 2 === 0 ? 0 : 1000 + i);
      if (i % 2 === 0) await recvNow(host, 'q');
    }
    expect(clock.pendingTimers).toBe(1);
  });
});

describe('tokens', () => {
  async function leased() {
    const fixture = makeHost();
    await fixture.host.createQueue('q', {});
    await fixture.host.send('q', { payload: bytes(1), delayMs: 0, wantHandle: false });
    const delivery = await recvNow(fixture.host, 'q');
    return { ...fixture, delivery };
  }

  it('a tampered or forged token answers 410 stale', async () => {
    const { host, delivery } = await leased();
    const tampered = `${delivery.lease.slice(0, 10)}${delivery.lease[10] === 'A' ? 'B' : 'A'}${delivery.lease.slice(11)}`;
    await expectError(host.ack(tampered), 'gone', { reason: 'stale' });
    await expectError(host.ack('A'.repeat(56)), 'gone', { reason: 'stale' });
    await expectError(host.ack('short-but-valid-chars'), 'gone', { reason: 'stale' });
    await host.ack(delivery.lease);
  });

  it('a token of the wrong kind that verifies answers 400 token_kind', async () => {
    const { host, delivery } = await leased();
    const handle = (await host.send('q', { payload: bytes(2), delayMs: 0, wantHandle: true })).handle!;
    await expectError(host.ack(handle), 'token_kind');
    await expectError(async () => host.peek(delivery.lease), 'token_kind');
    await expectError(host.discard({ handle: delivery.lease }), 'token_kind');
    // A failure lease is accepted by recover and discard only.
    const { host: h } = makeHost();
    await h.createQueue('q', { maxRetries: 0 });
    await sendOne(h, 'q');
    await h.nack((await recvNow(h, 'q')).lease);
    const failure = h.failureHead('q')!.lease;
    for (const use of [
      () => h.ack(failure),
      () => h.nack(failure),
      () => h.release(failure, 0),
      () => h.fail(failure),
      async () => h.renew(failure),
      () => h.ackAndSend(failure, 'q', { payload: bytes(), delayMs: 0, wantHandle: false }),
      async () => h.peek(failure),
    ]) {
      await expectError(use(), 'token_kind');
    }
    await expectError(h.recover({ lease: (await h.send('q', { payload: bytes(), delayMs: 0, wantHandle: true })).handle! }, 0), 'token_kind');
    await h.recover({ lease: failure }, 0);
    await expectError(h.recover({ lease: failure }, 0), 'gone', { reason: 'settled' });
  });

  it('a token minted for another spool answers 410 stale', async () => {
    const { delivery } = await leased();
    const { host: other } = makeHost({ name: 'other' });
    await other.createQueue('q', {});
    await sendOne(other, 'q');
    await recvNow(other, 'q');
    await expectError(other.ack(delivery.lease), 'gone', { reason: 'stale' });
  });

  it('a token from a deleted and recreated queue answers 410 stale', async () => {
    const { host, delivery } = await leased();
    const handle = (await host.send('q', { payload: bytes(2), delayMs: 0, wantHandle: true })).handle!;
    await host.deleteQueue('q', 'force');
    await host.createQueue('q', {});
    await sendOne(host, 'q');
    await recvNow(host, 'q');
    await expectError(host.ack(delivery.lease), 'gone', { reason: 'stale' });
    await expectError(async () => host.peek(handle), 'gone', { reason: 'stale' });
  });

  it('tokens minted under an earlier term answer 410 primary_changed; pending messages are visible again', async () => {
    let log!: TermLog;
    const { host } = makeHost({ log: (engine, clock) => (log = new TermLog(engine, clock)), synchronous: true });
    await host.createQueue('q', {});
    const handle = (await host.send('q', { payload: bytes(1), delayMs: 0, wantHandle: true })).handle!;
    await sendOne(host, 'q');
    const d = await recvNow(host, 'q');
    log.term = 2;
    host.openPrimary();
    await expectError(host.ack(d.lease), 'gone', { reason: 'primary_changed' });
    await expectError(async () => host.peek(handle), 'gone', { reason: 'primary_changed' });
    const again = await recvNow(host, 'q');
    expect(again.messageId).toBe(d.messageId);
    expect(again.retries).toBe(0);
    await host.ack(again.lease);
  });

  it('after a planned hand-off, failure leases of the handed-off term recover and discard; earlier ones and handles answer 410', async () => {
    let log!: TermLog;
    const { host } = makeHost({ log: (engine, clock) => (log = new TermLog(engine, clock)), synchronous: true });
    for (const name of ['a', 'b']) {
      await host.createQueue(name, { maxRetries: 0 });
      await sendOne(host, name);
      await host.fail((await recvNow(host, name)).lease);
    }
    const earlier = host.failureHead('a')!.lease; // term 1
    log.term = 2;
    host.openPrimary(); // an unplanned change: term 1's failure leases are void
    await expectError(host.recover({ lease: earlier }, 0), 'gone', { reason: 'primary_changed' });
    const a = host.failureHead('a')!.lease;
    const b = host.failureHead('b')!.lease;
    const [item] = host.listMessages('b', { state: 'failed', limit: 1, withHandles: true }).items;
    log.term = 3;
    host.openPrimary({ term: 2, failureFromTerm: 2, leases: [] }); // term 2's primary handed off, holding no lease
    await expectError(host.recover({ lease: earlier }, 0), 'gone', { reason: 'primary_changed' });
    await expectError(host.discard({ lease: earlier }), 'gone', { reason: 'primary_changed' });
    await expectError(async () => host.peek(item!.handle!), 'gone', { reason: 'primary_changed' });
    await host.recover({ lease: a }, 0);
    await host.discard({ lease: b });
    // Resolved by the engine as usual: the recovered message's generation fences the lease.
    await expectError(host.recover({ lease: a }, 0), 'gone', { reason: 'settled' });
    await expectError(host.discard({ lease: b }), 'gone', { reason: 'settled' });
    expect(host.failureHead('a')).toBeNull();
    expect((await recvNow(host, 'a')).retries).toBe(0);
    expect((await host.stats({ limit: 10 })).stats).toMatchObject({ total: 1, discardedTotal: 1 });
  });

  it('an unplanned change after a hand-off voids the handed-off failure leases again', async () => {
    let log!: TermLog;
    const { host } = makeHost({ log: (engine, clock) => (log = new TermLog(engine, clock)), synchronous: true });
    await host.createQueue('q', { maxRetries: 0 });
    await sendOne(host, 'q');
    await host.fail((await recvNow(host, 'q')).lease);
    const failure = host.failureHead('q')!.lease; // term 1
    log.term = 2;
    host.openPrimary({ term: 1, failureFromTerm: 1, leases: [] });
    log.term = 3;
    host.openPrimary();
    await expectError(host.recover({ lease: failure }, 0), 'gone', { reason: 'primary_changed' });
    await expectError(host.discard({ lease: failure }), 'gone', { reason: 'primary_changed' });
    expect(() => host.openPrimary({ term: 3, failureFromTerm: 3, leases: [] })).toThrow(/out of order/);
    expect(() => host.openPrimary({ term: 2, failureFromTerm: 3, leases: [] })).toThrow(/out of order/);
  });

  it('failure leases survive a chain of hand-offs (a rolling restart): what each primary hands over names the first term', async () => {
    let log!: TermLog;
    const { host } = makeHost({ log: (engine, clock) => (log = new TermLog(engine, clock)), synchronous: true });
    await host.createQueue('q', { maxRetries: 0 });
    for (let i = 0; i < 2; i++) {
      await sendOne(host, 'q');
      await host.fail((await recvNow(host, 'q')).lease);
    }
    const first = host.failureHead('q')!.lease; // term 1
    const fromFirst = host.handingOff();
    expect(fromFirst).toEqual({ term: 1, failureFromTerm: 1, leases: [] });
    log.term = 2;
    host.openPrimary(fromFirst);
    const fromSecond = host.handingOff();
    expect(fromSecond).toEqual({ term: 2, failureFromTerm: 1, leases: [] });
    log.term = 4; // an election in term 3 opened nobody
    host.openPrimary(fromSecond);
    await host.discard({ lease: first }); // minted two hand-offs ago
    const second = host.failureHead('q')!.lease; // term 4
    log.term = 5;
    host.openPrimary(); // unplanned: the chain ends
    expect(host.handingOff()).toMatchObject({ term: 5, failureFromTerm: 5 });
    await expectError(host.discard({ lease: second }), 'gone', { reason: 'primary_changed' });
  });
});

describe('a lease that cannot be minted', () => {
  it('leaves the message visible, not pending under a lease nobody holds', async () => {
    let log!: TermLog;
    const { host } = makeHost({ log: (engine, clock) => (log = new TermLog(engine, clock)), synchronous: true });
    await host.createQueue('q', {});
    const sent = await sendOne(host, 'q');
    // The audit's wedge: a term past what a token holds (the transport now refuses such terms).
    log.term = 2 ** 32;
    expect(() => host.receive('q', { waitMs: 0 })).toThrow(RangeError);
    log.term = 3;
    const again = await recvNow(host, 'q');
    expect(again.messageId).toBe(sent);
    expect(again.retries).toBe(0);
  });
});

describe('handles', () => {
  it('a send handle peeks and cancels before the first delivery; a delay elapsing keeps it', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', {});
    const sent = await host.send('q', { payload: bytes(9), delayMs: 1000, wantHandle: true });
    expect(host.peek(sent.handle!)).toEqual({ payload: bytes(9), messageId: sent.messageId, state: 'delayed', retries: 0 });
    await clock.advance(1000);
    expect(host.peek(sent.handle!).state).toBe('visible');
    await host.discard({ handle: sent.handle! });
    expect(await host.receive('q', { waitMs: 0 })).toBeNull();
    await expectError(async () => host.peek(sent.handle!), 'gone', { reason: 'settled' });
  });

  it('a delivery fences a send handle', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const sent = await host.send('q', { payload: bytes(9), delayMs: 0, wantHandle: true });
    const d = await recvNow(host, 'q');
    await expectError(async () => host.peek(sent.handle!), 'gone', { reason: 'settled' });
    await expectError(host.discard({ handle: sent.handle! }), 'gone', { reason: 'settled' });
    await host.release(d.lease, 0);
    await expectError(async () => host.peek(sent.handle!), 'gone', { reason: 'settled' });
  });

  it('a listing handle minted while pending peeks during that delivery; discard is 409 message_leased', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    await sendOne(host, 'q', bytes(3));
    const d = await recvNow(host, 'q');
    const [item] = host.listMessages('q', { limit: 10, withHandles: true }).items;
    expect(item).toMatchObject({ state: 'pending', id: d.messageId });
    expect(host.peek(item!.handle!)).toMatchObject({ state: 'pending', payload: bytes(3) });
    await expectError(host.discard({ handle: item!.handle! }), 'message_leased');
    await host.ack(d.lease);
    await expectError(async () => host.peek(item!.handle!), 'gone', { reason: 'settled' });
  });

  it('recover by a failed-state listing handle: retries reset; the handle is used up', async () => {
    const { host } = makeHost();
    await host.createQueue('q', { maxRetries: 1 });
    await sendOne(host, 'q');
    await host.nack((await recvNow(host, 'q')).lease);
    await host.nack((await recvNow(host, 'q')).lease);
    const [item] = host.listMessages('q', { state: 'failed', limit: 10, withHandles: true }).items;
    expect(item).toMatchObject({ state: 'failed', retries: 1 });
    await host.recover({ handle: item!.handle! }, 0);
    await expectError(host.recover({ handle: item!.handle! }, 0), 'gone', { reason: 'settled' });
    expect((await recvNow(host, 'q')).retries).toBe(0);
  });

  it('recover of a message that is not failed: 409 conflict (409 message_leased while pending)', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const sent = await host.send('q', { payload: bytes(), delayMs: 0, wantHandle: true });
    await expectError(host.recover({ handle: sent.handle! }, 0), 'conflict');
    await recvNow(host, 'q');
    const [item] = host.listMessages('q', { limit: 10, withHandles: true }).items;
    await expectError(host.recover({ handle: item!.handle! }, 0), 'message_leased');
  });

  it('discard by failure lease removes a failed message (discardedTotal)', async () => {
    const { host } = makeHost();
    await host.createQueue('q', { maxRetries: 0 });
    await sendOne(host, 'q');
    await host.fail((await recvNow(host, 'q')).lease);
    const head = host.failureHead('q')!;
    expect(host.failureHead('q')!.lease).toBe(head.lease); // repeated reads: the same failure lease
    await host.discard({ lease: head.lease });
    expect(host.failureHead('q')).toBeNull();
    expect((await host.stats({ limit: 1 })).stats).toMatchObject({ total: 0, discardedTotal: 1, failedTotal: 1 });
  });
});

describe('retention', () => {
  it('a message expires effectiveRetentionSeconds after it became visible (expiredTotal)', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { retentionSeconds: 60 });
    await sendOne(host, 'q');
    await clock.advance(59_999);
    expect(host.listMessages('q', { limit: 10, withHandles: false }).items).toHaveLength(1);
    await clock.advance(1);
    expect(host.listMessages('q', { limit: 10, withHandles: false }).items).toHaveLength(0);
    expect((await host.stats({ limit: 10 })).stats).toMatchObject({ total: 0, expiredTotal: 1 });
  });

  it('a leased message is not expired while held, and expires when its lease returns it', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { retentionSeconds: 60, leaseTimeoutSeconds: 0 });
    await sendOne(host, 'q');
    const d = await recvNow(host, 'q');
    await clock.advance(120_000);
    expect((await host.stats({ limit: 10 })).stats).toMatchObject({ total: 1, pending: 1, expiredTotal: 0 });
    await host.nack(d.lease);
    await clock.advance(0);
    expect((await host.stats({ limit: 10 })).stats).toMatchObject({ total: 0, expiredTotal: 1 });
  });
});

describe('drain and delete', () => {
  it('drain: 202, refuses sends, stays consumable, the queue goes with its last message', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    await sendOne(host, 'q');
    expect(await host.deleteQueue('q', 'drain')).toBe('accepted');
    expect(host.describeQueue('q').state).toBe('draining');
    await expectError(host.send('q', { payload: bytes(), delayMs: 0, wantHandle: false }), 'queue_draining');
    const d = await recvNow(host, 'q');
    await host.ack(d.lease);
    await expectError(async () => host.describeQueue('q'), 'queue_not_found');
    expect(host.listQueues({ limit: 10 }).items).toEqual([]);
  });

  it('a drain completed by retention ends the receivers parked on the queue', async () => {
    const { host, clock } = makeHost();
    await host.createQueue('q', { retentionSeconds: 60, recvRateLimit: { intervalMicros: 10_000_000, burst: 1 } });
    await sendOne(host, 'q');
    await sendOne(host, 'q');
    await host.ack((await recvNow(host, 'q')).lease);
    expect(await host.deleteQueue('q', 'drain')).toBe('accepted');
    let parked: unknown = 'pending';
    void host.receive('q', { waitMs: 20_000 }).then((d) => (parked = d)); // rate-limited: parks
    await clock.advance(9_000);
    expect(parked).toBe('pending');
    clock.set(clock.nowMs() + 51_000); // past retention, before the rate limit's next token
    await clock.advance(0);
    expect(parked).toBeNull();
    await expectError(async () => host.describeQueue('q'), 'queue_not_found');
  });

  it('drain of an empty queue deletes it at once; force deletes everything', async () => {
    const { host } = makeHost();
    await host.createQueue('a', {});
    await host.createQueue('b', {});
    await sendOne(host, 'b');
    expect(await host.deleteQueue('a', 'drain')).toBe('deleted');
    expect(await host.deleteQueue('b', 'force')).toBe('deleted');
    expect((await host.stats({ limit: 10 })).queueCount).toBe(0);
    await expectError(host.deleteQueue('b', 'force'), 'queue_not_found');
  });
});

describe('sends', () => {
  it('a dedup hit answers the original id and appends nothing', async () => {
    const { host } = makeHost();
    await host.createQueue('q', { dedupWindowSeconds: 60 });
    const key = new Uint8Array(16).fill(4);
    const first = await host.send('q', { payload: bytes(1), delayMs: 0, dedupKey: key, wantHandle: true });
    const again = await host.send('q', { payload: bytes(2), delayMs: 0, dedupKey: key, wantHandle: true });
    expect(again).toEqual({ messageId: first.messageId, duplicate: true });
    expect((await host.stats({ limit: 1 })).stats).toMatchObject({ total: 1, addedTotal: 1 });
    await expectError(host.send('q', { payload: bytes(), delayMs: 0, dedupKey: new Uint8Array(3), wantHandle: false }), 'invalid_argument');
  });

  it('while a send with a key is in the log, the same key answers 409 dedup_in_flight; total counts it', async () => {
    let log!: GatedLog;
    const { host } = makeHost({ log: (engine: SpoolEngine, clock) => (log = new GatedLog(engine, clock)) });
    const creating = host.createQueue('q', { dedupWindowSeconds: 60 });
    log.flush();
    await creating;
    const key = new Uint8Array(16).fill(8);
    const first = host.send('q', { payload: bytes(1, 2, 3), delayMs: 0, dedupKey: key, wantHandle: false });
    await expectError(host.send('q', { payload: bytes(1), delayMs: 0, dedupKey: key, wantHandle: false }), 'dedup_in_flight');
    expect((await host.stats({ limit: 1 })).stats).toMatchObject({ total: 1, dataBytes: 3, visible: 0 });
    log.flush();
    const sent = await first;
    expect(sent.duplicate).toBe(false);
    expect((await host.stats({ limit: 1 })).stats).toMatchObject({ total: 1, dataBytes: 3, visible: 1 });
    const repeat = host.send('q', { payload: bytes(1), delayMs: 0, dedupKey: key, wantHandle: false });
    expect(await repeat).toEqual({ messageId: sent.messageId, duplicate: true });
    expect(log.waiting).toBe(0);
  });

  it('while an ack is in the log, the lease settles nothing more (no double settlement)', async () => {
    let log!: GatedLog;
    const { host } = makeHost({ log: (engine: SpoolEngine, clock) => (log = new GatedLog(engine, clock)) });
    const creating = host.createQueue('q', {});
    log.flush();
    await creating;
    const sending = sendOne(host, 'q');
    log.flush();
    await sending;
    const d = await recvNow(host, 'q');
    const acking = host.ack(d.lease);
    await expectError(host.release(d.lease, 0), 'gone', { reason: 'settled' });
    expect(await host.receive('q', { waitMs: 0 })).toBeNull();
    log.flush();
    await acking;
  });

  it('refuses with 507 spool_full at the message cap, counting appends in flight', async () => {
    const { host } = makeHost({ plan: { messagesPerSpoolMax: 2 } });
    await host.createQueue('q', {});
    await sendOne(host, 'q');
    await sendOne(host, 'q');
    await expectError(host.send('q', { payload: bytes(), delayMs: 0, wantHandle: false }), 'spool_full');
  });

  it('takes a 1 MiB payload intact', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const payload = new Uint8Array(1_048_576).map((_, i) => i & 0xff);
    await host.send('q', { payload, delayMs: 0, wantHandle: false });
    const received = (await recvNow(host, 'q')).payload;
    expect(received.byteLength).toBe(payload.byteLength);
    expect(Buffer.compare(received, payload)).toBe(0);
  });
});

describe('ack-and-send', () => {
  it('acks and appends atomically; the new message wakes the target queue', async () => {
    const { host } = makeHost();
    await host.createQueue('src', {});
    await host.createQueue('dst', {});
    await sendOne(host, 'src');
    const d = await recvNow(host, 'src');
    const parked = host.receive('dst', { waitMs: 20_000 });
    const result = await host.ackAndSend(d.lease, 'dst', { payload: bytes(7), delayMs: 0, wantHandle: true });
    expect(result.duplicate).toBe(false);
    expect((await parked)?.payload).toEqual(bytes(7));
    // The parked receive took it at once: that delivery fenced the send handle.
    await expectError(async () => host.peek(result.handle!), 'gone', { reason: 'settled' });
    await expectError(host.ackAndSend(d.lease, 'dst', { payload: bytes(), delayMs: 0, wantHandle: false }), 'gone', { reason: 'settled' });
  });

  it('a dedup hit refuses it all (409 dedup_claimed with the original id); the lease still works', async () => {
    const { host } = makeHost();
    await host.createQueue('q', { dedupWindowSeconds: 60 });
    const key = new Uint8Array(16).fill(1);
    const original = await host.send('q', { payload: bytes(), delayMs: 0, dedupKey: key, wantHandle: false });
    const d = await recvNow(host, 'q');
    await expectError(host.ackAndSend(d.lease, 'q', { payload: bytes(), delayMs: 0, dedupKey: key, wantHandle: false }), 'dedup_claimed', {
      messageId: original.messageId,
    });
    await host.ack(d.lease);
  });

  it('an unknown target queue is 404 before the lease is looked at', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    await expectError(host.ackAndSend('A'.repeat(56), 'nope', { payload: bytes(), delayMs: 0, wantHandle: false }), 'queue_not_found');
  });
});

describe('listings and stats', () => {
  it('message pages follow send order with an opaque cursor; a bad cursor is 400 (after)', async () => {
    const { host } = makeHost();
    await host.createQueue('q', {});
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await sendOne(host, 'q'));
    const first = host.listMessages('q', { limit: 2, withHandles: false });
    expect(first.items.map((m) => m.id)).toEqual(ids.slice(0, 2));
    const second = host.listMessages('q', { limit: 2, after: first.next!, withHandles: false });
    expect(second.items.map((m) => m.id)).toEqual(ids.slice(2, 4));
    const third = host.listMessages('q', { limit: 2, after: second.next!, withHandles: false });
    expect(third.items.map((m) => m.id)).toEqual(ids.slice(4));
    expect(third.next).toBeUndefined();
    await expectError(async () => host.listMessages('q', { limit: 2, after: `${first.next!}x`, withHandles: false }), 'invalid_argument', { field: 'after' });
    await expectError(async () => host.listMessages('q', { state: 'visible', limit: 2, after: first.next!, withHandles: false }), 'invalid_argument');
    await expectError(async () => host.listQueues({ limit: 2, after: first.next! }), 'invalid_argument', { field: 'after' });
  });

  it('queue listings and stats: byte order, match, queues filter, cursors per listing', async () => {
    const { host } = makeHost();
    for (const name of ['jobs-b', 'jobs-a', 'mail', 'Jobs']) await host.createQueue(name, {});
    await sendOne(host, 'jobs-a', bytes(1, 2));
    const page = host.listQueues({ limit: 2 });
    expect(page.items.map((q) => q.name)).toEqual(['Jobs', 'jobs-a']);
    expect(host.listQueues({ limit: 2, after: page.next! }).items.map((q) => q.name)).toEqual(['jobs-b', 'mail']);
    expect(host.listQueues({ limit: 10, match: '^jobs-' }).items.map((q) => q.name)).toEqual(['jobs-a', 'jobs-b']);
    const stats = host.stats({ limit: 1, match: 'jobs', queues: ['jobs-a', 'jobs-b', 'ghost'] });
    expect(stats.queueCount).toBe(4);
    expect(stats.stats).toMatchObject({ total: 1, dataBytes: 2 });
    expect(stats.queues.items).toEqual([expect.objectContaining({ name: 'jobs-a', stats: expect.objectContaining({ total: 1, visible: 1 }) })]);
    const rest = host.stats({ limit: 1, match: 'jobs', queues: ['jobs-a', 'jobs-b'], after: stats.queues.next! });
    expect(rest.queues.items.map((q) => q.name)).toEqual(['jobs-b']);
    expect(rest.queues.next).toBeUndefined();
    await expectError(async () => host.stats({ limit: 1, after: page.next! }), 'invalid_argument');
  });

  it('describe spool: counters after a scripted sequence; startedAt is the opening', async () => {
    const { host, clock } = makeHost();
    const opened = clock.nowMs();
    await clock.advance(10);
    await host.createQueue('q', { maxRetries: 1 });
    for (let i = 0; i < 4; i++) await sendOne(host, 'q', bytes(i, i));
    await host.ack((await recvNow(host, 'q')).lease);
    await host.nack((await recvNow(host, 'q')).lease);
    await host.release((await recvNow(host, 'q')).lease, 0);
    await host.discard({ lease: (await recvNow(host, 'q')).lease });
    const view = host.describe();
    expect(view).toEqual({
      name: 'default',
      queueCount: 1,
      stats: {
        total: 2, dataBytes: 4, delayed: 0, visible: 2, pending: 0, failed: 0, unavailable: 0,
        addedTotal: 4, ackedTotal: 1, nackedTotal: 1, releasedTotal: 1, failedTotal: 0, discardedTotal: 1, expiredTotal: 0,
        sampledAtMs: clock.nowMs(), startedAtMs: opened,
      },
    });
    await host.deleteQueue('q', 'force');
    expect(host.describe().stats).toMatchObject({ total: 0, addedTotal: 4, ackedTotal: 1 });
  });

  it('create and update: views, 409 queue_exists, 403 limits, 404 on unknown queues', async () => {
    const { host } = makeHost({ plan: { queuesPerSpoolMax: 1 } });
    const created = await host.createQueue('q', { leaseTimeoutSeconds: 7 });
    expect(created).toMatchObject({ name: 'q', state: 'active', settings: { leaseTimeoutSeconds: 7, recvRateLimit: { intervalMicros: 0, burst: 0 } } });
    await expectError(host.createQueue('q', {}), 'queue_exists');
    await expectError(host.createQueue('r', {}), 'queue_limit');
    await expectError(host.createQueue('bad name', {}), 'invalid_argument');
    expect((await host.updateQueue('q', { maxRetries: 3 })).settings.maxRetries).toBe(3);
    await expectError(host.updateQueue('q', { retentionSeconds: 99_999_999 }), 'retention_limit');
    await expectError(host.updateQueue('nope', {}), 'queue_not_found');
    await expectError(async () => host.checkTarget('nope'), 'queue_not_found');
    host.checkTarget('q');
    host.checkTarget();
  });
});

describe('construction', () => {
  it('refuses nonsense bounds', () => {
    const { engine, clock } = makeHost();
    expect(
      () =>
        new SpoolHost({
          name: 'x',
          engine,
          log: new LocalCommandLog(engine, clock),
          clock,
          tokens: new TokenCodec(SECRET, SALT),
          cursors: new CursorCodec(SECRET, SALT),
          patterns: new PatternCache(),
          waitersPerQueueMax: 0,
        }),
    ).toThrow(/bounds/);
    expect(TokenKind.Lease).toBe(1);
    expect(new MqError('gone', 'x').status).toBe(410);
  });
});

/** A memory store whose reads of the seqs in `bad` fail their checksum (bits flipped on disk). */
class FlakyPayloads extends MemoryPayloadStore {
  readonly bad = new Set<number>();

  override read(seq: number, location: number, byteLength: number): Uint8Array {
    if (this.bad.has(seq)) throw new PayloadError(seq, 'checksum mismatch at 1:0');
    return super.read(seq, location, byteLength);
  }
}

function flakyHost() {
  const clock = new ManualClock();
  const payloads = new FlakyPayloads();
  const engine = SpoolEngine.over(payloads, resolvePlan({}));
  const lost: number[] = [];
  const host = new SpoolHost({
    name: 'default',
    engine,
    log: new LocalCommandLog(engine, clock),
    clock,
    tokens: new TokenCodec(SECRET, SALT),
    cursors: new CursorCodec(SECRET, SALT),
    patterns: new PatternCache(),
    appliesSynchronously: true,
    onPayloadLost: (_queue, message) => lost.push(message.seq),
  });
  host.openPrimary();
  return { clock, payloads, engine, host, lost };
}

describe('a payload this replica cannot read', () => {
  it('a receive skips its message (unavailable, no retry spent) and gets the next one', async () => {
    const { payloads, engine, host, lost } = flakyHost();
    await host.createQueue('q', { maxRetries: 0 });
    for (let i = 1; i <= 3; i++) await sendOne(host, 'q', bytes(i));
    payloads.bad.add(1);
    const delivery = await recvNow(host, 'q');
    expect(delivery.payload).toEqual(bytes(2));
    expect(lost).toEqual([1]);
    const stats = host.stats({ limit: 10 }).stats;
    expect(stats).toMatchObject({ total: 3, visible: 1, pending: 1, unavailable: 1, releasedTotal: 0 });
    const listed = host.listMessages('q', { state: 'unavailable', limit: 10, withHandles: false });
    expect(listed.items.map((m) => [m.id, m.state, m.retries])).toEqual([[messageIdOf(1), 'unavailable', 0]]);

    // The good copy arrives: the message is back in its place, ahead of 3, with its bytes.
    payloads.bad.delete(1);
    const queue = engine.queue('q')!;
    expect(engine.fillPayload(queue.gen, 1, bytes(1))).toBe(true);
    host.payloadRestored(queue);
    const again = await recvNow(host, 'q');
    expect([again.messageId, again.payload, again.retries]).toEqual([messageIdOf(1), bytes(1), 0]);
    expect(host.stats({ limit: 10 }).stats.unavailable).toBe(0);
  });

  it('parked receivers get the next message, then the repaired one when it is restored', async () => {
    const { payloads, engine, host } = flakyHost();
    await host.createQueue('q', {});
    const waiting = [host.receive('q', { waitMs: 5000 }), host.receive('q', { waitMs: 5000 })];
    payloads.bad.add(1);
    await sendOne(host, 'q', bytes(1));
    await sendOne(host, 'q', bytes(2));
    expect((await waiting[0])!.payload).toEqual(bytes(2));
    payloads.bad.delete(1);
    const queue = engine.queue('q')!;
    engine.fillPayload(queue.gen, 1, bytes(1));
    host.payloadRestored(queue);
    expect((await waiting[1])!.payload).toEqual(bytes(1));
  });

  it('the failure head moves on to the next failed message; peek of it answers 503 until repaired', async () => {
    const { payloads, engine, host, lost } = flakyHost();
    await host.createQueue('q', { maxRetries: 0 });
    for (let i = 1; i <= 2; i++) await sendOne(host, 'q', bytes(i));
    for (let i = 1; i <= 2; i++) await host.nack((await recvNow(host, 'q')).lease);
    const handle = host.listMessages('q', { limit: 10, withHandles: true }).items[0]!.handle!;
    const oldHead = host.failureHead('q')!;
    expect(oldHead.messageId).toBe(messageIdOf(1));
    payloads.bad.add(1);
    expect(host.failureHead('q')!.messageId).toBe(messageIdOf(2));
    expect(lost).toEqual([1]);
    expect(host.stats({ limit: 10 }).stats).toMatchObject({ failed: 1, unavailable: 1 });
    const listed = host.listMessages('q', { state: 'unavailable', limit: 10, withHandles: false });
    expect(listed.items.map((m) => m.id)).toEqual([messageIdOf(1)]);
    expect(() => host.peek(handle)).toThrow(expect.objectContaining({ kind: 'unavailable' }) as Error);
    expect(host.failureHead('q')!.messageId).toBe(messageIdOf(2));
    expect(lost).toEqual([1]); // reads of the copy being fetched are no new failures
    // Repaired: the head again, and its old failure lease still settles it.
    payloads.bad.delete(1);
    engine.fillPayload(engine.queue('q')!.gen, 1, bytes(1));
    expect(host.failureHead('q')!.messageId).toBe(messageIdOf(1));
    await host.discard({ lease: oldHead.lease });
    expect(host.stats({ limit: 10 }).stats).toMatchObject({ failed: 1, unavailable: 0 });
  });
});
