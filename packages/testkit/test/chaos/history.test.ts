// The history: invoke/complete pairing, bounds and misuse, windows, JSONL round trips and the
// errors a malformed file gives.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  History,
  eventsToJsonl,
  formatOperation,
  monotonicEpochMs,
  parseHistoryJsonl,
} from '../../src/chaos/history.js';
import { readHistoryFile, writeHistoryFile } from '../../src/chaos/history-file.js';

function clocked(): { history: History; at: (ms: number) => void } {
  let now = 1_000;
  return { history: new History({ nowMs: () => now, opsMax: 3 }), at: (ms) => (now = ms) };
}

describe('History', () => {
  it('pairs invokes with completions in invocation order, with their times', () => {
    const { history, at } = clocked();
    const send = history.invoke('p0', 'send', { queue: 'q', payload: 'p:p0:1' });
    at(1_005);
    const recv = history.invoke('c0', 'recv', { queue: 'q' });
    at(1_010);
    history.ok(recv, { status: 204 });
    at(1_020);
    history.info(send, { error: 'timeout' });
    const ops = history.operations();
    const summary = ops.map((o) => [
      o.invoke.op,
      o.invoke.kind,
      o.invoke.atMs,
      o.completion?.type,
      o.completion?.atMs,
    ]);
    expect(summary).toEqual([
      [0, 'send', 1_000, 'info', 1_020],
      [1, 'recv', 1_005, 'ok', 1_010],
    ]);
    expect(history.events().map((e) => e.type)).toEqual(['invoke', 'invoke', 'ok', 'info']);
  });

  it('keeps an operation without completion as in flight', () => {
    const { history } = clocked();
    history.invoke('c0', 'ack', { lease: 'L' });
    expect(history.operations()[0]?.completion).toBeUndefined();
    expect(formatOperation(history.operations()[0]!)).toContain('"type":"pending"');
  });

  it('is bounded, and refuses double or unknown completions', () => {
    const { history } = clocked();
    const op = history.invoke('c0', 'recv');
    history.fail(op, { status: 404 });
    expect(() => history.ok(op)).toThrow(/completed twice/);
    expect(() => history.ok(7)).toThrow(/unknown op/);
    history.invoke('c0', 'recv');
    history.invoke('c0', 'recv');
    expect(history.full).toBe(true);
    expect(() => history.invoke('c0', 'recv')).toThrow(/more than 3/);
  });

  it('records failover windows and refuses inverted ones', () => {
    const { history } = clocked();
    history.markWindow('kill m1', 10, 20);
    const window = { type: 'window', label: 'kill m1', startMs: 10, endMs: 20 };
    expect(history.events()).toEqual([window]);
    expect(() => history.markWindow('bad', 20, 10)).toThrow(/ends before/);
  });

  it('round-trips through JSONL, windows included', () => {
    const { history, at } = clocked();
    const op = history.invoke('c0', 'recv', { queue: 'q' });
    at(1_002.5);
    const leaseExpiresAt = '2026-01-01T00:00:00.000Z';
    const payload = 'p:"q"\n';
    history.ok(op, { status: 200, messageId: 'm1', payload, lease: 'L', leaseExpiresAt });
    history.markWindow('pause', 1, 2);
    const text = history.toJsonl();
    expect(text.split('\n')).toHaveLength(4);
    const again = History.fromEvents(parseHistoryJsonl(text));
    expect(again.events()).toEqual(history.events());
    expect(eventsToJsonl(again.events())).toBe(text);
  });

  it('names the line of a malformed history', () => {
    expect(() => parseHistoryJsonl('{"type":"invoke"}\n')).toThrow(/line 1: bad op number/);
    expect(() => parseHistoryJsonl('\nnot json\n')).toThrow(/line 2: not JSON/);
    const invoke = '{"type":"invoke","op":0,"client":"c","kind":"teleport","atMs":1}';
    expect(() => parseHistoryJsonl(invoke)).toThrow(/unknown kind/);
    const orphan = '{"type":"ok","op":0,"atMs":1}';
    expect(() => History.fromEvents(parseHistoryJsonl(orphan))).toThrow(/without a pending invoke/);
    const skipped = '{"type":"invoke","op":1,"client":"c","kind":"recv","atMs":1}';
    expect(() => History.fromEvents(parseHistoryJsonl(skipped))).toThrow(/op 0 was due/);
  });

  it('uses a monotonic clock on the epoch scale by default', () => {
    const before = Date.now();
    const a = monotonicEpochMs();
    const b = monotonicEpochMs();
    expect(b).toBeGreaterThanOrEqual(a);
    // The epoch scale, not time since start: close to the wall clock (a minute allows for drift).
    expect(Math.abs(a - before)).toBeLessThan(60_000);
  });
});

describe('history files', () => {
  it('writes and reads a history back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mq-history-'));
    try {
      const { history } = clocked();
      const op = history.invoke('p0', 'send', { queue: 'q', payload: 'p:1' });
      history.ok(op, { status: 201, messageId: 'm1' });
      const path = join(dir, 'run.jsonl');
      await writeHistoryFile(path, history);
      expect((await readHistoryFile(path)).events()).toEqual(history.events());
      await writeFile(path, '{"type":"ok","op":3,"atMs":1}\n');
      await expect(readHistoryFile(path)).rejects.toThrow(/without a pending invoke/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
