// A spool host on a manual clock, with the local log or a gated log that applies only when the
// test says so (the way a Raft log applies after commit).

import { type ApplyResult, type Command, type Delivery, MqError, type Plan, SpoolEngine, resolvePlan } from '@spoolmq/engine';
import { expect } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { type CommandLog, LocalCommandLog } from '../../src/host/command-log.js';
import { CursorCodec } from '../../src/host/cursors.js';
import { PatternCache } from '../../src/host/patterns.js';
import { SpoolHost } from '../../src/host/spool-host.js';
import { TokenCodec } from '../../src/host/tokens.js';

export const SECRET = new Uint8Array(32).fill(7);
export const SALT = new Uint8Array(16).fill(1);

/** Holds appends until `flush`, then applies them in order at the clock's time. */
export class GatedLog implements CommandLog {
  term = 1;
  private readonly pending: { command: Command; resolve: (r: ApplyResult) => void }[] = [];

  constructor(
    private readonly engine: SpoolEngine,
    private readonly clock: ManualClock,
  ) {}

  append(command: Command): Promise<ApplyResult> {
    return new Promise((resolve) => this.pending.push({ command, resolve }));
  }

  get waiting(): number {
    return this.pending.length;
  }

  flush(): void {
    for (const { command, resolve } of this.pending.splice(0)) resolve(this.engine.apply(command, this.clock.nowMs()));
  }
}

/** A local log whose term a test can bump (as a cluster's new primary would). */
export class TermLog extends LocalCommandLog {
  override term = 1;
}

export interface HostFixture {
  readonly clock: ManualClock;
  readonly engine: SpoolEngine;
  readonly host: SpoolHost;
}

export function makeHost(
  options: { plan?: Partial<Plan>; name?: string; log?: (engine: SpoolEngine, clock: ManualClock) => CommandLog; synchronous?: boolean; waitersPerQueueMax?: number } = {},
): HostFixture & { log: CommandLog } {
  const clock = new ManualClock();
  const engine = new SpoolEngine(resolvePlan(options.plan));
  const log = options.log ? options.log(engine, clock) : new LocalCommandLog(engine, clock);
  const host = new SpoolHost({
    name: options.name ?? 'default',
    engine,
    log,
    clock,
    tokens: new TokenCodec(SECRET, SALT),
    cursors: new CursorCodec(SECRET, SALT),
    patterns: new PatternCache(),
    appliesSynchronously: options.synchronous ?? options.log === undefined,
    ...(options.waitersPerQueueMax === undefined ? {} : { waitersPerQueueMax: options.waitersPerQueueMax }),
  });
  host.openPrimary();
  return { clock, engine, host, log };
}

export const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

export async function sendOne(host: SpoolHost, queue: string, payload = bytes(1), delayMs = 0): Promise<string> {
  return (await host.send(queue, { payload, delayMs, wantHandle: false })).messageId;
}

export async function recvNow(host: SpoolHost, queue: string): Promise<Delivery> {
  const delivery = await host.receive(queue, { waitMs: 0 });
  if (delivery === null) throw new Error('nothing to receive');
  return delivery;
}

/** Awaits `promise` expecting an MqError of `kind` (and `details` when given). */
export async function expectError(promise: Promise<unknown> | (() => unknown), kind: string, details?: object): Promise<MqError> {
  let caught: unknown;
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${kind}`).toBeInstanceOf(MqError);
  const error = caught as MqError;
  expect(error.kind).toBe(kind);
  if (details !== undefined) expect(error.details).toEqual(details);
  return error;
}
