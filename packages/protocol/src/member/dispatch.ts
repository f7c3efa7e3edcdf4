// Between the two faces of an operation, both derived from its row in operations.ts:
// - `dispatchCall`: a `Call` applied to a `SpoolService` (the member's stream session runs decoded
//   calls through it, and so does a gateway's in-process short-circuit). A service that runs
//   calls itself (a `CallRunner`, such as the member's hosted service) gets the call as it is,
//   so no call is turned into a method call and back into a call.
// - `installOperations`: the 21 SpoolService methods of a class that runs calls (the gateway's
//   RemoteSpoolService, the member's HostedSpoolService), each building its call from its
//   arguments and handing it to the class's one runner.

import type { SpoolService } from '@spoolmq/engine';
import type { Call, Op, OpResults } from './calls.js';
import { OPERATIONS, OPS, rowOf, type Operation } from './operations.js';

/** The SpoolService methods that are operations (every method but `ready`). */
export type SpoolOperations = Pick<SpoolService, Op>;

/** Marks a `CallRunner` (a symbol, so no stand-in service answering any name passes for one). */
export const CALL_RUNNER: unique symbol = Symbol('mq.callRunner');

/** Something that runs a call itself and resolves with its operation's result. */
export interface CallRunner {
  readonly [CALL_RUNNER]: true;
  runCall(call: Call, signal?: AbortSignal): Promise<unknown>;
}

function isCallRunner(service: SpoolService): service is SpoolService & CallRunner {
  return (service as Partial<CallRunner>)[CALL_RUNNER] === true;
}

/**
 * Runs `call` on `service` and resolves with the method's result; rejects as the method does
 * (an `MqError` for expected failures). `signal` reaches only a receive (its long poll).
 */
export function dispatchCall(
  service: SpoolService,
  call: Call,
  signal?: AbortSignal,
): Promise<OpResults[Op]> {
  if (isCallRunner(service)) return service.runCall(call, signal) as Promise<OpResults[Op]>;
  return rowOf(call).apply(service, call, signal);
}

type Runner<T> = (this: T, call: Call, signal: AbortSignal | undefined) => Promise<unknown>;

/**
 * Defines every operation's SpoolService method on `prototype`, each calling `run` (with `this`
 * the instance) on the call its arguments make. Methods take at most four arguments, so they
 * are written with four parameters rather than a rest array: no allocation per call besides
 * the call itself.
 */
export function installOperations<T>(prototype: T, run: Runner<T>): void {
  for (const op of OPS) {
    const row = OPERATIONS[op] as unknown as Operation<Op>;
    const make = row.call as (a: unknown, b: unknown, c: unknown, d: unknown) => Call;
    const signalOf = row.signal as
      | ((a: unknown, b: unknown, c: unknown, d: unknown) => AbortSignal | undefined)
      | undefined;
    const method = function (this: T, a: unknown, b: unknown, c: unknown, d: unknown) {
      return run.call(this, make(a, b, c, d), signalOf?.(a, b, c, d));
    };
    Object.defineProperty(method, 'name', { value: op });
    Object.defineProperty(prototype, op, {
      value: method,
      writable: true,
      configurable: true,
      enumerable: false,
    });
  }
}
