// Builds the `mq` command (tsc -b packages/cli: it and the packages it references) before a
// test starts it as a process. One build at a time across the test workers of a run: a lock
// directory serialises them, and a build that finds everything up to date takes a fraction of a
// second, so every worker simply builds once.

import { execFile } from 'node:child_process';
import { mkdir, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, TSC_BIN } from './repo-paths.js';

const run = promisify(execFile);
/** A lock older than this is left over from a killed build and is broken. */
const LOCK_STALE_MS = 300_000;
const LOCK_POLL_MS = 100;
/** Longest wait for another worker's build, then for our own. */
export const CLI_BUILD_TIMEOUT_MS = 300_000;

let built: Promise<void> | undefined;

/**
 * Resolves once packages/cli/dist is built from the current sources (once per process). Rejects
 * with the compiler's output when the build fails, or after CLI_BUILD_TIMEOUT_MS.
 */
export function ensureCliBuilt(): Promise<void> {
  built ??= buildUnderLock().catch((error: unknown) => {
    built = undefined;
    throw error;
  });
  return built;
}

async function buildUnderLock(): Promise<void> {
  const lock = join(tmpdir(), `mq-cli-build-${hashOf(REPO_ROOT)}.lock`);
  await acquire(lock);
  try {
    await run(process.execPath, [TSC_BIN, '-b', 'packages/cli'], {
      cwd: REPO_ROOT,
      timeout: CLI_BUILD_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      const output = `${error.stdout ?? ''}${error.stderr ?? ''}`;
      throw new Error(`tsc -b packages/cli failed: ${output}${error.message}`);
    });
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
}

async function acquire(lock: string): Promise<void> {
  const deadlineMs = Date.now() + CLI_BUILD_TIMEOUT_MS;
  while (Date.now() < deadlineMs) {
    try {
      await mkdir(lock);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const info = await stat(lock).catch(() => undefined);
    if (info !== undefined && Date.now() - info.mtimeMs > LOCK_STALE_MS) {
      await rmdir(lock).catch(() => undefined);
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  throw new Error(`timed out waiting for the build lock ${lock}`);
}

/** A short stable tag of a path, so two checkouts do not share a lock. */
function hashOf(text: string): string {
  let hash = 2_166_136_261;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 16_777_619) >>> 0;
  }
  return hash.toString(16);
}
