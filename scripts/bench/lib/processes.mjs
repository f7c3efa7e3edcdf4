// Child processes for benchmarks, tracked so that every one is killed when the benchmark ends,
// whether it ends normally, throws, or is interrupted (SIGINT/SIGTERM).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

const children = new Set();
let hooked = false;

/**
 * Spawns a tracked child (stdio: ignore stdin, pipe stdout/stderr). It is SIGKILLed at exit of
 * this process unless it exited first. Same arguments as child_process.spawn.
 */
export function spawnTracked(command, args, options = {}) {
  hookExit();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/**
 * Stops a child: SIGTERM, then SIGKILL if it has not exited after `graceMs`.
 * Resolves with its exit code (or null when killed by a signal).
 */
export function stopChild(child, graceMs = 5_000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/** Sends `signal` to `child` and resolves once it has exited. */
export function killAndWait(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * Resolves with the first stderr/stdout JSON log line of `child` for which `match(record)` is
 * true. Rejects if the child exits first or `timeoutMs` passes.
 */
export function waitForLogLine(child, match, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const cleanup = () => {
      clearTimeout(timer);
      child.stderr.off('data', onData);
      child.stdout.off('data', onData);
      child.off('exit', onExit);
    };
    const onData = (chunk) => {
      buffered += chunk.toString('utf8');
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let record;
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        if (match(record)) {
          cleanup();
          resolve(record);
          return;
        }
      }
    };
    const onExit = (code, signal) => {
      cleanup();
      reject(new Error(`child exited (${code ?? signal}) before the expected log line`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no matching log line within ${timeoutMs} ms`));
    }, timeoutMs);
    child.stderr.on('data', onData);
    child.stdout.on('data', onData);
    child.once('exit', onExit);
  });
}

function killAll() {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}

function hookExit() {
  if (hooked) return;
  hooked = true;
  process.once('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux x86 and arm). */
const USER_HZ = 100;

/**
 * CPU time (user + system) a process has used so far, in milliseconds, from /proc (Linux).
 * Resolution 10 ms. Returns undefined where /proc is unavailable. Unlike throughput, CPU per
 * operation barely moves when other processes compete for the cores.
 * @param {number} pid
 */
export function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
  } catch {
    return undefined;
  }
}
