// Property-based tests of the engine as a whole: random sequences of operations and times,
// checking the invariants after every step, and that a replica applying the same logged commands
// (through the binary codec) reaches byte-identical snapshots.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCommand, encodeCommand } from '../src/command-codec.js';
import type { ApplyResult, Command } from '../src/commands.js';
import { SpoolEngine, internalState } from '../src/engine.js';
import { type Message, Where } from '../src/message.js';
import { resolvePlan } from '../src/plan.js';
import { RATE_LIMITED } from '../src/primary.js';
import type { Queue } from '../src/queue.js';
import { resolveSettings } from '../src/settings.js';
import { MemoryPayloadStore } from '../src/memory-payloads.js';
import { decodeSnapshot } from '../src/snapshot.js';
import { encodeReplicatedState, encodeSnapshot } from '../src/snapshot-writer.js';
import { PAYLOAD_MISSING } from '../src/payload-store.js';
import { T0, createQueue, newEngine, send } from './helpers.js';

const PLAN = resolvePlan({ retentionLimitSeconds: 120, messagesPerSpoolMax: 60, payloadBytesPerSpoolMax: 400, messageSizeMaxBytes: 40 });
const QUEUE_NAMES = ['a', 'b', 'c'];

type Op =
  | { op: 'send'; q: number; delayMs: number; dedup: number; size: number }
  | { op: 'receive'; q: number }
  | { op: 'settle'; pick: number; how: 'ack' | 'nack' | 'fail' | 'discard' | 'releaseNow' | 'release'; delayMs: number }
  | { op: 'renew'; pick: number }
  | { op: 'discardHandle'; pick: number }
  | { op: 'recover'; pick: number; delayMs: number }
  | { op: 'ackAndSend'; pick: number; q: number; dedup: number; size: number }
  | { op: 'advance'; ms: number }
  | { op: 'tick' }
  | { op: 'update'; q: number; field: 'dedup' | 'retention' | 'retries' | 'lease'; value: number }
  | { op: 'delete'; q: number; mode: 'force' | 'drain' }
  | { op: 'create'; q: number }
  // Replica-local: a payload found unreadable (dropped, or at receive), a good copy fetched.
  | { op: 'lose'; pick: number }
  | { op: 'receiveBad'; q: number }
  | { op: 'repair'; pick: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 18, arbitrary: fc.record({ op: fc.constant('send' as const), q: fc.nat(2), delayMs: fc.constantFrom(0, 0, 0, 500, 3000), dedup: fc.nat(5), size: fc.nat(40) }) },
  { weight: 18, arbitrary: fc.record({ op: fc.constant('receive' as const), q: fc.nat(2) }) },
  {
    weight: 18,
    arbitrary: fc.record({
      op: fc.constant('settle' as const),
      pick: fc.nat(),
      how: fc.constantFrom('ack' as const, 'nack' as const, 'fail' as const, 'discard' as const, 'releaseNow' as const, 'release' as const),
      delayMs: fc.constantFrom(0, 700),
    }),
  },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('renew' as const), pick: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('discardHandle' as const), pick: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('recover' as const), pick: fc.nat(), delayMs: fc.constantFrom(0, 400) }) },
  { weight: 6, arbitrary: fc.record({ op: fc.constant('ackAndSend' as const), pick: fc.nat(), q: fc.nat(2), dedup: fc.nat(5), size: fc.nat(40) }) },
  { weight: 12, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.constantFrom(1, 300, 1000, 2500, 20_000) }) },
  { weight: 9, arbitrary: fc.constant({ op: 'tick' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('update' as const),
      q: fc.nat(2),
      field: fc.constantFrom('dedup' as const, 'retention' as const, 'retries' as const, 'lease' as const),
      value: fc.nat(3),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), q: fc.nat(2), mode: fc.constantFrom('force' as const, 'drain' as const) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('create' as const), q: fc.nat(2) }) },
);

/** opArb with payload losses and repairs (replica-local: no log entries). */
const opWithLossArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 20, arbitrary: opArb },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('lose' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('receiveBad' as const), q: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('repair' as const), pick: fc.nat() }) },
);

interface Lease {
  readonly queueGen: number;
  readonly seq: number;
  readonly gen: number;
  readonly delivery: number;
  ended: boolean;
}

/** A primary driven by random operations; every logged command is recorded with its time. */
class Harness {
  readonly engine = new SpoolEngine(PLAN);
  readonly log: { command: Uint8Array; atMs: number; result: ApplyResult }[] = [];
  readonly leases: Lease[] = [];
  /** Payloads dropped here, by seq (what a peer would send back). */
  readonly lost = new Map<number, Uint8Array>();
  now = T0;

  constructor() {
    this.engine.openPrimary(T0);
    for (let i = 0; i < QUEUE_NAMES.length; i++) this.create(i);
  }

  apply(command: Command): ApplyResult {
    const result = this.engine.apply(command, this.now);
    this.log.push({ command: encodeCommand(command), atMs: this.now, result });
    return result;
  }

  queue(index: number): Queue | undefined {
    return this.engine.queue(QUEUE_NAMES[index]!);
  }

  create(index: number): void {
    const settings = resolveSettings(
      { leaseTimeoutSeconds: 2, maxRetries: 2, dedupWindowSeconds: 5, retentionSeconds: 60, ...(index === 2 ? { recvRateLimit: { intervalMicros: 500_000, burst: 2 } } : {}) },
      PLAN,
    );
    if (!('leaseTimeoutSeconds' in settings)) throw settings;
    this.apply({ type: 'createQueue', name: QUEUE_NAMES[index]!, settings });
  }

  liveLeases(): Lease[] {
    return this.leases.filter((lease) => !lease.ended);
  }

  allMessages(): { queue: Queue; message: Message }[] {
    const out: { queue: Queue; message: Message }[] = [];
    for (const queue of internalState(this.engine).queues.values()) for (const message of queue.order.liveMessages()) out.push({ queue, message });
    return out;
  }

  run(op: Op): void {
    switch (op.op) {
      case 'send': {
        const queue = this.queue(op.q);
        if (!queue) return;
        const dedupKey = op.dedup > 0 && queue.settings.dedupWindowSeconds > 0 ? new Uint8Array(16).fill(op.dedup) : null;
        this.apply({ type: 'send', queueGen: queue.gen, delayMs: op.delayMs, dedupKey, payload: new Uint8Array(op.size).fill(op.size) });
        return;
      }
      case 'receive':
        return this.receive(op.q);
      case 'settle':
        return this.settle(op);
      case 'renew': {
        const lease = this.pickLease(op.pick);
        if (!lease) return;
        const found = this.engine.resolveLease(lease.queueGen, lease.seq, lease.gen, lease.delivery, this.now);
        if (typeof found !== 'string') this.engine.renew(this.engine.queueByGen(lease.queueGen)!, found, this.now);
        return;
      }
      case 'discardHandle': {
        const candidates = this.allMessages().filter(({ message }) => message.where !== Where.Leased);
        const target = candidates[op.pick % Math.max(1, candidates.length)];
        if (!target) return;
        expect(this.apply({ type: 'discard', queueGen: target.queue.gen, seq: target.message.seq, gen: target.message.gen }).kind).toBe('ok');
        return;
      }
      case 'recover': {
        const failed = this.allMessages().filter(({ message }) => message.where === Where.Failed);
        const target = failed[op.pick % Math.max(1, failed.length)];
        if (!target) return;
        const { queue, message } = target;
        expect(this.apply({ type: 'recover', queueGen: queue.gen, seq: message.seq, gen: message.gen, delayMs: op.delayMs }).kind).toBe('ok');
        expect(message.retries).toBe(0);
        return;
      }
      case 'ackAndSend': {
        const lease = this.pickLease(op.pick);
        const target = this.queue(op.q);
        if (!lease || !target) return;
        const found = this.engine.resolveLease(lease.queueGen, lease.seq, lease.gen, lease.delivery, this.now);
        if (typeof found === 'string') return;
        const dedupKey = op.dedup > 0 && target.settings.dedupWindowSeconds > 0 ? new Uint8Array(16).fill(op.dedup) : null;
        const result = this.apply({ type: 'ackAndSend', ...lease, targetGen: target.gen, delayMs: 0, dedupKey, payload: new Uint8Array(op.size) });
        if (result.kind === 'appended') lease.ended = true;
        else expect(found.where).toBe(Where.Leased); // refused: nothing acked, the lease still holds
        return;
      }
      case 'advance':
        this.now += op.ms;
        return;
      case 'tick':
        return this.tick();
      case 'update': {
        const queue = this.queue(op.q);
        if (!queue) return;
        const change =
          op.field === 'dedup' ? { dedupWindowSeconds: op.value * 2 }
          : op.field === 'retention' ? { retentionSeconds: 60 + op.value * 20 }
          : op.field === 'retries' ? { maxRetries: op.value }
          : { leaseTimeoutSeconds: op.value };
        this.apply({ type: 'updateQueue', queueGen: queue.gen, change });
        return;
      }
      case 'delete': {
        const queue = this.queue(op.q);
        if (queue) this.apply({ type: 'deleteQueue', queueGen: queue.gen, mode: op.mode });
        return;
      }
      case 'create':
        if (!this.queue(op.q)) this.create(op.q);
        return;
      case 'lose':
        return this.lose(op.pick);
      case 'receiveBad':
        return this.receiveBad(op.q);
      case 'repair':
        return this.repair(op.pick);
    }
  }

  lose(pick: number): void {
    const held = this.allMessages().filter(({ message }) => message.location !== PAYLOAD_MISSING);
    const target = held[pick % Math.max(1, held.length)];
    if (!target) return;
    this.lost.set(target.message.seq, this.engine.payloadOf(target.message));
    this.engine.dropPayload(target.queue, target.message);
  }

  /** A receive whose payload read fails: the lease is withdrawn, the next receive goes on. */
  receiveBad(index: number): void {
    const queue = this.queue(index);
    if (!queue) return;
    const outcome = this.engine.receive(queue, this.now);
    if (outcome === null || outcome === RATE_LIMITED) return;
    const retries = outcome.retries;
    this.lost.set(outcome.seq, this.engine.payloadOf(outcome));
    this.engine.withdrawUnreadable(queue, outcome);
    expect(outcome.where).toBe(Where.Unavailable);
    expect(outcome.retries).toBe(retries);
  }

  repair(pick: number): void {
    const missing = this.allMessages().filter(({ message }) => this.lost.has(message.seq) && message.location === PAYLOAD_MISSING);
    const target = missing[pick % Math.max(1, missing.length)];
    if (!target) return;
    const { queue, message } = target;
    expect(this.engine.fillPayload(queue.gen, message.seq, this.lost.get(message.seq)!)).toBe(true);
    this.lost.delete(message.seq);
    expect(message.where).not.toBe(Where.Unavailable);
  }

  pickLease(pick: number): Lease | undefined {
    const live = this.liveLeases();
    return live[pick % Math.max(1, live.length)];
  }

  receive(index: number): void {
    const queue = this.queue(index);
    if (!queue) return;
    // Expected: the visible message first in send order, unless its retention is due.
    const candidates = queue.order
      .liveMessages()
      .filter((m) => m.where !== Where.Leased && m.where !== Where.Failed && m.visibleAtMs <= this.now)
      .filter((m) => m.location !== PAYLOAD_MISSING)
      .filter((m) => !(queue.retentionMs > 0 && m.retentionStartMs + queue.retentionMs <= this.now));
    const outcome = this.engine.receive(queue, this.now);
    if (outcome === RATE_LIMITED) {
      expect(candidates.length).toBeGreaterThan(0);
      return;
    }
    if (outcome === null) {
      expect(candidates).toEqual([]);
      return;
    }
    expect(outcome.seq).toBe(candidates[0]?.seq);
    this.leases.push({ queueGen: queue.gen, seq: outcome.seq, gen: outcome.gen, delivery: outcome.deliveries, ended: false });
  }

  settle(op: Extract<Op, { op: 'settle' }>): void {
    const lease = this.pickLease(op.pick);
    if (!lease) return;
    const found = this.engine.resolveLease(lease.queueGen, lease.seq, lease.gen, lease.delivery, this.now);
    if (typeof found === 'string') {
      lease.ended = true;
      return;
    }
    const queue = this.engine.queueByGen(lease.queueGen)!;
    const { queueGen, seq, gen } = lease;
    if (op.how === 'releaseNow') this.engine.releaseNow(queue, found);
    else if (op.how === 'release') expect(this.apply({ type: 'release', queueGen, seq, gen, delayMs: op.delayMs }).kind).toBe('ok');
    else expect(this.apply({ type: op.how, queueGen, seq, gen }).kind).toBe('ok');
    lease.ended = true;
  }

  tick(): void {
    for (const queue of [...internalState(this.engine).queues.values()]) {
      const timedOut: Message[] = [];
      this.engine.collectTimedOutLeases(queue, this.now, timedOut, 1000);
      for (const message of timedOut) {
        expect(this.apply({ type: 'nack', queueGen: queue.gen, seq: message.seq, gen: message.gen }).kind).toBe('ok');
      }
      if (!this.engine.queueByGen(queue.gen)) continue;
      const seqs: number[] = [];
      const gens: number[] = [];
      this.engine.collectExpired(queue, this.now, seqs, gens, 1000);
      for (const seq of seqs) expect(queue.order.find(seq)!.where).not.toBe(Where.Leased);
      if (seqs.length > 0) {
        const result = this.apply({ type: 'expire', queueGen: queue.gen, seqs, gens });
        expect(result).toEqual({ kind: 'expired', count: seqs.length });
      }
    }
    // Nothing past retention survives a tick unless a lease holds it.
    for (const { queue, message } of this.allMessages()) {
      if (queue.retentionMs === 0 || message.where === Where.Leased) continue;
      expect(message.retentionStartMs + queue.retentionMs).toBeGreaterThan(this.now);
    }
  }

  /** Invariants that hold after every step. */
  check(): void {
    const engine = this.engine;
    let totalMessages = 0;
    let totalBytes = 0;
    for (const queue of internalState(engine).queues.values()) {
      const messages = queue.order.liveMessages();
      const c = engine.queueCounts(queue, this.now);
      const byState = { delayed: 0, visible: 0, pending: 0, failed: 0, unavailable: 0 };
      let bytes = 0;
      for (const m of messages) {
        expect(m.where).not.toBe(Where.Removed);
        const state = engine.messageState(m, this.now);
        byState[state]++;
        bytes += m.byteLength;
        if (m.location !== PAYLOAD_MISSING) expect(engine.payloadOf(m).byteLength).toBe(m.byteLength);
        // Unavailable exactly when this replica lacks the payload of a visible or failed message.
        const held = state === 'pending' || state === 'delayed' || m.where === Where.Expiring;
        if (!held) expect(state === 'unavailable').toBe(m.location === PAYLOAD_MISSING);
      }
      // Each message in exactly one state; per-state counts add up to total; dataBytes matches.
      expect({ total: c.total, dataBytes: c.dataBytes, ...byState }).toEqual({
        total: messages.length,
        dataBytes: bytes,
        delayed: c.delayed,
        visible: c.visible,
        pending: c.pending,
        failed: c.failed,
        unavailable: c.unavailable,
      });
      expect(c.delayed + c.visible + c.pending + c.failed + c.unavailable).toBe(c.total);
      totalMessages += messages.length;
      totalBytes += bytes;
      expect(queue.order.liveCount).toBe(messages.length);
      if (queue.state === 'draining') expect(queue.total).toBeGreaterThan(0);
    }
    expect(internalState(engine).messageCount).toBe(totalMessages);
    expect(internalState(engine).byteCount).toBe(totalBytes);
    expect(totalMessages).toBeLessThanOrEqual(PLAN.messagesPerSpoolMax);
    expect(totalBytes).toBeLessThanOrEqual(PLAN.payloadBytesPerSpoolMax);
    // No lease outlives its settlement; at most one live lease per message; every pending
    // message is held by exactly one lease (or its lease has just expired).
    // Messages are handles (columns hold the message): keyed by queue generation and seq.
    const holders = new Map<string, number>();
    for (const lease of this.leases) {
      const found = engine.resolveLease(lease.queueGen, lease.seq, lease.gen, lease.delivery, this.now);
      if (typeof found === 'string') continue;
      expect(lease.ended).toBe(false);
      const key = `${lease.queueGen}/${found.seq}`;
      holders.set(key, (holders.get(key) ?? 0) + 1);
    }
    for (const { queue, message } of this.allMessages()) {
      const held = holders.get(`${queue.gen}/${message.seq}`) ?? 0;
      expect(held).toBeLessThanOrEqual(1);
      if (message.where === Where.Leased && message.leaseExpiresAtMs > this.now) expect(held).toBe(1);
      if (message.where !== Where.Leased) expect(held).toBe(0);
    }
  }
}

function replay(log: Harness['log'], from = 0, engine = new SpoolEngine(PLAN)): SpoolEngine {
  for (let i = from; i < log.length; i++) {
    const entry = log[i]!;
    const result = engine.apply(decodeCommand(entry.command), entry.atMs);
    expect(result).toEqual(entry.result);
  }
  return engine;
}

describe('engine (properties)', () => {
  it('keeps its invariants after every step of random operations, payload losses included', () => {
    fc.assert(
      fc.property(fc.array(opWithLossArb, { minLength: 50, maxLength: 250, size: 'max' }), (ops) => {
        const harness = new Harness();
        for (const op of ops) {
          harness.run(op);
          harness.check();
        }
      }),
      { numRuns: 80 },
    );
  });

  it('replicas applying the same log (through the codec) reach identical snapshots', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 50, maxLength: 250, size: 'max' }), (ops) => {
        const harness = new Harness();
        for (const op of ops) harness.run(op);
        const replica = replay(harness.log);
        expect(encodeSnapshot(internalState(replica))).toEqual(encodeSnapshot(internalState(harness.engine)));
      }),
      { numRuns: 150 },
    );
  });

  it('payloads lost and repaired on one replica change no replicated result or state', () => {
    fc.assert(
      fc.property(fc.array(opWithLossArb, { minLength: 50, maxLength: 250, size: 'max' }), (ops) => {
        const harness = new Harness();
        for (const op of ops) harness.run(op);
        // replay checks every logged result against the one the lossy primary got.
        const replica = replay(harness.log);
        expect(encodeReplicatedState(internalState(replica))).toEqual(encodeReplicatedState(internalState(harness.engine)));
      }),
      { numRuns: 150 },
    );
  });

  it('snapshots round-trip at any point, and a replica restored from one continues identically', () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 50, maxLength: 200, size: 'max' }), fc.nat(), (ops, cut) => {
        const harness = new Harness();
        const split = cut % (ops.length + 1);
        ops.slice(0, split).forEach((op) => harness.run(op));
        const bytes = encodeSnapshot(internalState(harness.engine));
        expect(encodeSnapshot(decodeSnapshot(bytes, PLAN))).toEqual(bytes);
        const logged = harness.log.length;
        ops.slice(split).forEach((op) => harness.run(op));
        const restored = replay(harness.log, logged, new SpoolEngine(PLAN, decodeSnapshot(bytes, PLAN)));
        expect(encodeSnapshot(internalState(restored))).toEqual(encodeSnapshot(internalState(harness.engine)));
      }),
      { numRuns: 100 },
    );
  });

  it('a snapshot begun at any point and encoded in slices while operations go on equals the snapshot at its start', () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { minLength: 20, maxLength: 200, size: 'max' }),
        fc.array(fc.tuple(opArb, fc.integer({ min: 1, max: 400 })), { minLength: 1, maxLength: 200, size: 'max' }),
        (before, during) => {
          const harness = new Harness();
          before.forEach((op) => harness.run(op));
          const expected = encodeSnapshot(internalState(harness.engine));
          const work = harness.engine.beginSnapshot();
          const chunks: Uint8Array[] = [];
          let done = false;
          for (const [op, budgetBytes] of during) {
            harness.run(op);
            harness.check();
            if (done) continue;
            const slice = work.step(budgetBytes);
            chunks.push(slice.chunk);
            done = slice.done;
          }
          if (!done) chunks.push(work.step(Infinity).chunk);
          expect(new Uint8Array(Buffer.concat(chunks))).toEqual(expected);
          expect(internalState(harness.engine).snapshotGuard).toBeNull();
          // The state went on as if no snapshot had been taken.
          expect(encodeSnapshot(internalState(replay(harness.log)))).toEqual(encodeSnapshot(internalState(harness.engine)));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a new primary opened from a snapshot keeps the invariants while operations continue', () => {
    fc.assert(
      fc.property(fc.array(opWithLossArb, { minLength: 20, maxLength: 120, size: 'max' }), fc.array(opWithLossArb, { minLength: 20, maxLength: 120, size: 'max' }), (before, after) => {
        const first = new Harness();
        before.forEach((op) => first.run(op));
        const second = new Harness();
        const payloads = (internalState(first.engine).payloads as MemoryPayloadStore).clone();
        const restored = decodeSnapshot(encodeSnapshot(internalState(first.engine)), PLAN, payloads);
        (second as { engine: SpoolEngine }).engine = new SpoolEngine(PLAN, restored);
        second.now = first.now;
        second.engine.openPrimary(second.now);
        second.check();
        for (const op of after) {
          second.run(op);
          second.check();
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('engine.walkMessages', () => {
  it('visits queues in generation order and resumes after its cursor', () => {
    const engine = newEngine();
    // Created b before a: the walk goes by generation, not by name.
    const b = createQueue(engine, 'b');
    const a = createQueue(engine, 'a');
    const sent = [send(engine, b, T0), send(engine, a, T0), send(engine, b, T0)];
    const seen: [string, number][] = [];
    const cursor = { queueGen: 0, seq: 0 };
    const stopAfterTwo = (queue: Queue, message: Message): boolean => {
      if (seen.length === 2) return false;
      seen.push([queue.name, message.seq]);
      return true;
    };
    expect(engine.walkMessages(cursor, stopAfterTwo)).toBe(false);
    expect(cursor).toEqual({ queueGen: b.gen, seq: sent[2] });
    seen.length = 0;
    expect(engine.walkMessages(cursor, stopAfterTwo)).toBe(true);
    expect(seen).toEqual([['a', sent[1]]]);
    expect(engine.findMessage(sent[1]!)?.seq).toBe(sent[1]);
    expect(engine.messageByGen(a.gen, sent[0]!)).toBeUndefined();
  });
});
