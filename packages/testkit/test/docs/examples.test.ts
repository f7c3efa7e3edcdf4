// The clients in docs/examples run against `mq serve` as a user would run them: each sends,
// receives and acks one message, and the queue is then empty with one ack counted. The Go
// example needs a Go toolchain, which CI machines may lack: without `go` on PATH its test is
// reported as skipped, with that reason in its name, rather than pretending to pass.

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api } from '../../src/conformance/api.js';
import { ServeProcess, ensureCliBuilt } from '../../src/cluster/index.js';

const run = promisify(execFile);
const examples = fileURLToPath(new URL('../../../../docs/examples/', import.meta.url));
/** A first `go run` compiles the standard library's net/http: slow on a loaded 2-core machine. */
const GO_RUN_TIMEOUT_MS = 240_000;
const PYTHON_TIMEOUT_MS = 60_000;

/** The first `name` on PATH, if any. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  return undefined;
}

const python = onPath('python3');
const go = onPath('go');

let serve: ServeProcess | undefined;
let api: Api | undefined;

beforeAll(async () => {
  await ensureCliBuilt();
  serve = await ServeProcess.start();
  const apiKey = await serve.apiKey();
  let next = 0;
  const newQueueName = (): string => `examples-${(next += 1)}`;
  api = new Api({ baseUrl: serve.baseUrl, apiKey, spool: 'default', newQueueName });
}, 180_000);

afterAll(async () => {
  await serve?.stop();
}, 60_000);

function exampleEnv(): NodeJS.ProcessEnv {
  if (serve === undefined || api === undefined) throw new Error('mq serve did not start');
  return { ...process.env, MQ_URL: serve.baseUrl, MQ_KEY: api.target.apiKey };
}

/** The queue the example used holds nothing now, and counted one send and one ack. */
async function expectOneMessageAcked(queue: string): Promise<void> {
  if (api === undefined) throw new Error('mq serve did not start');
  expect((await api.listMessagesOk(queue)).items).toEqual([]);
  const stats = await api.queueStats(queue);
  expect([stats.addedTotal, stats.ackedTotal, stats.total]).toEqual([1, 1, 0]);
}

describe('docs/examples', () => {
  const pythonTitle = 'python: sends, receives and acks against mq serve';
  it.skipIf(python === undefined)(pythonTitle, async () => {
    const script = join(examples, 'python', 'mq_example.py');
    const { stdout } = await run(python as string, [script, 'python-example'], {
      env: exampleEnv(),
      timeout: PYTHON_TIMEOUT_MS,
    });
    expect(stdout).toMatch(/^sent \S+ \(201\)\nreceived \S+: hello from python \(retries 0\)\n/);
    expect(stdout).toMatch(/\nacked \S+\n$/);
    await expectOneMessageAcked('python-example');
  }, PYTHON_TIMEOUT_MS + 10_000);

  const goTitle =
    go === undefined
      ? 'go: skipped, no go toolchain on PATH'
      : 'go: sends, receives and acks against mq serve';
  it.skipIf(go === undefined)(goTitle, async () => {
    const { stdout } = await run(go as string, ['run', '.', 'go-example'], {
      cwd: join(examples, 'go'),
      env: { ...exampleEnv(), GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
      timeout: GO_RUN_TIMEOUT_MS,
    });
    expect(stdout).toMatch(/^sent \S+ \(201\)\nreceived \S+: hello from go \(retries 0\)\n/);
    expect(stdout).toMatch(/\nacked \S+\n$/);
    await expectOneMessageAcked('go-example');
  }, GO_RUN_TIMEOUT_MS + 10_000);
});
