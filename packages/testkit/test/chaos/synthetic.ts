// Hand-written histories for checker tests: each helper records one operation with explicit
// invoke and completion times (ms after BASE_MS), so scripts read as timelines.

import {
  History,
  type CompletionFields,
  type InvokeFields,
  type OpKind,
} from '../../src/chaos/history.js';
import type { FinalMessage, FinalState } from '../../src/chaos/final-state.js';

export const BASE_MS = 1_800_000_000_000;

/** RFC 3339 of BASE_MS + ms. */
export function iso(ms: number): string {
  return new Date(BASE_MS + ms).toISOString();
}

export type Answer =
  | { readonly ok: CompletionFields }
  | { readonly fail: CompletionFields }
  | { readonly info: CompletionFields }
  | 'pending';

export class Script {
  private clockMs = BASE_MS;
  readonly history = new History({ nowMs: () => this.clockMs });

  /** One operation invoked at `fromMs` and answered at `toMs` (both after BASE_MS). */
  op(
    kind: OpKind,
    fields: InvokeFields,
    fromMs: number,
    toMs: number,
    answer: Answer,
    client = 'c1',
  ): number {
    this.clockMs = BASE_MS + fromMs;
    const op = this.history.invoke(client, kind, fields);
    if (answer === 'pending') return op;
    this.clockMs = BASE_MS + toMs;
    if ('ok' in answer) this.history.ok(op, answer.ok);
    else if ('fail' in answer) this.history.fail(op, answer.fail);
    else this.history.info(op, answer.info);
    return op;
  }

  /** A send answered 201 with `id`. */
  sent(
    queue: string,
    payload: string,
    id: string,
    fromMs: number,
    toMs: number,
    extra: InvokeFields = {},
  ): void {
    const answer = { ok: { status: 201, messageId: id } };
    this.op('send', { queue, payload, ...extra }, fromMs, toMs, answer);
  }

  /** A receive answered 200; lease `L-<id>-<n>`-style tokens are up to the caller. */
  received(
    queue: string,
    id: string,
    payload: string,
    lease: string,
    fromMs: number,
    toMs: number,
    expiresAtMs?: number,
  ): void {
    const expiry = expiresAtMs === undefined ? {} : { leaseExpiresAt: iso(expiresAtMs) };
    this.op('recv', { queue }, fromMs, toMs, {
      ok: { status: 200, messageId: id, payload, lease, retries: 0, ...expiry },
    });
  }

  /** A lease operation (ack, nack, release, fail, renew, discard) answered 204. */
  settled(
    kind: OpKind,
    queue: string,
    id: string,
    lease: string,
    fromMs: number,
    toMs: number,
    extra: InvokeFields = {},
  ): void {
    this.op(kind, { queue, messageId: id, lease, ...extra }, fromMs, toMs, { ok: { status: 204 } });
  }

  windowAt(label: string, fromMs: number, toMs: number): void {
    this.history.markWindow(label, BASE_MS + fromMs, BASE_MS + toMs);
  }
}

export interface QueueEnd {
  readonly dedupWindowSeconds?: number;
  readonly messages?: readonly FinalMessage[];
  /** Defaults to the number of messages. */
  readonly total?: number;
}

/** A final state collected at `atMs` (after BASE_MS). */
export function finalState(
  queues: Readonly<Record<string, QueueEnd>>,
  atMs = 1_000_000,
): FinalState {
  return {
    collectedAtMs: BASE_MS + atMs,
    queues: Object.entries(queues).map(([name, end]) => ({
      name,
      dedupWindowSeconds: end.dedupWindowSeconds ?? 0,
      messages: end.messages ?? [],
      stats: { total: end.total ?? end.messages?.length ?? 0 },
    })),
  };
}
