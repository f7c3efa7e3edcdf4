// One `mq` process run by the harness: `node packages/cli/dist/main.js <args>`, its stdout and
// stderr appended to a log file (kept across restarts), started when its /healthz answers 200.
// Every child is tracked: a process exit hook SIGKILLs any still running, so a test that fails
// or a worker that exits never leaves members behind.

import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { CLI_MAIN } from './repo-paths.js';

export interface MqProcessOptions {
  /** Shown in errors, e.g. `member n1`. */
  readonly name: string;
  /** Arguments after the CLI entry point (`member --id n1 ...`). */
  readonly args: readonly string[];
  /** Log file (appended to). */
  readonly logPath: string;
  /** Answers 200 once the process serves (its /healthz). */
  readonly healthUrl: string;
  /** Extra environment; MQ_* variables of this process are not inherited. */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags before the entry point (`--cpu-prof`...). */
  readonly nodeArgs?: readonly string[];
}

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** How long a started process has to answer /healthz. */
export const PROCESS_START_TIMEOUT_MS = 30_000;
/** How long a SIGTERM'd process has to exit before SIGKILL. */
export const PROCESS_STOP_GRACE_MS = 15_000;
const HEALTH_POLL_MS = 50;
const HEALTH_REQUEST_TIMEOUT_MS = 1_000;

const running = new Set<ChildProcess>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** The environment of a child: ours without MQ_* (flags decide), plus `extra`. */
function childEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('MQ_')) env[key] = value;
  }
  return { ...env, MQ_LOG_LEVEL: 'info', ...extra };
}

export class MqProcess {
  private child: ChildProcess | null = null;
  private exitedValue: Promise<ExitStatus> = Promise.resolve({ code: null, signal: null });
  private paused = false;
  private spawnError: Error | null = null;

  constructor(readonly options: MqProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  /** Running: spawned and not yet exited (a paused process is alive). */
  get alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  get isPaused(): boolean {
    return this.alive && this.paused;
  }

  get pid(): number | undefined {
    return this.alive ? this.child?.pid : undefined;
  }

  /** Resolves when the current (or last) child exits. */
  get exited(): Promise<ExitStatus> {
    return this.exitedValue;
  }

  /**
   * Spawns the process and resolves once /healthz answers 200. Rejects (the log tail in the
   * message) if it exits first or does not answer within `timeoutMs`; it is killed then. Throws
   * if it is already running.
   */
  async start(timeoutMs = PROCESS_START_TIMEOUT_MS): Promise<void> {
    if (this.alive) throw new Error(`${this.name} is already running`);
    hookExit();
    const log = openSync(this.options.logPath, 'a');
    let child: ChildProcess;
    try {
      const args = [...(this.options.nodeArgs ?? []), CLI_MAIN, ...this.options.args];
      const env = childEnv(this.options.env ?? {});
      child = spawn(process.execPath, args, { stdio: ['ignore', log, log], env });
    } finally {
      closeSync(log);
    }
    this.child = child;
    this.paused = false;
    this.spawnError = null;
    running.add(child);
    // Without a listener a failed spawn (EAGAIN, ENOMEM) would crash the test process.
    child.once('error', (error) => {
      this.spawnError = error;
    });
    this.exitedValue = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        running.delete(child);
        resolve({ code, signal });
      });
    });
    try {
      await this.waitHealthy(child, timeoutMs);
    } catch (error) {
      await this.kill('SIGKILL');
      throw error;
    }
  }

  /** Sends `signal` and resolves once the process exited (at once if it is not running). */
  async kill(signal: 'SIGKILL' | 'SIGTERM' | 'SIGINT' = 'SIGKILL'): Promise<ExitStatus> {
    const child = this.child;
    if (child === null || !this.alive) return this.exitedValue;
    child.kill(signal);
    // A stopped process acts on a pending SIGTERM only once continued (SIGKILL needs no help).
    if (this.paused && signal !== 'SIGKILL') child.kill('SIGCONT');
    this.paused = false;
    return this.exitedValue;
  }

  /**
   * Graceful stop: SIGTERM, then SIGKILL if still running after `graceMs`. Resolves with how it
   * exited.
   */
  async stop(graceMs = PROCESS_STOP_GRACE_MS): Promise<ExitStatus> {
    if (!this.alive) return this.exitedValue;
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    try {
      return await this.kill('SIGTERM');
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGSTOP: the process keeps its sockets but runs nothing (a long GC pause, a stalled VM). */
  pause(): void {
    if (!this.alive) throw new Error(`${this.name} is not running`);
    this.child!.kill('SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT after pause(). */
  resume(): void {
    if (!this.alive) throw new Error(`${this.name} is not running`);
    this.child!.kill('SIGCONT');
    this.paused = false;
  }

  /** The last `lines` lines of the log file ('' when there is none yet). */
  tail(lines = 40): string {
    return logTail(this.options.logPath, lines);
  }

  private async waitHealthy(child: ChildProcess, timeoutMs: number): Promise<void> {
    const deadlineMs = performance.now() + timeoutMs;
    while (performance.now() < deadlineMs) {
      if (this.spawnError !== null) {
        throw new Error(`${this.name} could not be started: ${this.spawnError.message}`);
      }
      if (child.exitCode !== null || child.signalCode !== null) {
        const how = child.exitCode ?? child.signalCode;
        throw new Error(`${this.name} exited (${how}) before serving; log tail:\n${this.tail()}`);
      }
      if (await answers200(this.options.healthUrl)) return;
      await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
    }
    const what = `${this.name} did not answer ${this.options.healthUrl} within ${timeoutMs} ms`;
    throw new Error(`${what}; log tail:\n${this.tail()}`);
  }
}

/** True when GET `url` answers 200 within HEALTH_REQUEST_TIMEOUT_MS. */
export async function answers200(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(HEALTH_REQUEST_TIMEOUT_MS) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** The last `lines` lines of the file at `path` ('' when it does not exist). */
export function logTail(path: string, lines = 40): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  return text.split('\n').slice(-lines - 1).join('\n');
}
