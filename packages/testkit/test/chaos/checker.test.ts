// The checker on hand-written histories: every category in a passing and a violating variant,
// so each rule is shown both to accept correct behaviour and to catch the fault.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { check } from '../../src/chaos/checker.js';
import { parseHistoryJsonl } from '../../src/chaos/history.js';
import { formatReport, type CheckReport, type ViolationCategory } from '../../src/chaos/report.js';
import { type Action, type Answer, ReferenceQueue, SETTLE_KINDS } from './reference-queue.js';
import { BASE_MS, Script, finalState, iso } from './synthetic.js';

const TIMEOUT = { info: { error: 'timeout' } };
const UNCONFIRMED = { info: { status: 500, errorKind: 'operation_unconfirmed' } };

function gone(reason: string): { fail: { status: number; errorKind: string; reason: string } } {
  return { fail: { status: 410, errorKind: 'gone', reason } };
}

/** A send to dedup queue `d` under key k1. */
function keyed(payload: string): { queue: string; payload: string; dedupKey: string } {
  return { queue: 'd', payload, dedupKey: 'k1' };
}

function only(report: CheckReport, category: ViolationCategory, count = 1): void {
  const found = Object.fromEntries(
    Object.entries(report.violations)
      .filter(([, entry]) => entry.count > 0)
      .map(([name, entry]) => [name, entry.count]),
  );
  expect(found).toEqual({ [category]: count });
  expect(report.valid).toBe(false);
}

function clean(report: CheckReport): void {
  if (!report.valid) throw new Error(formatReport(report));
  expect(report.valid).toBe(true);
}

describe('check: lost', () => {
  it('passes when an acknowledged send is received and acked', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 20, 22);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('reports a 201 send never received nor listed', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    const report = check(s.history, finalState({ q: {} }));
    only(report, 'lost');
    expect(report.violations.lost.examples[0]?.messageId).toBe('m1');
    expect(report.violations.lost.examples[0]?.excerpt.join('\n')).toContain('"payload":"p:1"');
  });

  it('reports a ack-and-send 201 whose new message vanished', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    const fields = { queue: 'r', sourceQueue: 'q', payload: 'p:2', lease: 'L1', messageId: 'm1' };
    s.op('ackAndSend', fields, 20, 25, { ok: { status: 201, messageId: 'm2' } });
    only(check(s.history, finalState({ q: {}, r: {} })), 'lost');
  });

  it('reports a message received, nacked, then gone', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('nack', 'q', 'm1', 'L1', 20, 22);
    only(check(s.history, finalState({ q: {} })), 'lost');
  });

  it('counts a failed message that is listed failed as delivered', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('fail', 'q', 'm1', 'L1', 20, 22);
    clean(check(s.history, finalState({ q: { messages: [{ id: 'm1', state: 'failed' }] } })));
  });

  it('does not count a message whose ack got no answer', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.op('ack', { queue: 'q', messageId: 'm1', lease: 'L1' }, 20, 5_020, TIMEOUT);
    clean(check(s.history, finalState({ q: {} })));
  });
});

describe('check: resurrected', () => {
  it('passes a message received again after a nack', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('nack', 'q', 'm1', 'L1', 20, 22);
    s.received('q', 'm1', 'p:1', 'L2', 30, 32, 30_030);
    s.settled('ack', 'q', 'm1', 'L2', 40, 42);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('passes a receive invoked before the ack completed that returns the message', () => {
    // The ack may have been refused (it was not: then the receive could not get it), but the
    // check only judges receives invoked after the ack's answer.
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 20);
    const second = { messageId: 'm1', payload: 'p:1', lease: 'L2', leaseExpiresAt: iso(30_040) };
    s.op('recv', { queue: 'q' }, 15, 40, { ok: { status: 200, ...second } });
    s.op('ack', { queue: 'q', messageId: 'm1', lease: 'L1' }, 25, 30, gone('expired'));
    s.settled('ack', 'q', 'm1', 'L2', 45, 50);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('reports a message received after its ack answered 204', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 20, 22);
    s.received('q', 'm1', 'p:1', 'L2', 30, 32, 30_030);
    s.settled('ack', 'q', 'm1', 'L2', 40, 42);
    only(check(s.history, finalState({ q: {} })), 'resurrected');
  });

  it('reports a message listed at the end after its ack answered 204', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 20, 22);
    const final = finalState({ q: { messages: [{ id: 'm1', state: 'failed' }] } });
    only(check(s.history, final), 'resurrected');
  });

  it('reports a failed message delivered with no recover, and passes one recovered', () => {
    const run = (recover: boolean): CheckReport => {
      const s = new Script();
      s.sent('q', 'p:1', 'm1', 0, 5);
      s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
      s.settled('fail', 'q', 'm1', 'L1', 20, 22);
      const fields = { queue: 'q', messageId: 'm1', handle: 'H1' };
      if (recover) s.op('recover', fields, 25, 27, { ok: { status: 204 } });
      s.received('q', 'm1', 'p:1', 'L2', 30, 32, 30_030);
      s.settled('ack', 'q', 'm1', 'L2', 40, 42);
      return check(s.history, finalState({ q: {} }));
    };
    clean(run(true));
    only(run(false), 'resurrected');
  });
});

describe('check: double-leased', () => {
  function twoLeases(options: { firstExpiryMs: number; secondAtMs: number }): Script {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, options.firstExpiryMs);
    const atMs = options.secondAtMs;
    s.received('q', 'm1', 'p:1', 'L2', atMs - 2, atMs, atMs + 30_000);
    s.settled('ack', 'q', 'm1', 'L2', options.secondAtMs + 10, options.secondAtMs + 12);
    return s;
  }

  it('passes a second lease granted after the first expired', () => {
    const s = twoLeases({ firstExpiryMs: 1_000, secondAtMs: 1_200 });
    clean(check(s.history, finalState({ q: {} })));
  });

  it('reports a second lease while the first is live', () => {
    const s = twoLeases({ firstExpiryMs: 30_000, secondAtMs: 1_000 });
    const report = check(s.history, finalState({ q: {} }));
    only(report, 'doubleLeased');
    expect(report.violations.doubleLeased.examples[0]?.excerpt.length).toBeGreaterThanOrEqual(3);
  });

  it('passes a second lease after the first was released', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('release', 'q', 'm1', 'L1', 500, 502);
    s.received('q', 'm1', 'p:1', 'L2', 498, 510, 30_500);
    s.settled('ack', 'q', 'm1', 'L2', 520, 522);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('reports a second lease after the first expired but was renewed', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 1_000);
    s.op('renew', { queue: 'q', messageId: 'm1', lease: 'L1' }, 500, 505, {
      ok: { status: 204, leaseExpiresAt: iso(30_500) },
    });
    s.received('q', 'm1', 'p:1', 'L2', 1_500, 1_510, 31_500);
    s.settled('ack', 'q', 'm1', 'L2', 1_520, 1_522);
    only(check(s.history, finalState({ q: {} })), 'doubleLeased');
  });

  it('excuses overlapping leases across a flagged failover window', () => {
    const s = twoLeases({ firstExpiryMs: 30_000, secondAtMs: 1_000 });
    s.windowAt('kill member-1', 200, 900);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('does not excuse them for a window outside the two grants', () => {
    const s = twoLeases({ firstExpiryMs: 30_000, secondAtMs: 1_000 });
    s.windowAt('kill member-1', 5_000, 6_000);
    only(check(s.history, finalState({ q: {} })), 'doubleLeased');
  });

  it('excuses them when the first lease answered 410 primary_changed', () => {
    const s = twoLeases({ firstExpiryMs: 30_000, secondAtMs: 1_000 });
    s.op('ack', { queue: 'q', messageId: 'm1', lease: 'L1' }, 2_000, 2_010, {
      fail: { status: 410, errorKind: 'gone', reason: 'primary_changed' },
    });
    clean(check(s.history, finalState({ q: {} })));
  });

  it('does not excuse them for a 410 of another reason', () => {
    const s = twoLeases({ firstExpiryMs: 30_000, secondAtMs: 1_000 });
    s.op('ack', { queue: 'q', messageId: 'm1', lease: 'L1' }, 2_000, 2_010, {
      fail: { status: 410, errorKind: 'gone', reason: 'settled' },
    });
    only(check(s.history, finalState({ q: {} })), 'doubleLeased');
  });
});

describe('check: dedup', () => {
  const window = { dedupWindowSeconds: 60 };

  it('passes a retry answered 200 with the original id', () => {
    const s = new Script();
    s.op('send', keyed('p:1'), 0, 5_000, TIMEOUT);
    s.op('send', keyed('p:1'), 5_100, 5_110, { ok: { status: 200, messageId: 'm1' } });
    s.received('d', 'm1', 'p:1', 'L1', 6_000, 6_010, 36_000);
    s.settled('ack', 'd', 'm1', 'L1', 6_100, 6_110);
    const report = check(s.history, finalState({ d: window }));
    clean(report);
    expect(report.indeterminateSends.total).toBe(0);
  });

  it('reports a second 201 for one key inside the window', () => {
    const s = new Script();
    s.op('send', keyed('p:1'), 0, 5, { ok: { status: 201, messageId: 'm1' } });
    s.op('send', keyed('p:2'), 100, 105, { ok: { status: 201, messageId: 'm2' } });
    const visible = 'visible' as const;
    const listed = [{ id: 'm1', state: visible }, { id: 'm2', state: visible }];
    const final = finalState({ d: { ...window, messages: listed } });
    const report = check(s.history, final, { stuckGraceMs: 0 });
    expect(report.violations.dedupBroken.count).toBe(1);
    expect(report.violations.dedupBroken.examples[0]?.explanation).toContain('"k1"');
  });

  it('passes a second 201 for one key after the window', () => {
    const s = new Script();
    s.op('send', keyed('p:1'), 0, 5, { ok: { status: 201, messageId: 'm1' } });
    s.op('send', keyed('p:2'), 61_000, 61_005, { ok: { status: 201, messageId: 'm2' } });
    const listed = [{ id: 'm1', state: 'failed' as const }, { id: 'm2', state: 'failed' as const }];
    const final = finalState({ d: { ...window, messages: listed } });
    clean(check(s.history, final));
  });

  it('reports a keyed payload appended twice (a lost answer, then a 201 under a new id)', () => {
    const s = new Script();
    s.op('send', keyed('p:1'), 0, 5_000, UNCONFIRMED);
    s.op('send', keyed('p:1'), 5_100, 5_110, { ok: { status: 201, messageId: 'm2' } });
    s.received('d', 'm1', 'p:1', 'L1', 6_000, 6_010, 36_000);
    s.settled('ack', 'd', 'm1', 'L1', 6_100, 6_110);
    s.received('d', 'm2', 'p:1', 'L2', 6_200, 6_210, 36_200);
    s.settled('ack', 'd', 'm2', 'L2', 6_300, 6_310);
    only(check(s.history, finalState({ d: window })), 'dedupBroken');
  });
});

describe('check: duplicated', () => {
  it('passes one payload under one id', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 20, 22);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('reports an unkeyed payload delivered under two ids', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 20, 22);
    s.received('q', 'm2', 'p:1', 'L2', 30, 32, 30_000);
    s.settled('ack', 'q', 'm2', 'L2', 40, 42);
    only(check(s.history, finalState({ q: {} })), 'duplicated');
  });
});

describe('check: unexpected', () => {
  it('passes a payload whose first attempt was refused with 503 and whose retry landed', () => {
    const s = new Script();
    s.op('send', { queue: 'q', payload: 'p:1' }, 0, 5, { fail: { status: 503, errorKind: 'x' } });
    s.sent('q', 'p:1', 'm1', 10, 15);
    s.received('q', 'm1', 'p:1', 'L1', 20, 22, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 30, 32);
    clean(check(s.history, finalState({ q: {} })));
  });

  it('reports a received payload no send carried', () => {
    const s = new Script();
    s.received('q', 'm9', 'p:ghost', 'L1', 20, 22, 30_000);
    s.settled('ack', 'q', 'm9', 'L1', 30, 32);
    only(check(s.history, finalState({ q: {} })), 'unexpected');
  });

  it('reports the payload of a refused send that appeared', () => {
    const s = new Script();
    s.op('send', { queue: 'q', payload: 'p:1' }, 0, 5, { fail: { status: 400, errorKind: 'x' } });
    s.received('q', 'm1', 'p:1', 'L1', 20, 22, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 30, 32);
    only(check(s.history, finalState({ q: {} })), 'unexpected');
  });

  it('reports a message whose payload changed', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.sent('q', 'p:2', 'm2', 0, 5);
    s.received('q', 'm1', 'p:2', 'L1', 20, 22, 30_000);
    s.settled('ack', 'q', 'm1', 'L1', 30, 32);
    s.received('q', 'm2', 'p:2', 'L2', 40, 42, 30_000);
    s.settled('ack', 'q', 'm2', 'L2', 50, 52);
    const report = check(s.history, finalState({ q: {} }));
    expect(report.violations.unexpected.count).toBe(1);
    expect(report.violations.unexpected.examples[0]?.explanation).toContain('its send carried p:1');
  });

  it('reports a final message with a payload no send carried', () => {
    const s = new Script();
    const ghost = { id: 'm5', state: 'failed' as const, payload: 'p:ghost' };
    const final = finalState({ q: { messages: [ghost] } });
    const report = check(s.history, final);
    expect(report.violations.unexpected.count).toBe(1);
  });
});

describe('check: early', () => {
  function delayed(receiveAtMs: number): Script {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5, { delayMs: 2_000 });
    s.received('q', 'm1', 'p:1', 'L1', receiveAtMs - 5, receiveAtMs, receiveAtMs + 30_000);
    s.settled('ack', 'q', 'm1', 'L1', receiveAtMs + 10, receiveAtMs + 12);
    return s;
  }

  it('passes a delayed message received after its delay', () => {
    clean(check(delayed(2_050).history, finalState({ q: {} })));
  });

  it('reports a delayed message received before its delay', () => {
    only(check(delayed(1_000).history, finalState({ q: {} })), 'early');
  });

  it('reports a message received before its release delay, and passes one after', () => {
    const run = (receiveAtMs: number): CheckReport => {
      const s = new Script();
      s.sent('q', 'p:1', 'm1', 0, 5);
      s.received('q', 'm1', 'p:1', 'L1', 10, 12, 30_000);
      s.settled('release', 'q', 'm1', 'L1', 100, 102, { delayMs: 1_000 });
      s.received('q', 'm1', 'p:1', 'L2', receiveAtMs - 5, receiveAtMs, receiveAtMs + 30_000);
      s.settled('ack', 'q', 'm1', 'L2', receiveAtMs + 10, receiveAtMs + 12);
      return check(s.history, finalState({ q: {} }));
    };
    clean(run(1_150));
    only(run(500), 'early');
  });
});

describe('check: stuck', () => {
  function withFinal(message: Parameters<typeof finalState>[0]['q']): CheckReport {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    return check(s.history, finalState({ q: message }, 100_000));
  }

  it('passes failed messages and delayed ones not yet due', () => {
    clean(withFinal({ messages: [{ id: 'm1', state: 'failed' }] }));
    clean(withFinal({ messages: [{ id: 'm1', state: 'delayed', visibleAt: iso(150_000) }] }));
    clean(withFinal({ messages: [{ id: 'm1', state: 'pending', leaseExpiresAt: iso(101_000) }] }));
  });

  it('reports visible, long-due delayed and expired-pending messages', () => {
    only(withFinal({ messages: [{ id: 'm1', state: 'visible' }] }), 'stuck');
    const due = iso(10_000);
    only(withFinal({ messages: [{ id: 'm1', state: 'delayed', visibleAt: due }] }), 'stuck');
    only(withFinal({ messages: [{ id: 'm1', state: 'pending', leaseExpiresAt: due }] }), 'stuck');
    only(withFinal({ messages: [{ id: 'm1', state: 'pending' }] }), 'stuck');
  });
});

describe('check: counts', () => {
  it('reports stats total that disagrees with the listing', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    const final = finalState({ q: { messages: [{ id: 'm1', state: 'failed' }], total: 2 } });
    only(check(s.history, final), 'countMismatch');
  });

  it('passes a total inside the range the unanswered operations allow', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.op('send', { queue: 'q', payload: 'p:2' }, 10, 5_010, { info: { error: 'timeout' } });
    const listed = [{ id: 'm1', state: 'failed' as const }, { id: 'mx', state: 'failed' as const }];
    clean(check(s.history, finalState({ q: { messages: listed } })));
  });

  it('reports a listing with more messages than the history can explain', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    const listed = [{ id: 'm1', state: 'failed' as const }, { id: 'mx', state: 'failed' as const }];
    only(check(s.history, finalState({ q: { messages: listed } })), 'countMismatch');
  });
});

describe('check: indeterminate sends', () => {
  it('counts unanswered sends that appeared and that did not, without violations', () => {
    const s = new Script();
    s.op('send', { queue: 'q', payload: 'p:1' }, 0, 5_000, UNCONFIRMED);
    s.op('send', { queue: 'q', payload: 'p:2' }, 0, 5_000, TIMEOUT);
    s.op('send', { queue: 'q', payload: 'p:3' }, 0, 0, 'pending');
    s.received('q', 'm1', 'p:1', 'L1', 6_000, 6_010, 36_000);
    s.settled('ack', 'q', 'm1', 'L1', 6_100, 6_110);
    const report = check(s.history, finalState({ q: {} }));
    clean(report);
    expect(report.indeterminateSends).toEqual({ total: 3, appeared: 1, notAppeared: 2 });
    expect(report.counts.incomplete).toBe(1);
  });
});

describe('check: input forms', () => {
  it('gives the same verdict from the JSONL of a history as from the history', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    s.windowAt('pause member-2', 1, 2);
    const final = finalState({ q: {} });
    const direct = check(s.history, final);
    const replayed = check(parseHistoryJsonl(s.history.toJsonl()), final);
    expect(replayed).toEqual(direct);
    expect(direct.violations.lost.count).toBe(1);
  });

  it('formats a report with the header, categories and history lines', () => {
    const s = new Script();
    s.sent('q', 'p:1', 'm1', 0, 5);
    const text = formatReport(check(s.history, finalState({ q: {} })), ['seed 42']);
    expect(text.split('\n')[0]).toBe('seed 42');
    expect(text).toContain('INVALID (1 violation(s))');
    expect(text).toContain('lost: 1');
    expect(text).toContain(`"invokedMs":${BASE_MS}`);
  });

  it('refuses out-of-range options', () => {
    expect(() => check([], finalState({}), { examplesMax: -1 })).toThrow(/examplesMax/);
  });
});

describe('check: generated histories of a correct queue', () => {
  const answer = fc.constantFrom<Answer>('ok', 'ok', 'ok', 'lostApplied', 'lostDropped');
  const action: fc.Arbitrary<Action> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        t: fc.constant('send' as const),
        queue: fc.nat(1),
        delay: fc.boolean(),
        answer: fc.oneof(answer, fc.constant('refused' as const)),
      }),
    },
    { weight: 5, arbitrary: fc.record({ t: fc.constant('recv' as const), queue: fc.nat(1) }) },
    {
      weight: 5,
      arbitrary: fc.record({
        t: fc.constant('settle' as const),
        pick: fc.nat(20),
        kind: fc.constantFrom(...SETTLE_KINDS),
        answer,
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        t: fc.constant('janitor' as const),
        pick: fc.nat(20),
        recover: fc.boolean(),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('tick' as const),
        ms: fc.integer({ min: 1, max: 7_000 }),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ t: 'primaryChange' as const }) },
  );

  const actions = fc.array(action, { minLength: 20, maxLength: 120 });

  function simulate(actions: readonly Action[]): ReferenceQueue {
    const queue = new ReferenceQueue();
    queue.run(actions);
    return queue;
  }

  it('finds no violation', () => {
    fc.assert(
      fc.property(actions, (actions) => {
        const queue = simulate(actions);
        const report = check(queue.history, queue.finalState());
        if (!report.valid) throw new Error(formatReport(report));
      }),
      { numRuns: 300 },
    );
  });

  it('finds the loss when the one ack that removed a message is turned into a refusal', () => {
    fc.assert(
      fc.property(actions, fc.nat(), (actions, pick) => {
        const queue = simulate(actions);
        const events = queue.history.events();
        const ops = queue.history.operations();
        // Messages removed by exactly one operation, an ack answered ok (the drain makes many).
        const removals = new Map<string, number[]>();
        for (const { invoke } of ops) {
          const removal = ['ack', 'discard', 'ackAndSend'].includes(invoke.kind);
          if (!removal || invoke.messageId === undefined) continue;
          removals.set(invoke.messageId, [...(removals.get(invoke.messageId) ?? []), invoke.op]);
        }
        const candidates = [...removals.entries()].filter(([, list]) => {
          const op = ops[list[0]!]!;
          return list.length === 1 && op.invoke.kind === 'ack' && op.completion?.type === 'ok';
        });
        fc.pre(candidates.length > 0);
        const [victim, [victimOp]] = candidates[pick % candidates.length]!;
        const damaged = events.map((event) =>
          event.type === 'ok' && event.op === victimOp
            ? { ...event, type: 'fail' as const, status: 410, errorKind: 'gone', reason: 'settled' }
            : event,
        );
        const report = check(damaged, queue.finalState());
        expect(report.violations.lost.count).toBe(1);
        expect(report.violations.lost.examples[0]?.messageId).toBe(victim);
      }),
      { numRuns: 100 },
    );
  });
});
