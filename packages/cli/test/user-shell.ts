// Helpers for tests that act as a user at a shell: run an installed `mq` (or any program) the way
// a terminal does, and start `mq serve` on ports the kernel picks, learning them from its
// listening log line, so parallel tests and other people's servers never collide.

import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { dirname } from 'node:path';

/** How long `mq serve` has to log its address and answer /readyz. */
export const SERVE_START_TIMEOUT_MS = 60_000;
/** How long a SIGTERM'd server has to exit before SIGKILL. */
const SERVE_STOP_GRACE_MS = 15_000;
const READY_POLL_MS = 100;
const LOG_TAIL_CHARS = 4_000;

const running = new Set<ChildProcess>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  // A failed test must not leave a server behind.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/**
 * The environment a user's shell would give: ours without MQ_* (the test decides those), with
 * this node first on PATH so `#!/usr/bin/env node` finds it, plus `extra`.
 */
export function userEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('MQ_') && !key.startsWith('npm_')) env[key] = value;
  }
  const path = [dirname(process.execPath), process.env['PATH'] ?? ''].join(':');
  return { ...env, PATH: path, ...extra };
}

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly input?: string;
}

/** Runs a program to its end (killed after `timeoutMs`); never rejects on a non-zero status. */
export function run(
  file: string,
  args: readonly string[],
  options: RunOptions,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      {
        cwd: options.cwd,
        env: options.env,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : (error as { code?: unknown }).code;
        const what = `${file} ${args.join(' ')}`;
        if (typeof code === 'number') resolve({ code, stdout, stderr });
        else reject(new Error(`${what} did not end: ${error?.message}\n${stderr}`));
      },
    );
    child.stdin?.end(options.input ?? '');
  });
}

export interface ServeHandle {
  /** The API, `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  /** The admin API, `http://127.0.0.1:PORT`. */
  readonly adminUrl: string;
  /** What the server printed so far (its JSON log lines). */
  log(): string;
  /** SIGTERM, SIGKILL after a grace period; resolves with the exit code (null if killed). */
  stop(): Promise<number | null>;
}

/**
 * Starts `<mqBin> serve --data ./data --port 0 --admin-port 0` in `cwd` and resolves once it
 * logged where it listens and its /readyz answers 200. Rejects with the log's tail otherwise.
 */
export async function startServe(
  mqBin: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<ServeHandle> {
  hookExit();
  const args = ['serve', '--data', './data', '--port', '0', '--admin-port', '0'];
  const child = spawn(mqBin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  child.once('error', (error) => {
    output += `\nspawn failed: ${error.message}`;
  });
  const listening = new Promise<{ baseUrl: string; adminUrl: string }>((resolve) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const found = listeningAddresses(output);
      if (found !== null) resolve(found);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
  });
  const handle = (addresses: { baseUrl: string; adminUrl: string }): ServeHandle => ({
    ...addresses,
    log: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      const timer = setTimeout(() => child.kill('SIGKILL'), SERVE_STOP_GRACE_MS);
      child.kill('SIGTERM');
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  });
  const deadlineMs = Date.now() + SERVE_START_TIMEOUT_MS;
  try {
    const addresses = await withDeadline(listening, exited, deadlineMs);
    await waitReady(addresses.baseUrl, exited, deadlineMs);
    return handle(addresses);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    throw new Error(`mq serve did not start: ${String(error)}\n${output.slice(-LOG_TAIL_CHARS)}`);
  }
}

/** The API and admin addresses from `mq serve`'s listening line, once it was printed. */
function listeningAddresses(output: string): { baseUrl: string; adminUrl: string } | null {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"baseUrl"')) continue;
    try {
      const entry = JSON.parse(line) as { baseUrl?: unknown; adminAddress?: unknown };
      if (typeof entry.baseUrl === 'string' && typeof entry.adminAddress === 'string') {
        return { baseUrl: entry.baseUrl, adminUrl: `http://${entry.adminAddress}` };
      }
    } catch {
      // A line cut in two by the pipe: the next chunk completes it.
    }
  }
  return null;
}

async function withDeadline<T>(
  value: Promise<T>,
  exited: Promise<number | null>,
  deadlineMs: number,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out')), Math.max(0, deadlineMs - Date.now()));
  });
  const died = exited.then((code) => Promise.reject(new Error(`exited with ${code}`)));
  try {
    return await Promise.race([value, late, died]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitReady(
  baseUrl: string,
  exited: Promise<number | null>,
  deadlineMs: number,
): Promise<void> {
  const readyUrl = new URL('/readyz', baseUrl);
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  while (!gone && Date.now() < deadlineMs) {
    const ok = await fetch(readyUrl, { signal: AbortSignal.timeout(2_000) }).then(
      (answer) => answer.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  throw new Error(gone ? 'exited before it was ready' : 'not ready in time');
}
