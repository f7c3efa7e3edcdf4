// The project's image, built from deploy/Dockerfile with testcontainers. The build context is
// the repository's files as git lists them (tracked and new, never ignored ones): the legacy
// builder ignores deploy/Dockerfile.dockerignore, and node_modules alone would be 100 MB.

import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GenericContainer } from 'testcontainers';
import { REPO_ROOT } from './repo-root.js';

/** The tag the suite builds (never `mq:latest`, which may be a user's own build). */
export const E2E_IMAGE = process.env['MQ_E2E_IMAGE'] ?? 'mq:e2e';

/** Copies what git would ship into a fresh directory: the build context. */
function stageContext(): string {
  const listed = execFileSync(
    'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const context = mkdtempSync(join(tmpdir(), 'mq-e2e-context-'));
  for (const path of listed.split('\0')) {
    // A file deleted in the work tree is still listed as cached until the deletion is staged.
    if (path === '' || !existsSync(join(REPO_ROOT, path))) continue;
    mkdirSync(join(context, dirname(path)), { recursive: true });
    cpSync(join(REPO_ROOT, path), join(context, path));
  }
  return context;
}

/** Builds E2E_IMAGE from deploy/Dockerfile; its name. */
export async function buildImage(): Promise<string> {
  const context = stageContext();
  const startedMs = performance.now();
  try {
    const [name, tag] = E2E_IMAGE.split(':');
    await GenericContainer.fromDockerfile(context, 'deploy/Dockerfile').build(
      `${name}:${tag ?? 'latest'}`,
      { deleteOnExit: false },
    );
  } catch (error) {
    throw new Error(
      `building ${E2E_IMAGE} from deploy/Dockerfile failed (without a registry, make its base ` +
        `image first: scripts/ci/local-base-image.sh): ${(error as Error).message}`,
    );
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
  const seconds = ((performance.now() - startedMs) / 1_000).toFixed(1);
  process.stdout.write(`e2e: built ${E2E_IMAGE} from deploy/Dockerfile in ${seconds} s\n`);
  return E2E_IMAGE;
}
