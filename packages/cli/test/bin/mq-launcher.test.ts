// The `mq` launcher (bin/mq) run as npm links it, against a stand-in entry point that reports
// what it was given: its arguments, its environment, node's flags and its process id.

import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const BIN = fileURLToPath(new URL('../../bin/', import.meta.url));

const STAND_IN = `
const seen = {
  args: process.argv.slice(2),
  threshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
  execArgv: process.execArgv,
  pid: process.pid,
};
require('node:fs').writeFileSync(process.env.SEEN_FILE, JSON.stringify(seen));
process.exit(Number(process.env.EXIT_CODE ?? 0));
`;

interface Seen {
  readonly args: string[];
  readonly threshold: string | null;
  readonly execArgv: string[];
  readonly pid: number;
}

let root: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'mq-launcher-'));
  mkdirSync(join(root, 'package/bin'), { recursive: true });
  mkdirSync(join(root, 'package/dist'));
  copyFileSync(join(BIN, 'mq'), join(root, 'package/bin/mq'));
  copyFileSync(join(BIN, 'mq.env'), join(root, 'package/bin/mq.env'));
  writeFileSync(join(root, 'package/dist/main.js'), STAND_IN);
  writeFileSync(join(root, 'package/package.json'), '{"type":"commonjs"}');
  // npm links a package's bin as a symlink in node_modules/.bin.
  mkdirSync(join(root, '.bin'));
  symlinkSync(join(root, 'package/bin/mq'), join(root, '.bin/mq'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function launch(args: string[], env: Record<string, string> = {}) {
  const seenFile = join(root, 'seen.json');
  rmSync(seenFile, { force: true });
  const child = spawnSync('sh', [join(root, '.bin/mq'), ...args], {
    env: { PATH: process.env['PATH'] ?? '', SEEN_FILE: seenFile, ...env },
    encoding: 'utf8',
  });
  const seen = existsSync(seenFile)
    ? (JSON.parse(readFileSync(seenFile, 'utf8')) as Seen)
    : undefined;
  return { status: child.status, stderr: child.stderr, seen, pid: child.pid };
}

describe('the mq launcher', () => {
  it('runs the entry point with the arguments as given and answers its exit status', () => {
    const args = ['send', 'a b', '', "it's", '--data=x y', '$HOME', '*'];
    const run = launch(args, { EXIT_CODE: '3' });
    expect(run.status).toBe(3);
    expect(run.seen?.args).toEqual(args);
  });

  it('sets the variables of mq.env, and keeps a value the caller set', () => {
    const line = readFileSync(join(BIN, 'mq.env'), 'utf8')
      .split('\n')
      .find((l) => l.startsWith('MALLOC_MMAP_THRESHOLD_='));
    expect(line).toBe('MALLOC_MMAP_THRESHOLD_=131072');
    expect(launch(['version']).seen?.threshold).toBe('131072');
    expect(launch(['version'], { MALLOC_MMAP_THRESHOLD_: '65536' }).seen?.threshold).toBe('65536');
    // Set to nothing asks for glibc's own default: unset, since glibc reads an empty value as 0.
    expect(launch(['version'], { MALLOC_MMAP_THRESHOLD_: '' }).seen?.threshold).toBeNull();
  });

  it('gives node the semi-space bound of MQ_SEMI_SPACE_MIB, then MQ_NODE_FLAGS', () => {
    const flags = ['--single-threaded-gc', '--stack-size=2000'];
    const semi = '--max-semi-space-size=8';
    const seen = (env: Record<string, string>) => launch(['version'], env).seen?.execArgv;
    expect(seen({ MQ_NODE_FLAGS: flags.join(' ') })).toEqual([semi, ...flags]);
    expect(seen({})).toEqual([semi]);
    expect(seen({ MQ_SEMI_SPACE_MIB: '4' })).toEqual(['--max-semi-space-size=4']);
    // Set to nothing: V8's own default.
    expect(seen({ MQ_SEMI_SPACE_MIB: '' })).toEqual([]);
    for (const bad of ['x', '8M', '0', '-1']) {
      const run = launch(['version'], { MQ_SEMI_SPACE_MIB: bad });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`MQ_SEMI_SPACE_MIB must be a whole number of MiB, got '${bad}'`);
      expect(run.seen).toBeUndefined();
    }
  });

  it('becomes node itself, so a signal to the process id it was started as reaches node', () => {
    const run = launch(['version']);
    expect(run.seen?.pid).toBe(run.pid);
  });

  it('says what is missing when nothing was built', () => {
    rmSync(join(root, 'package/dist/main.js'));
    const run = launch(['version']);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/mq: the command is not built yet: run `npm run build`/);
    expect(run.seen).toBeUndefined();
  });

  it('refuses a line of mq.env that is not a variable name, evaluating nothing of it', () => {
    const marker = join(root, 'evaluated');
    writeFileSync(join(root, 'package/bin/mq.env'), `X=1;touch ${marker}\nA;touch ${marker}=1\n`);
    const run = launch(['version']);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/mq\.env: not a variable name: A;touch/);
    expect(existsSync(marker)).toBe(false);
  });
});
