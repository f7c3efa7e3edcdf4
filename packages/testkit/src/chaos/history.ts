// The history of a chaos run, in the style of Jepsen: every request a client makes is an
// operation with an invoke event (what was asked, when) and a completion event (what came back,
// when). A completion is `ok` (a 2xx answer), `fail` (an answer that certainly changed nothing:
// 4xx, and 503 for a send) or `info` (no answer, a timeout, a 5xx that may have acted such as
// 500 operation_unconfirmed): the checker treats `info` as "may or may not have happened".
//
// The history is append-only and bounded (`opsMax`); it is written by one process, so ordering
// of events in the array is the order they were recorded. Timestamps are milliseconds on the
// epoch scale taken from a monotonic source (performance.timeOrigin + performance.now()) so they
// order correctly and compare, within a small slack, with the server's RFC 3339 times on the
// same machine (lease expiry, visibleAt).
//
// Serialization is JSONL, one event a line, so a failing run can be saved and re-checked.

import assert from 'node:assert/strict';

/** Operation kinds the workload performs; one HTTP request each. */
export const OP_KINDS = [
  'send',
  'recv',
  'ack',
  'nack',
  'release',
  'fail',
  'renew',
  'ackAndSend',
  'discard',
  'recover',
  'listMessages',
  'stats',
] as const;
export type OpKind = (typeof OP_KINDS)[number];

/** How an operation ended; see the file comment. */
export type CompletionType = 'ok' | 'fail' | 'info';

/** A message as a listing reports it (no payload). */
export interface ListedMessageRef {
  readonly id: string;
  readonly state: string;
}

/** What a client asked. Fields that do not apply to the kind are absent. */
export interface InvokeFields {
  /**
   * send, recv, listMessages, stats: the queue addressed. ackAndSend: the queue the new message
   * goes to. Lease and handle operations: the queue of the message they act on (the client
   * knows it from the receive or listing that gave it the token).
   */
  readonly queue?: string;
  /**
   * send, ackAndSend: the new message's payload, unique per logical send (`p:<client>:<n>`); a
   * backlog send's is its description (`b:<n>:<bytes>:<digest>`: backlog-payload.ts).
   */
  readonly payload?: string;
  /** send, ackAndSend: the dedup key (Svc-Dedup-String). */
  readonly dedupKey?: string;
  /**
   * send: Svc-Delay-Seconds x 1000; release and ackAndSend: the Svc-Delay; recover:
   * Svc-Delay-Seconds x 1000. Milliseconds, >= 0.
   */
  readonly delayMs?: number;
  /** Lease operations (ack, nack, release, fail, renew, discard by lease, ackAndSend). */
  readonly lease?: string;
  /** discard and recover by handle. */
  readonly handle?: string;
  /** The message the token refers to, as the client learnt it; for ackAndSend the acked one. */
  readonly messageId?: string;
  /** ackAndSend: the queue of the acked message. */
  readonly sourceQueue?: string;
  /** listMessages: the state filter. */
  readonly state?: string;
}

/** What came back. Fields that do not apply are absent. */
export interface CompletionFields {
  /** HTTP status when there was an answer. */
  readonly status?: number;
  /** The error body's `kind`. */
  readonly errorKind?: string;
  /** 410: the error body's `details.reason` (expired, settled, primary_changed, stale). */
  readonly reason?: string;
  /** info: what went wrong on the client side (timeout, connection reset). */
  readonly error?: string;
  /** send/ackAndSend 201 or 200, recv 200: Svc-Message-Id; 409 dedup_claimed: details.messageId. */
  readonly messageId?: string;
  /** recv: the payload received, as `describePayload` names it (backlog-payload.ts). */
  readonly payload?: string;
  /** recv: Svc-Lease. */
  readonly lease?: string;
  /** recv, renew: Svc-Lease-Expires-At, RFC 3339. */
  readonly leaseExpiresAt?: string;
  /** recv: Svc-Message-Retries. */
  readonly retries?: number;
  /** listMessages: the page's items. */
  readonly messages?: readonly ListedMessageRef[];
  /** stats: the queue's (or spool's) `total`. */
  readonly total?: number;
}

export interface InvokeEvent extends InvokeFields {
  readonly type: 'invoke';
  /** Operation number, 0-based, in invocation order. */
  readonly op: number;
  readonly client: string;
  readonly kind: OpKind;
  readonly atMs: number;
}

export interface CompletionEvent extends CompletionFields {
  readonly type: CompletionType;
  readonly op: number;
  readonly atMs: number;
}

/**
 * A span the harness flags as one where the spool's primary may have changed (a fault and the
 * time to recover from it). The checker excuses overlapping leases across such a span.
 */
export interface WindowEvent {
  readonly type: 'window';
  readonly label: string;
  readonly startMs: number;
  readonly endMs: number;
}

export type HistoryEvent = InvokeEvent | CompletionEvent | WindowEvent;

/** An invoke paired with its completion; `completion` is undefined while in flight. */
export interface Operation {
  readonly invoke: InvokeEvent;
  readonly completion: CompletionEvent | undefined;
}

export interface HistoryOptions {
  /** Operations recorded at most; default 500,000. `invoke` past it is a bug (assert). */
  readonly opsMax?: number;
  /** Clock in epoch-scale milliseconds; default performance.timeOrigin + performance.now(). */
  readonly nowMs?: () => number;
}

export const HISTORY_OPS_MAX_DEFAULT = 500_000;
/** Flagged windows recorded at most. */
export const HISTORY_WINDOWS_MAX = 100_000;

/** performance.now() on the epoch scale: monotonic, comparable with server wall-clock times. */
export function monotonicEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

export class History {
  readonly opsMax: number;
  private readonly nowMs: () => number;
  private readonly eventList: HistoryEvent[] = [];
  private readonly invokes: InvokeEvent[] = [];
  private readonly completions: (CompletionEvent | undefined)[] = [];
  private windowCount = 0;

  constructor(options: HistoryOptions = {}) {
    this.opsMax = options.opsMax ?? HISTORY_OPS_MAX_DEFAULT;
    assert(Number.isInteger(this.opsMax) && this.opsMax >= 1, 'History: opsMax must be >= 1');
    this.nowMs = options.nowMs ?? monotonicEpochMs;
  }

  /** Operations invoked so far. */
  get size(): number {
    return this.invokes.length;
  }

  /** True once `opsMax` operations are recorded: callers stop invoking. */
  get full(): boolean {
    return this.invokes.length >= this.opsMax;
  }

  /** The current time on the history's clock, ms. */
  now(): number {
    return this.nowMs();
  }

  /**
   * Records an invocation now and returns its operation number. Asserts the history is not
   * full (check `full` first) and that the client id is non-empty.
   */
  invoke(client: string, kind: OpKind, fields: InvokeFields = {}): number {
    assert(!this.full, `History: more than ${this.opsMax} operations`);
    assert(client.length > 0, 'History: empty client id');
    const op = this.invokes.length;
    const event: InvokeEvent = { type: 'invoke', op, client, kind, atMs: this.nowMs(), ...fields };
    this.invokes.push(event);
    this.completions.push(undefined);
    this.eventList.push(event);
    return event.op;
  }

  /** Completes `op` with a 2xx answer. */
  ok(op: number, fields: CompletionFields = {}): void {
    this.complete('ok', op, fields);
  }

  /** Completes `op` with an answer that certainly changed nothing. */
  fail(op: number, fields: CompletionFields = {}): void {
    this.complete('fail', op, fields);
  }

  /** Completes `op` with no answer or an answer that leaves the effect unknown. */
  info(op: number, fields: CompletionFields = {}): void {
    this.complete('info', op, fields);
  }

  /** Flags [startMs, endMs] as a span in which the primary may have changed. */
  markWindow(label: string, startMs: number, endMs: number): void {
    assert(endMs >= startMs, `History: window ${label} ends before it starts`);
    assert(this.windowCount < HISTORY_WINDOWS_MAX, 'History: too many windows');
    this.windowCount += 1;
    this.eventList.push({ type: 'window', label, startMs, endMs });
  }

  /** Every event in recording order. The array is the history's own: do not modify it. */
  events(): readonly HistoryEvent[] {
    return this.eventList;
  }

  /** Operations in invocation order, each paired with its completion (if any yet). */
  operations(): Operation[] {
    return this.invokes.map((invoke, op) => ({ invoke, completion: this.completions[op] }));
  }

  /** The history as JSONL: one event a line, each line ending in `\n`. */
  toJsonl(): string {
    return eventsToJsonl(this.eventList);
  }

  /**
   * Rebuilds a history from events (for example from `parseHistoryJsonl`). Throws `Error` when
   * the events are inconsistent: an op number out of sequence, a completion without an invoke,
   * or two completions for one op.
   */
  static fromEvents(events: Iterable<HistoryEvent>, options: HistoryOptions = {}): History {
    const history = new History(options);
    for (const event of events) history.replay(event);
    return history;
  }

  private replay(event: HistoryEvent): void {
    if (event.type === 'window') {
      this.eventList.push(event);
      this.windowCount += 1;
      return;
    }
    if (event.type === 'invoke') {
      if (event.op !== this.invokes.length) {
        const due = this.invokes.length;
        throw new Error(`history: invoke of op ${event.op} where op ${due} was due`);
      }
      if (this.full) throw new Error(`history: more than ${this.opsMax} operations`);
      this.invokes.push(event);
      this.completions.push(undefined);
      this.eventList.push(event);
      return;
    }
    if (this.completions[event.op] !== undefined || event.op >= this.invokes.length) {
      throw new Error(`history: completion of op ${event.op} without a pending invoke`);
    }
    this.completions[event.op] = event;
    this.eventList.push(event);
  }

  private complete(type: CompletionType, op: number, fields: CompletionFields): void {
    assert(op >= 0 && op < this.invokes.length, `History: completion of unknown op ${op}`);
    assert(this.completions[op] === undefined, `History: op ${op} completed twice`);
    const event: CompletionEvent = { type, op, atMs: this.nowMs(), ...fields };
    this.completions[op] = event;
    this.eventList.push(event);
  }
}

/** Serializes events as JSONL (one JSON object a line, `\n` after each). */
export function eventsToJsonl(events: Iterable<HistoryEvent>): string {
  const lines: string[] = [];
  for (const event of events) lines.push(JSON.stringify(event));
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

const COMPLETION_TYPES: ReadonlySet<string> = new Set(['ok', 'fail', 'info']);
const KINDS: ReadonlySet<string> = new Set(OP_KINDS);

/**
 * Parses JSONL written by `eventsToJsonl` / `History.toJsonl`. Blank lines are skipped. Throws
 * `Error` naming the line number when a line is not JSON or not an event.
 */
export function parseHistoryJsonl(text: string): HistoryEvent[] {
  const events: HistoryEvent[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new Error(`history line ${i + 1}: not JSON (${(error as Error).message})`);
    }
    events.push(asEvent(value, i + 1));
  }
  return events;
}

function asEvent(value: unknown, lineNumber: number): HistoryEvent {
  const bad = (why: string): Error => new Error(`history line ${lineNumber}: ${why}`);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw bad('not an object');
  }
  const record = value as Record<string, unknown>;
  const type = record['type'];
  if (type === 'window') {
    if (typeof record['label'] !== 'string') throw bad('window without a label');
    if (typeof record['startMs'] !== 'number' || typeof record['endMs'] !== 'number') {
      throw bad('window without startMs/endMs');
    }
    return record as unknown as WindowEvent;
  }
  if (!Number.isInteger(record['op']) || (record['op'] as number) < 0) throw bad('bad op number');
  if (typeof record['atMs'] !== 'number') throw bad('no atMs');
  if (type === 'invoke') {
    if (typeof record['client'] !== 'string') throw bad('invoke without a client');
    if (typeof record['kind'] !== 'string' || !KINDS.has(record['kind'])) throw bad('unknown kind');
    return record as unknown as InvokeEvent;
  }
  if (typeof type !== 'string' || !COMPLETION_TYPES.has(type)) {
    throw bad(`unknown type ${String(type)}`);
  }
  return record as unknown as CompletionEvent;
}

/**
 * One line describing an operation for reports: the invoke's fields, `doneMs` and the
 * completion's fields (`type` is `pending` when it never completed).
 */
export function formatOperation(operation: Operation): string {
  const { type: _invokeType, atMs, ...invoke } = operation.invoke;
  const completion = operation.completion;
  if (completion === undefined) {
    return JSON.stringify({ ...invoke, invokedMs: round(atMs), type: 'pending' });
  }
  const { op: _op, atMs: doneMs, ...rest } = completion;
  return JSON.stringify({ ...invoke, invokedMs: round(atMs), doneMs: round(doneMs), ...rest });
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
