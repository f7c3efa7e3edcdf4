// The README's "Try it" walk-through, run as written: every ```sh block of that section, in order,
// in one bash with `set -e`, in a fresh directory that looks like the repository to it
// (node_modules linked), against a real `mq serve` started there as `npm start` would. The only
// change is the address: the server listens on ports the kernel picks, so the documented
// defaults (127.0.0.1:8080 and :8081) are replaced by those, and MQ_URL / MQ_ADMIN_URL point at
// them as a user on other ports would set them.

import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedBlocks, section } from '../markdown.js';
import { type ServeHandle, run, startServe, userEnv } from '../user-shell.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
// About 20 `mq` starts: 15 s on a quiet machine, 125 s at a load of 20 on 2 cores.
const WALK_TIMEOUT_MS = 300_000;

let home: string;
let serve: ServeHandle | undefined;

/** PATH without any node_modules/.bin: the README's own PATH line must bring `mq`. */
function pathWithoutNpmBins(): string {
  const entries = (userEnv()['PATH'] ?? '').split(':');
  return entries.filter((entry) => !entry.includes('node_modules')).join(':');
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'mq-readme-'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(home, 'node_modules'));
  const mqBin = join(REPO_ROOT, 'node_modules/.bin/mq');
  serve = await startServe(mqBin, home, userEnv({ HOME: home }));
}, 90_000);

afterAll(async () => {
  const status = await serve?.stop();
  if (home !== undefined) rmSync(home, { recursive: true, force: true });
  expect(status ?? 0, 'mq serve stops cleanly on SIGTERM').toBe(0);
}, 30_000);

/** The walk-through's shell blocks, with the documented addresses replaced by the test's. */
function walkThrough(api: URL, admin: URL): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  return fencedBlocks(section(readme, 'Try it'))
    .filter((block) => block.info === 'sh')
    .map((block) =>
      block.body
        .replaceAll('http://127.0.0.1:8080', api.origin)
        .replaceAll('127.0.0.1:8081', admin.host),
    );
}

describe("the README's walk-through", () => {
  it('runs, every command of it, against mq serve', async () => {
    const api = new URL(serve!.baseUrl);
    const admin = new URL(serve!.adminUrl);
    const blocks = walkThrough(api, admin);
    const script = blocks.join('\n');
    // The walk-through shows each of these; a rewrite that drops one should be deliberate.
    for (const command of ['admin', 'queues', 'send', 'recv', 'stats', 'peek', 'redrive']) {
      expect(script, `mq ${command}`).toMatch(new RegExp(`^(\\S+ \\| )?mq ${command}\\b`, 'm'));
    }
    expect(script).toMatch(/^mq discard /m);
    expect(script).toMatch(/^curl /m);
    const path = join(home, 'walk-through.sh');
    writeFileSync(
      path,
      [
        'set -euo pipefail',
        `trap 'echo "README command failed (exit $?): $BASH_COMMAND" >&2' ERR`,
        ...blocks,
        '',
      ].join('\n'),
    );
    const env = userEnv({
      HOME: home,
      PATH: pathWithoutNpmBins(),
      MQ_URL: serve!.baseUrl,
      MQ_ADMIN_URL: serve!.adminUrl,
    });
    const result = await run('bash', [path], { cwd: home, env, timeoutMs: WALK_TIMEOUT_MS });
    expect(result.code, `${result.stderr}\n${result.stdout}`).toBe(0);
    expect(result.stdout).toContain('created jobs\n');
    expect(result.stdout).toMatch(/^sent 0000000000000001$/m);
    expect(result.stdout).toMatch(/^hello/m);
    expect(result.stdout).toContain('"payload":{"text":"from a pipe\\n"}');
    // peek prints the payload as it is (no newline added), so discard's line follows on.
    expect(result.stdout).toContain('in a minutediscarded 1\n');
    expect(result.stdout).toMatch(/^flaky +0 +0 +0 +1 /m);
    expect(result.stderr).toContain('recovered 1 of 1');
    expect(result.stdout.match(/try me/g)).toHaveLength(2);
    expect(result.stdout).toMatch(/HTTP\/1\.1 201 Created\r?\n/);
    expect(result.stdout).toMatch(/HTTP\/1\.1 200 OK\r?\n/);
  }, WALK_TIMEOUT_MS + 10_000);
});
