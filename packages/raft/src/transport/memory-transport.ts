// In-process network for tests: one MemoryNetwork, one transport per member, and fault
// injection (partitions, one-way cuts, loss, delay/reordering, duplication). Delivery is always
// asynchronous (never inside `send`), so a handler is never re-entered by its own send.

import assert from 'node:assert/strict';
import type { GroupId, Message, NodeId, Transport } from '../types.js';
import { defined } from '../core/assert.js';
import { Prng } from '../prng.js';
import { decodeFrame, encodeFrame } from './message-codec.js';

export interface MemoryNetworkOptions {
  /** Seed of the PRNG deciding drops, duplicates and delays (default 1): runs replay exactly. */
  readonly seed?: number;
  /** Round-trip every message through the protobuf codec, as the gRPC transport does. */
  readonly encode?: boolean;
}

export interface MemoryNetworkStats {
  readonly sent: number;
  readonly delivered: number;
  /** Lost to a cut link, the drop rate, an absent or closed receiver. */
  readonly dropped: number;
  readonly duplicated: number;
}

type Handler = (group: GroupId, message: Message) => void;

export class MemoryNetwork {
  private readonly transports = new Map<NodeId, MemoryTransport>();
  /** Cut links as `from\u0000to`. */
  private readonly cuts = new Set<string>();
  private readonly random: () => number;
  private readonly encode: boolean;
  private dropRate = 0;
  private duplicateRate = 0;
  private delayMsMin = 0;
  private delayMsMax = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private nextTurn: Array<{ to: NodeId; from: NodeId; group: GroupId; message: Message }> = [];
  private nextTurnScheduled = false;
  private counters = { sent: 0, delivered: 0, dropped: 0, duplicated: 0 };

  constructor(options: MemoryNetworkOptions = {}) {
    const prng = new Prng(options.seed ?? 1);
    this.random = () => prng.next();
    this.encode = options.encode ?? false;
  }

  /**
   * A new transport for member `id`. A previous transport of `id` is closed: this is the member
   * restarting, and messages to `id` go to the new one from now on.
   */
  transport(id: NodeId): Transport {
    this.transports.get(id)?.closeNow();
    const transport = new MemoryTransport(id, this);
    this.transports.set(id, transport);
    return transport;
  }

  /** Cuts every link between the members of `a` and those of `b`, both ways. */
  partition(a: NodeId | readonly NodeId[], b: NodeId | readonly NodeId[]): void {
    for (const x of typeof a === 'string' ? [a] : a) {
      for (const y of typeof b === 'string' ? [b] : b) {
        this.cut(x, y);
        this.cut(y, x);
      }
    }
  }

  /** Cuts the link from `from` to `to` only (asymmetric failure). */
  cut(from: NodeId, to: NodeId): void {
    this.cuts.add(`${from}\u0000${to}`);
  }

  /** Cuts `id` from every other member, both ways, including members that join later. */
  isolate(id: NodeId): void {
    this.cuts.add(`${id}\u0000*`);
    this.cuts.add(`*\u0000${id}`);
  }

  /** Restores every link (rates and delays stay as set). */
  heal(): void {
    this.cuts.clear();
  }

  /** Probability in [0, 1] that a message is lost. */
  setDropRate(rate: number): void {
    assert(rate >= 0 && rate <= 1, 'drop rate in [0, 1]');
    this.dropRate = rate;
  }

  /** Probability in [0, 1] that a message is delivered twice. */
  setDuplicateRate(rate: number): void {
    assert(rate >= 0 && rate <= 1, 'duplicate rate in [0, 1]');
    this.duplicateRate = rate;
  }

  /**
   * Delays each delivery by a uniform random time in [minMs, maxMs] (0, 0: the next turn, in
   * order). Different delays reorder messages.
   */
  setDelay(minMs: number, maxMs: number): void {
    assert(minMs >= 0 && maxMs >= minMs, 'delay range');
    this.delayMsMin = minMs;
    this.delayMsMax = maxMs;
  }

  stats(): MemoryNetworkStats {
    return { ...this.counters };
  }

  /** Closes every transport and drops whatever is in flight. */
  async close(): Promise<void> {
    for (const transport of this.transports.values()) transport.closeNow();
    this.transports.clear();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.nextTurn = [];
  }

  /** @internal Called by MemoryTransport.send. */
  route(from: NodeId, group: GroupId, messages: readonly Message[]): void {
    const carried = this.encode
      ? defined(decodeFrame(encodeFrame([{ group, messages }]))[0], 'one batch').messages
      : messages;
    for (const message of carried) {
      this.counters.sent++;
      if (this.isCut(from, message.to) || this.random() < this.dropRate) {
        this.counters.dropped++;
        continue;
      }
      const copies = this.random() < this.duplicateRate ? 2 : 1;
      if (copies === 2) this.counters.duplicated++;
      for (let copy = 0; copy < copies; copy++) this.schedule(from, group, message);
    }
  }

  private schedule(from: NodeId, group: GroupId, message: Message): void {
    const delayMs = this.delayMsMin + (this.delayMsMax - this.delayMsMin) * this.random();
    if (delayMs <= 0) {
      this.nextTurn.push({ from, to: message.to, group, message });
      if (!this.nextTurnScheduled) {
        this.nextTurnScheduled = true;
        setImmediate(() => this.deliverNextTurn());
      }
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.deliver(from, group, message);
    }, delayMs);
    this.timers.add(timer);
  }

  private deliverNextTurn(): void {
    this.nextTurnScheduled = false;
    const due = this.nextTurn;
    this.nextTurn = [];
    let failure: unknown = null;
    for (const item of due) {
      try {
        this.deliver(item.from, item.group, item.message);
      } catch (error) {
        failure ??= error;
      }
    }
    // A throwing handler is a bug in the receiver: deliver the rest, then surface it.
    if (failure !== null) throw failure;
  }

  private deliver(from: NodeId, group: GroupId, message: Message): void {
    const target = this.transports.get(message.to);
    // Links are checked again on arrival: a partition made while a message is in flight loses it.
    if (!target || this.isCut(from, message.to) || !target.accepts()) {
      this.counters.dropped++;
      return;
    }
    this.counters.delivered++;
    target.receive(group, message);
  }

  private isCut(from: NodeId, to: NodeId): boolean {
    if (this.cuts.size === 0) return false;
    return (
      this.cuts.has(`${from}\u0000${to}`) ||
      this.cuts.has(`${from}\u0000*`) ||
      this.cuts.has(`*\u0000${to}`)
    );
  }
}

class MemoryTransport implements Transport {
  private handler: Handler | null = null;
  private closed = false;

  constructor(
    readonly id: NodeId,
    private readonly network: MemoryNetwork,
  ) {}

  /** Queues `messages` (each addressed by its `to`) for delivery on a later turn. Never throws. */
  send(group: GroupId, messages: readonly Message[]): void {
    if (this.closed || messages.length === 0) return;
    this.network.route(this.id, group, messages);
  }

  onMessage(handler: Handler): void {
    this.handler = handler;
  }

  async close(): Promise<void> {
    this.closeNow();
  }

  closeNow(): void {
    this.closed = true;
    this.handler = null;
  }

  accepts(): boolean {
    return !this.closed && this.handler !== null;
  }

  receive(group: GroupId, message: Message): void {
    const handler = this.handler;
    assert(handler !== null, 'a receiving endpoint has a handler');
    handler(group, message);
  }
}
