// A correct queue service, simulated one operation at a time, that writes the history a client
// would record of it. Property tests feed it random actions (including lost answers, lease
// expiry, delays, dedup retries and primary changes) and expect the checker to find nothing.

import {
  History,
  type CompletionFields,
  type InvokeFields,
  type OpKind,
} from '../../src/chaos/history.js';
import type { FinalState } from '../../src/chaos/final-state.js';
import { BASE_MS, iso } from './synthetic.js';

export type Answer = 'ok' | 'lostApplied' | 'lostDropped';

export const SETTLE_KINDS = [
  'ack',
  'nack',
  'release',
  'releaseDelay',
  'fail',
  'discard',
  'renew',
  'ackAndSend',
] as const;
export type SettleKind = (typeof SETTLE_KINDS)[number];

export type Action =
  | {
      readonly t: 'send';
      readonly queue: number;
      readonly delay: boolean;
      readonly answer: Answer | 'refused';
    }
  | { readonly t: 'recv'; readonly queue: number }
  | {
      readonly t: 'settle';
      readonly pick: number;
      readonly kind: SettleKind;
      readonly answer: Answer;
    }
  | { readonly t: 'janitor'; readonly pick: number; readonly recover: boolean }
  | { readonly t: 'tick'; readonly ms: number }
  | { readonly t: 'primaryChange' };

/** q0: no dedup; q1: dedup window 60 s. Both: lease timeout 5 s, 2 retries. */
export const QUEUES = ['q0', 'q1'] as const;
const DEDUP_WINDOW_MS = 60_000;
const LEASE_TIMEOUT_MS = 5_000;
const RETRIES_MAX = 2;
const DELAY_MS = 1_000;
const STEP_MS = 2;
const UNCONFIRMED: CompletionFields = { status: 500, errorKind: 'operation_unconfirmed' };

interface Message {
  readonly id: string;
  readonly queue: string;
  readonly payload: string;
  state: 'visible' | 'delayed' | 'pending' | 'failed';
  visibleAtMs: number;
  retries: number;
  lease: { token: string; term: number; expiresAtMs: number } | undefined;
}

interface HeldLease {
  readonly token: string;
  readonly id: string;
  readonly queue: string;
  readonly term: number;
}

export class ReferenceQueue {
  private nowMs = 0;
  private term = 1;
  private seq = 0;
  private sends = 0;
  private leaseSeq = 0;
  private readonly messages = new Map<string, Message>();
  private readonly dedup = new Map<string, { id: string; atMs: number }>();
  private readonly held: HeldLease[] = [];
  readonly history = new History({ nowMs: () => BASE_MS + this.nowMs });

  run(actions: readonly Action[]): void {
    for (const action of actions) {
      this.expire();
      this.apply(action);
    }
    this.drain();
  }

  finalState(): FinalState {
    return {
      collectedAtMs: BASE_MS + this.nowMs,
      queues: QUEUES.map((name, i) => {
        const messages = [...this.messages.values()]
          .filter((m) => m.queue === name)
          .map((m) => ({ id: m.id, state: m.state, payload: m.payload }));
        const dedupWindowSeconds = i === 1 ? DEDUP_WINDOW_MS / 1000 : 0;
        return { name, dedupWindowSeconds, messages, stats: { total: messages.length } };
      }),
    };
  }

  private apply(action: Action): void {
    switch (action.t) {
      case 'send':
        return this.send(QUEUES[action.queue % QUEUES.length]!, action.delay, action.answer);
      case 'recv':
        this.recv(QUEUES[action.queue % QUEUES.length]!);
        return;
      case 'settle':
        return this.settle(action.pick, action.kind, action.answer);
      case 'janitor':
        return this.janitor(action.pick, action.recover);
      case 'tick':
        this.nowMs += action.ms;
        return;
      case 'primaryChange':
        return this.primaryChange();
    }
  }

  /** invoke now, effect one step later, answer one more step later. */
  private op(
    kind: OpKind,
    fields: InvokeFields,
    effect: () => [type: 'ok' | 'fail' | 'info', CompletionFields],
  ): void {
    const op = this.history.invoke('c1', kind, fields);
    this.nowMs += STEP_MS;
    const [type, completion] = effect();
    this.nowMs += STEP_MS;
    this.history[type](op, completion);
  }

  private send(queue: string, delay: boolean, answer: Answer | 'refused'): void {
    this.sends += 1;
    const payload = `p:c1:${this.sends}`;
    const dedupKey = queue === 'q1' ? `k:${this.sends}` : undefined;
    const fields: InvokeFields = {
      queue,
      payload,
      ...(dedupKey ? { dedupKey } : {}),
      ...(delay ? { delayMs: DELAY_MS } : {}),
    };
    this.op('send', fields, () => {
      if (answer === 'refused') return ['fail', { status: 503, errorKind: 'unavailable' }];
      if (answer === 'lostDropped') return ['info', { error: 'timeout' }];
      const [status, id] = this.append(queue, payload, dedupKey, delay);
      if (answer === 'lostApplied') return ['info', UNCONFIRMED];
      return ['ok', { status, messageId: id }];
    });
    // The client's rule: retry an unanswered send only with a dedup key, inside the window.
    if (answer.startsWith('lost') && dedupKey !== undefined) {
      this.op('send', fields, () => {
        const [status, id] = this.append(queue, payload, dedupKey, delay);
        return ['ok', { status, messageId: id }];
      });
    }
  }

  private append(
    queue: string,
    payload: string,
    key: string | undefined,
    delay: boolean,
  ): [number, string] {
    if (key !== undefined) {
      const hit = this.dedup.get(`${queue}/${key}`);
      if (hit !== undefined && this.nowMs - hit.atMs < DEDUP_WINDOW_MS) return [200, hit.id];
    }
    this.seq += 1;
    const id = `m${String(this.seq).padStart(6, '0')}`;
    const delayed = delay
      ? { state: 'delayed' as const, visibleAtMs: this.nowMs + DELAY_MS }
      : { state: 'visible' as const, visibleAtMs: this.nowMs };
    this.messages.set(id, { id, queue, payload, ...delayed, retries: 0, lease: undefined });
    if (key !== undefined) this.dedup.set(`${queue}/${key}`, { id, atMs: this.nowMs });
    return [201, id];
  }

  private recv(queue: string): boolean {
    let got = false;
    this.op('recv', { queue }, () => {
      const message = this.inQueue(queue).find((m) => m.state === 'visible');
      if (message === undefined) return ['ok', { status: 204 }];
      this.leaseSeq += 1;
      const token = `L${String(this.leaseSeq).padStart(16, '0')}`;
      message.state = 'pending';
      message.lease = { token, term: this.term, expiresAtMs: this.nowMs + LEASE_TIMEOUT_MS };
      this.held.push({ token, id: message.id, queue, term: this.term });
      got = true;
      return [
        'ok',
        {
          status: 200,
          messageId: message.id,
          payload: message.payload,
          lease: token,
          retries: message.retries,
          leaseExpiresAt: iso(message.lease.expiresAtMs),
        },
      ];
    });
    return got;
  }

  private settle(pick: number, kind: SettleKind, answer: Answer): void {
    if (this.held.length === 0) return;
    const index = pick % this.held.length;
    const lease = this.held[index]!;
    const opKind: OpKind = kind === 'releaseDelay' ? 'release' : kind;
    const other = QUEUES.find((q) => q !== lease.queue)!;
    const newPayload = kind === 'ackAndSend' ? `p:c1:${(this.sends += 1)}` : undefined;
    const fields: InvokeFields = {
      queue: kind === 'ackAndSend' ? other : lease.queue,
      messageId: lease.id,
      lease: lease.token,
      ...(kind === 'ackAndSend' ? { sourceQueue: lease.queue, payload: newPayload } : {}),
      ...(kind === 'releaseDelay' ? { delayMs: DELAY_MS } : {}),
    };
    if (kind !== 'renew' || answer !== 'ok') this.held.splice(index, 1);
    this.op(opKind, fields, () => {
      const message = this.messages.get(lease.id);
      if (message?.state !== 'pending' || message.lease?.token !== lease.token) {
        const reason = lease.term < this.term ? 'primary_changed' : 'settled';
        return ['fail', { status: 410, errorKind: 'gone', reason }];
      }
      if (answer === 'lostDropped') return ['info', { error: 'timeout' }];
      const result = this.settleEffect(message, kind, other, newPayload);
      return answer === 'ok' ? ['ok', result] : ['info', UNCONFIRMED];
    });
  }

  private settleEffect(
    message: Message,
    kind: SettleKind,
    other: string,
    newPayload: string | undefined,
  ): CompletionFields {
    switch (kind) {
      case 'ack':
      case 'discard':
        this.messages.delete(message.id);
        return { status: 204 };
      case 'ackAndSend': {
        this.messages.delete(message.id);
        const [status, id] = this.append(other, newPayload!, undefined, false);
        return { status, messageId: id };
      }
      case 'nack':
        this.nack(message);
        return { status: 204 };
      case 'release':
        this.toState(message, 'visible', this.nowMs);
        return { status: 204 };
      case 'releaseDelay':
        this.toState(message, 'delayed', this.nowMs + DELAY_MS);
        return { status: 204 };
      case 'fail':
        this.toState(message, 'failed', this.nowMs);
        return { status: 204 };
      case 'renew':
        message.lease!.expiresAtMs = this.nowMs + LEASE_TIMEOUT_MS;
        return { status: 204, leaseExpiresAt: iso(message.lease!.expiresAtMs) };
    }
  }

  private nack(message: Message): void {
    if (message.retries >= RETRIES_MAX) {
      this.toState(message, 'failed', this.nowMs);
      return;
    }
    message.retries += 1;
    this.toState(message, 'visible', this.nowMs);
  }

  private toState(message: Message, state: Message['state'], visibleAtMs: number): void {
    message.state = state;
    message.visibleAtMs = visibleAtMs;
    message.lease = undefined;
  }

  private janitor(pick: number, recover: boolean): void {
    const queue = QUEUES[pick % QUEUES.length]!;
    const failed = this.inQueue(queue).filter((m) => m.state === 'failed');
    this.op('listMessages', { queue, state: 'failed' }, () => [
      'ok',
      { status: 200, messages: failed.map((m) => ({ id: m.id, state: m.state })) },
    ]);
    const target = failed[pick % Math.max(1, failed.length)];
    if (target === undefined) return;
    const fields = { queue, messageId: target.id, handle: `H${target.id}` };
    this.op(recover ? 'recover' : 'discard', fields, () => {
      if (recover) {
        target.retries = 0;
        this.toState(target, 'visible', this.nowMs);
      } else {
        this.messages.delete(target.id);
      }
      return ['ok', { status: 204 }];
    });
  }

  /** A new primary: every pending message visible again, no retry spent; the harness flags it. */
  private primaryChange(): void {
    const startMs = this.nowMs;
    this.nowMs += 1_000;
    this.term += 1;
    for (const message of this.messages.values()) {
      if (message.state === 'pending') this.toState(message, 'visible', this.nowMs);
    }
    const label = `primary change to term ${this.term}`;
    this.history.markWindow(label, BASE_MS + startMs, BASE_MS + this.nowMs);
  }

  private inQueue(queue: string): Message[] {
    return [...this.messages.values()].filter((m) => m.queue === queue);
  }

  /** Lease timeouts (an automatic nack) and delays that ran out by now. */
  private expire(): void {
    for (const message of this.messages.values()) {
      const now = this.nowMs;
      if (message.state === 'pending' && message.lease!.expiresAtMs <= now) this.nack(message);
      if (message.state === 'delayed' && message.visibleAtMs <= now) message.state = 'visible';
    }
  }

  /** Waits out every lease and delay, then receives and acks until both queues are empty. */
  private drain(): void {
    this.nowMs += LEASE_TIMEOUT_MS + DELAY_MS + 1;
    this.expire();
    for (const queue of QUEUES) {
      for (let i = 0; i < 10_000 && this.recv(queue); i += 1) {
        const lease = this.held.pop()!;
        this.op('ack', { queue, messageId: lease.id, lease: lease.token }, () => {
          this.messages.delete(lease.id);
          return ['ok', { status: 204 }];
        });
      }
    }
  }
}
