// Helpers the target launchers share: installing a missing system package, free loopback
// ports, waiting for a text line or a TCP port, temporary data directories, process memory.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';

/** How long one apt-get run may take (ms). */
const APT_TIMEOUT_MS = 300_000;

/**
 * Makes sure `binary` is on PATH, installing Debian package `pkg` with apt-get when it is not
 * (apt-get update first if the plain install fails). Returns {installed: boolean, path} or
 * throws with apt-get's output when it cannot be installed.
 */
export function ensureInstalled(binary, pkg, log = (line) => process.stdout.write(`${line}\n`)) {
  const found = which(binary);
  if (found !== null) return { installed: false, path: found };
  log(`${binary} missing: apt-get install -y ${pkg}`);
  const apt = (args) => spawnSync('apt-get', args, { encoding: 'utf8', timeout: APT_TIMEOUT_MS, env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  let result = apt(['install', '-y', pkg]);
  if (result.status !== 0) {
    log('apt-get install failed; running apt-get update first');
    apt(['update']);
    result = apt(['install', '-y', pkg]);
  }
  const path = which(binary);
  if (result.status !== 0 || path === null) throw new Error(`could not install ${pkg}: ${result.stderr ?? result.error}`);
  return { installed: true, path };
}

function which(binary) {
  const result = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** A TCP port free on 127.0.0.1 right now (the OS picks it; a race with others is possible). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** `count` distinct free ports. */
export async function freePorts(count) {
  const ports = new Set();
  for (let i = 0; ports.size < count && i < count * 10; i += 1) ports.add(await freePort());
  return [...ports];
}

/**
 * Resolves once a line of the child's stdout/stderr includes `text`; rejects if the child exits
 * first or `timeoutMs` passes (the error carries the output seen, to say why).
 */
export function waitForText(child, text, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let seen = '';
    const cleanup = () => {
      clearTimeout(timer);
      child.stdout.off('data', onData);
      child.stderr.off('data', onData);
      child.off('exit', onExit);
    };
    const onData = (chunk) => {
      seen += chunk.toString('utf8');
      if (seen.includes(text)) {
        cleanup();
        resolve();
      } else if (seen.length > 65_536) seen = seen.slice(-16_384);
    };
    const onExit = (code) => {
      cleanup();
      reject(new Error(`process exited (${code}) before "${text}": ${seen.slice(-2000)}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`no "${text}" within ${timeoutMs} ms: ${seen.slice(-2000)}`));
    }, timeoutMs);
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Resolves once 127.0.0.1:`port` accepts a connection; rejects after `timeoutMs`. */
export async function waitForPort(port, timeoutMs = 30_000) {
  const deadlineMs = Date.now() + timeoutMs;
  while (Date.now() < deadlineMs) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`port ${port} not accepting within ${timeoutMs} ms`);
}

/** Resolves once GET http://127.0.0.1:port`path` answers 200; rejects after `timeoutMs`. */
export async function waitForHttp200(port, path, timeoutMs = 60_000) {
  const deadlineMs = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadlineMs) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = String(res.status);
    } catch (error) {
      last = String(error?.cause?.code ?? error);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`GET ${path} on ${port} not 200 within ${timeoutMs} ms (last: ${last})`);
}

/** Temporary directories not yet removed; an exit (normal, error or signal) removes them. */
const liveDirs = new Set();
let exitHooked = false;

/**
 * A fresh temporary directory under the OS temp dir; remove it with removeDir. Whatever is still
 * here when the process exits is removed then (after the tracked children were killed).
 */
export function tempDir(prefix) {
  if (!exitHooked) {
    exitHooked = true;
    process.on('exit', () => {
      for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
    });
  }
  const dir = mkdtempSync(join(os.tmpdir(), `mq-compare-${prefix}-`));
  liveDirs.add(dir);
  return dir;
}

export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  liveDirs.delete(dir);
}

/**
 * removeDir off the event loop: while a running target's links pass through proxies in this
 * process (ProxyMesh), a synchronous delete of gigabytes stalls every link for its duration.
 */
export async function removeDirAsync(dir) {
  await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  liveDirs.delete(dir);
}

/**
 * Resident memory of a process now and at its peak, in bytes (VmRSS, VmHWM from /proc).
 * Undefined fields where /proc is unavailable or the process is gone.
 */
export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name) => {
      const m = status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'));
      return m === null ? undefined : Number(m[1]) * 1024;
    };
    return { rssBytes: kb('VmRSS'), rssPeakBytes: kb('VmHWM') };
  } catch {
    return { rssBytes: undefined, rssPeakBytes: undefined };
  }
}
