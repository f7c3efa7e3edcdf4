// Shared helpers for engine tests: a primary engine with one queue, and terse wrappers that
// apply commands and assert their result kinds.

import { expect } from 'vitest';
import { type ApplyResult, type Command, RATE_LIMITED, type SettingsInput } from '../src/index.js';
import { SpoolEngine } from '../src/engine.js';
import type { Message } from '../src/message.js';
import { DEFAULT_PLAN, type Plan, resolvePlan } from '../src/plan.js';
import type { Queue } from '../src/queue.js';
import { resolveSettings } from '../src/settings.js';

export const T0 = 1_800_000_000_000;

export function newEngine(plan: Partial<Plan> = {}, nowMs = T0): SpoolEngine {
  const engine = new SpoolEngine(resolvePlan({ ...DEFAULT_PLAN, ...plan }));
  engine.openPrimary(nowMs);
  return engine;
}

export function createQueue(engine: SpoolEngine, name: string, input: SettingsInput = {}, nowMs = T0): Queue {
  const settings = resolveSettings(input, engine.plan);
  if (!('leaseTimeoutSeconds' in settings)) throw settings;
  const result = engine.apply({ type: 'createQueue', name, settings }, nowMs);
  expect(result.kind).toBe('queue');
  return engine.queue(name)!;
}

export function apply(engine: SpoolEngine, command: Command, nowMs: number): ApplyResult {
  return engine.apply(command, nowMs);
}

export function send(
  engine: SpoolEngine,
  queue: Queue,
  nowMs: number,
  options: { delayMs?: number; dedupKey?: Uint8Array; payload?: Uint8Array } = {},
): number {
  const result = engine.apply(
    {
      type: 'send',
      queueGen: queue.gen,
      delayMs: options.delayMs ?? 0,
      dedupKey: options.dedupKey ?? null,
      payload: options.payload ?? new Uint8Array([1, 2, 3]),
    },
    nowMs,
  );
  if (result.kind !== 'appended') throw new Error(`send not appended: ${JSON.stringify(result)}`);
  return result.seq;
}

export function receive(engine: SpoolEngine, queue: Queue, nowMs: number): Message {
  const outcome = engine.receive(queue, nowMs);
  if (outcome === null || outcome === RATE_LIMITED) throw new Error(`nothing received: ${String(outcome)}`);
  return outcome;
}

export function ref(queue: Queue, message: Message): { queueGen: number; seq: number; gen: number } {
  return { queueGen: queue.gen, seq: message.seq, gen: message.gen };
}

export function key(byte: number): Uint8Array {
  return new Uint8Array(16).fill(byte);
}

export function counts(engine: SpoolEngine, queue: Queue, nowMs: number) {
  return engine.queueCounts(queue, nowMs);
}
