// Checks `match` patterns with RE2 (re2-wasm) away from the main thread's RE2 instance.
//
// Why a worker: re2-wasm runs in a fixed 16 MiB wasm heap that cannot grow. A short pattern
// such as `\p{L}{100}` exhausts it while compiling, and the abort leaves that wasm instance
// unusable for the rest of the process (and compiled objects leak unless deleted). Compiling
// untrusted patterns in the process's own instance would let one request disable every later
// `match`, including the member's. So each pattern is compiled in a worker thread with its own
// instance, under a ballast allocation that leaves only a few MiB: a pattern passes only if it
// compiles within that budget, which keeps it cheap for whoever compiles it next. A worker whose
// heap aborted is replaced.

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { MqError, TokenBucket, invalidArgument } from '@spoolmq/engine';
import { type Clock, type TimerHandle, monotonicClock } from '@spoolmq/protocol';
import { MATCH_PATTERN_MAX_CHARS } from './options.js';

/** Wasm heap held back in the worker so a pattern must compile within what remains (~2 MiB). */
const BALLAST_BYTES = 9 * 1_048_576;
/** Checks waiting on the worker at once; more answer 503 (retry). */
const PENDING_MAX = 256;
/** Verdicts remembered, so a poller repeating one pattern costs no round trip. */
const VERDICTS_MAX = 512;
/** A check not answered in this time fails with 503 and the worker is replaced. */
export const MATCH_CHECK_TIMEOUT_MS = 5_000;
/** Times one check is sent to a fresh worker after the worker it waited on went away. */
const ATTEMPTS_MAX = 2;
/**
 * New patterns (not judged before) one account may have checked: one every 200 ms, 20 at once.
 * A pattern already judged costs nothing, so a poller repeating its filter is never limited;
 * one account sending unique costly patterns waits instead of keeping the checker busy for all.
 */
export const MATCH_NEW_PATTERN_INTERVAL_MICROS = 200_000;
export const MATCH_NEW_PATTERN_BURST = 20;
/** Accounts whose pattern budgets are remembered (least recently used dropped first). */
const BUDGETS_MAX = 10_000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const re2 = require(workerData.re2Path);
const wasm = require(workerData.wasmPath);
wasm._malloc(workerData.ballastBytes);
let broken = false;
parentPort.on('message', ({ id, pattern }) => {
  if (broken) {
    parentPort.postMessage({ id, verdict: 'retry' });
    return;
  }
  try {
    const compiled = new re2.RE2(pattern, 'u');
    compiled.wrapper.delete();
    parentPort.postMessage({ id, verdict: 'ok' });
  } catch (error) {
    const message = String((error && error.message) || error);
    const invalid = error instanceof SyntaxError;
    broken = !invalid;
    parentPort.postMessage({ id, verdict: invalid ? 'invalid' : 'too_complex', message });
  }
});
`;

type Verdict = { readonly ok: true } | { readonly ok: false; readonly message: string };

interface Pending {
  readonly pattern: string;
  readonly resolve: (verdict: Verdict) => void;
  readonly reject: (error: MqError) => void;
  attempts: number;
  timer: TimerHandle | undefined;
  /** The worker the check was last sent to. */
  worker: Worker | undefined;
}

interface WorkerAnswer {
  readonly id: number;
  /** `retry`: the worker's heap aborted on an earlier pattern; ask a fresh worker. */
  readonly verdict: 'ok' | 'invalid' | 'too_complex' | 'retry';
  readonly message?: string;
}

function workerPaths(): { re2Path: string; wasmPath: string } {
  const require = createRequire(import.meta.url);
  return {
    re2Path: require.resolve('re2-wasm'),
    wasmPath: require.resolve('re2-wasm/build/wasm/re2.js'),
  };
}

export class MatchGuard {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly verdicts = new Map<string, Verdict>();
  private readonly budgets = new Map<string, TokenBucket>();

  /** `clock` times each check (MATCH_CHECK_TIMEOUT_MS) and refills the accounts' budgets. */
  constructor(private readonly clock: Clock) {}

  /**
   * Resolves when `pattern` is valid RE2 that compiles within the budget. Rejects with 400
   * invalid_argument (field `match`) when it is longer than MATCH_PATTERN_MAX_CHARS, is not
   * RE2 syntax (lookaround, backreferences...) or is too complex; with 429 rate_limited when
   * `account` has no new-pattern token left; with 503 unavailable when the checker is saturated
   * or stuck.
   */
  async check(pattern: string, account?: string): Promise<void> {
    if (pattern.length > MATCH_PATTERN_MAX_CHARS) {
      throw invalidArgument('match', `match must be at most ${MATCH_PATTERN_MAX_CHARS} characters`);
    }
    const known = this.verdicts.get(pattern);
    // Whole milliseconds: the 429's retryAfterMs is a difference of times and must be whole.
    if (known === undefined) this.charge(account ?? '', Math.floor(this.clock.nowMs()));
    const verdict = known ?? (await this.ask(pattern));
    this.remember(pattern, verdict);
    if (!verdict.ok) throw invalidArgument('match', verdict.message);
  }

  /** Stops the worker, failing checks in progress with 503; later checks start a new one. */
  async close(): Promise<void> {
    for (const id of [...this.pending.keys()]) {
      this.settle(id)?.reject(new MqError('unavailable', 'the match checker is shutting down'));
    }
    const worker = this.worker;
    this.worker = undefined;
    if (worker !== undefined) await worker.terminate();
  }

  /** Takes one new-pattern token of `account`; 429 rate_limited (with the wait) when none. */
  private charge(account: string, nowMs: number): void {
    let bucket = this.budgets.get(account);
    if (bucket === undefined) {
      bucket = new TokenBucket(MATCH_NEW_PATTERN_INTERVAL_MICROS, MATCH_NEW_PATTERN_BURST, nowMs);
    }
    this.budgets.delete(account);
    this.budgets.set(account, bucket);
    if (this.budgets.size > BUDGETS_MAX) {
      const oldest = this.budgets.keys().next();
      if (oldest.done !== true) this.budgets.delete(oldest.value);
    }
    if (bucket.tryTake(nowMs)) return;
    throw new MqError('rate_limited', 'too many new match patterns from this account', {
      retryAfterMs: bucket.nextTokenAtMs(nowMs) - nowMs,
    });
  }

  private remember(pattern: string, verdict: Verdict): void {
    this.verdicts.delete(pattern);
    this.verdicts.set(pattern, verdict);
    if (this.verdicts.size > VERDICTS_MAX) {
      const oldest = this.verdicts.keys().next();
      if (oldest.done !== true) this.verdicts.delete(oldest.value);
    }
  }

  private ask(pattern: string): Promise<Verdict> {
    if (this.pending.size >= PENDING_MAX) {
      return Promise.reject(new MqError('unavailable', 'too many match patterns being checked'));
    }
    return new Promise<Verdict>((resolve, reject) => {
      const id = this.nextId++;
      const entry = { pattern, resolve, reject, attempts: 0, timer: undefined, worker: undefined };
      this.pending.set(id, entry);
      this.dispatch(id);
    });
  }

  private dispatch(id: number): void {
    const entry = this.pending.get(id);
    if (entry === undefined) return;
    entry.attempts += 1;
    if (entry.attempts > ATTEMPTS_MAX) {
      this.settle(id);
      entry.reject(new MqError('unavailable', 'the match checker is unavailable; retry'));
      return;
    }
    if (entry.timer !== undefined) this.clock.clearTimer(entry.timer);
    entry.timer = this.clock.setTimer(() => this.timedOut(id), MATCH_CHECK_TIMEOUT_MS);
    entry.worker = this.workerNow();
    entry.worker.postMessage({ id, pattern: entry.pattern });
  }

  private settle(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    if (entry.timer !== undefined) this.clock.clearTimer(entry.timer);
    this.pending.delete(id);
    return entry;
  }

  private timedOut(id: number): void {
    const entry = this.settle(id);
    if (entry === undefined) return;
    entry.reject(new MqError('unavailable', 'the match checker did not answer; retry'));
    if (entry.worker !== undefined) this.retire(entry.worker);
  }

  private workerNow(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { ...workerPaths(), ballastBytes: BALLAST_BYTES },
      // The wasm runtime prints a long OOM notice for every refused pattern; drop its output
      // rather than let clients write to the gateway's log.
      stdout: true,
      stderr: true,
    });
    worker.stdout.resume();
    worker.stderr.resume();
    worker.unref();
    worker.on('message', (answer: WorkerAnswer) => this.answered(worker, answer));
    worker.on('error', () => this.lost(worker));
    worker.on('exit', () => this.lost(worker));
    this.worker = worker;
    return worker;
  }

  private answered(worker: Worker, answer: WorkerAnswer): void {
    if (answer.verdict === 'retry') {
      this.dispatch(answer.id);
      return;
    }
    if (answer.verdict === 'too_complex') this.retire(worker);
    const entry = this.settle(answer.id);
    if (entry === undefined) return;
    if (answer.verdict === 'ok') entry.resolve({ ok: true });
    else if (answer.verdict === 'invalid') {
      const message = `match is not a valid RE2 pattern: ${answer.message ?? ''}`;
      entry.resolve({ ok: false, message });
    } else entry.resolve({ ok: false, message: 'match pattern is too complex' });
  }

  /** Stops using `worker` (its heap aborted); it is terminated, later checks get a new one. */
  private retire(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    void worker.terminate();
  }

  /** The worker ended: checks it still owed go to a fresh one (bounded by ATTEMPTS_MAX). */
  private lost(worker: Worker): void {
    if (this.worker === worker) this.worker = undefined;
    for (const [id, entry] of [...this.pending]) {
      if (entry.worker === worker) this.dispatch(id);
    }
  }
}

/**
 * One checker per process: it stands for one RE2 heap, as the wasm module itself does. Being the
 * process's, not an app's, it runs on the real clock; tests of the guard make their own.
 */
export const sharedMatchGuard = new MatchGuard(monotonicClock);
