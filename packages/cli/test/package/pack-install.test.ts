// The packages as a user gets them: `npm pack` the published workspaces, install the tarballs
// into fresh directories outside the repository (the CLI with what it depends on; the client
// alone), start `mq serve` from the installed `mq`, and use it from the installed CLI and from
// the client README's examples run with the installed client.

import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MqClient, isMqClientError } from '@spoolmq/client';
import { fencedBlocks, section } from '../markdown.js';
import { type RunResult, type ServeHandle, run, startServe, userEnv } from '../user-shell.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** What `mq` needs at run time, and the client; testkit stays private. */
const PUBLISHED = ['engine', 'raft', 'protocol', 'client', 'gateway', 'member', 'cli'];
const NPM_TIMEOUT_MS = 180_000;
const COMMAND_TIMEOUT_MS = 30_000;
/** A test of a few commands, each a process start on a loaded 2-core machine. */
const TEST_TIMEOUT_MS = 240_000;

let work: string;
let cliApp: string;
let clientApp: string;
let serve: ServeHandle | undefined;
let key: string;

/** npm as a user runs it: no npm_* variables of the npm that may be running vitest. */
async function npm(args: readonly string[], cwd: string): Promise<string> {
  const result = await run('npm', args, { cwd, env: userEnv(), timeoutMs: NPM_TIMEOUT_MS });
  if (result.code !== 0) {
    throw new Error(`npm ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
  }
  return result.stdout;
}

/** An empty project at `dir` with `tarballs` (file names in `work`) installed. */
async function installFresh(dir: string, tarballs: readonly string[]): Promise<void> {
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), '{ "name": "app", "private": true }\n');
  // No install scripts are needed (classic-level ships prebuilt binaries). The cache `npm ci`
  // filled serves the third-party packages; the registry is asked only for what it lacks.
  const flags = ['--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'];
  await npm(['install', ...flags, ...tarballs.map((name) => join(work, name))], dir);
}

/** The installed `mq`, run as a user types it, with no config file in reach (HOME: work). */
function mq(args: readonly string[], input?: string): Promise<RunResult> {
  const env = userEnv({
    HOME: work,
    MQ_URL: serve!.baseUrl,
    MQ_ADMIN_URL: serve!.adminUrl,
    MQ_KEY: key,
  });
  const bin = join(cliApp, 'node_modules/.bin/mq');
  const options = { cwd: cliApp, env, timeoutMs: COMMAND_TIMEOUT_MS };
  return run(bin, args, input === undefined ? options : { ...options, input });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'mq-pack-'));
  const workspaces = PUBLISHED.flatMap((name) => ['--workspace', `packages/${name}`]);
  await npm(['pack', ...workspaces, '--pack-destination', work], REPO_ROOT);
  const tarballs = readdirSync(work).filter((name) => name.endsWith('.tgz'));
  expect(tarballs.sort()).toEqual(PUBLISHED.map((name) => `spoolmq-${name}-0.1.0.tgz`).sort());
  cliApp = join(work, 'cli-app');
  clientApp = join(work, 'client-app');
  await Promise.all([
    installFresh(cliApp, tarballs),
    installFresh(clientApp, ['spoolmq-client-0.1.0.tgz']),
  ]);
  serve = await startServe(join(cliApp, 'node_modules/.bin/mq'), cliApp, userEnv({ HOME: work }));
  const created = await mq(['admin', 'accounts', 'create', 'demo', '-q']);
  expect(created.code, created.stderr).toBe(0);
  key = created.stdout.trim();
}, 2 * NPM_TIMEOUT_MS + 60_000);

afterAll(async () => {
  const status = await serve?.stop();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
  expect(status ?? 0, 'mq serve stops cleanly on SIGTERM').toBe(0);
}, 30_000);

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)));
}

/** The client README's examples: each ```js block whose first line names its file. */
function clientExamples(): Map<string, string> {
  const readme = readFileSync(join(REPO_ROOT, 'packages/client/README.md'), 'utf8');
  const scripts = new Map<string, string>();
  for (const block of fencedBlocks(readme)) {
    const name = /^\/\/ (\S+\.mjs)\n/.exec(block.body)?.[1];
    if (block.info === 'js' && name !== undefined) scripts.set(name, `${block.body}\n`);
  }
  return scripts;
}

/** The root README's client example, pointed at the test's server instead of port 8080. */
function readmeClientExample(baseUrl: string): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const blocks = fencedBlocks(section(readme, 'Client')).filter((block) => block.info === 'js');
  expect(blocks).toHaveLength(1);
  return `${blocks[0]!.body.replaceAll('http://127.0.0.1:8080/v1', baseUrl)}\n`;
}

describe('the packed packages, installed outside the repository', () => {
  it('are real copies of built JS and type declarations, licensed, without sources', () => {
    const license = readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8');
    for (const name of PUBLISHED) {
      const dir = join(cliApp, 'node_modules/@spoolmq', name);
      expect(lstatSync(dir).isDirectory(), `${name} is a directory, not a link`).toBe(true);
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      const identity = { name: `@spoolmq/${name}`, version: '0.1.0', license: 'MIT' };
      expect(manifest).toMatchObject(identity);
      expect(manifest.private).toBeUndefined();
      expect(readFileSync(join(dir, 'LICENSE'), 'utf8')).toBe(license);
      const files = filesUnder(dir);
      const wanted = ['README.md', 'dist/index.js', 'dist/index.d.ts'];
      expect(files).toEqual(expect.arrayContaining(wanted));
      const unwanted = files.filter((file) => /(?<!\.d)\.ts$|\.map$|tsbuildinfo|^src\//.test(file));
      expect(unwanted, name).toEqual([]);
    }
    expect(readdirSync(join(clientApp, 'node_modules/@spoolmq'))).toEqual(['client']);
    const clientFiles = filesUnder(join(clientApp, 'node_modules/@spoolmq/client'));
    expect(clientFiles).toContain('dist/index.d.ts');
  });

  it('mq send and mq recv work against mq serve, all from the installed CLI', async () => {
    const created = await mq(['queues', 'create', 'jobs']);
    expect(created).toMatchObject({ code: 0, stdout: 'created jobs\n' });
    const sent = await mq(['send', 'jobs', 'hello from the tarball']);
    expect(sent.stdout).toMatch(/^sent \d{16}\n$/);
    expect((await mq(['send', 'jobs'], 'from stdin')).code).toBe(0);
    expect(await mq(['recv', 'jobs', '--ack'])).toMatchObject({
      code: 0,
      stdout: 'hello from the tarball',
    });
    expect(await mq(['recv', 'jobs', '--wait', '1', '--ack'])).toMatchObject({
      code: 0,
      stdout: 'from stdin',
    });
    expect(await mq(['recv', 'jobs'])).toMatchObject({ code: 3, stderr: 'no message in jobs\n' });
    expect((await mq(['--version'])).stdout).toBe('0.1.0\n');
  }, TEST_TIMEOUT_MS);

  it("runs the client README's producer, worker and failure examples", async () => {
    const scripts = clientExamples();
    expect([...scripts.keys()]).toEqual(['producer.mjs', 'worker.mjs', 'failures.mjs']);
    for (const [name, body] of scripts) writeFileSync(join(clientApp, name), body);
    const env = userEnv({ HOME: work, MQ_URL: serve!.baseUrl, MQ_KEY: key });
    const node = (script: string): Promise<RunResult> =>
      run(process.execPath, [script], { cwd: clientApp, env, timeoutMs: COMMAND_TIMEOUT_MS });

    const produced = await node('producer.mjs');
    expect(produced.code, produced.stderr).toBe(0);
    expect(produced.stdout).toMatch(/^(sent \d{16}\n){3}$/);

    const worker = spawn(process.execPath, ['worker.mjs'], { cwd: clientApp, env });
    let workerOut = '';
    worker.stdout.on('data', (chunk: Buffer) => (workerOut += chunk.toString('utf8')));
    worker.stderr.on('data', (chunk: Buffer) => (workerOut += chunk.toString('utf8')));
    const workerExit = new Promise<number | null>((resolve) => worker.once('exit', resolve));
    const client = new MqClient({ baseUrl: serve!.baseUrl, apiKey: key });
    const emails = async () => (await client.stats({ queues: ['emails'] })).queues.items[0]?.stats;
    try {
      // Two delivered and acked; the bounce nacked at its delivery and both redeliveries.
      await expect
        .poll(emails, { timeout: 60_000 })
        .toMatchObject({ visible: 0, pending: 0, failed: 1, ackedTotal: 2 });
    } finally {
      worker.kill('SIGINT');
    }
    expect(await workerExit, workerOut).toBe(0);
    expect(workerOut.match(/^delivered \d{16} to \S+@example.com$/gm)).toHaveLength(2);
    const bounces = /^handler: mailbox bounce@example.com does not exist$/gm;
    expect(workerOut.match(bounces)).toHaveLength(3);
    expect(workerOut).toMatch(/stopped: \{"received":5,"acked":2,"nacked":3,"handlerErrors":3,/);

    const failures = await node('failures.mjs');
    expect(failures.code, failures.stderr).toBe(0);
    const failedLine = /^failed \d{16} after 2 retries: \{"to":"bounce@example.com"\}\n$/;
    expect(failures.stdout).toMatch(failedLine);
    expect(await emails()).toMatchObject({ total: 0, failed: 0, discardedTotal: 1 });
  }, TEST_TIMEOUT_MS);

  it("runs the root README's client example with the installed client", async () => {
    // The example sends to `jobs`, which the walk-through before it created (and drained).
    const client = new MqClient({ baseUrl: serve!.baseUrl, apiKey: key });
    await client.createQueue('jobs').catch((error: unknown) => {
      if (!isMqClientError(error) || error.kind !== 'queue_exists') throw error;
    });
    writeFileSync(join(clientApp, 'readme.mjs'), readmeClientExample(serve!.baseUrl));
    const env = userEnv({ HOME: work, MQ_KEY: key });
    const options = { cwd: clientApp, env, timeoutMs: COMMAND_TIMEOUT_MS };
    const result = await run(process.execPath, ['readme.mjs'], options);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('hello\n');
  }, TEST_TIMEOUT_MS);
});
