// The tidy check (scripts/tidy.mjs) on fixtures: a file that breaks every rule fails with each
// violation at its line, the same file outside the pure roots is judged on lengths only, and a
// clean file passes. The tree itself is checked by `npm test` running the script.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tidyFile } from './tidy.mjs';

const script = fileURLToPath(new URL('./tidy.mjs', import.meta.url));
const violations = fileURLToPath(new URL('./tidy-fixtures/violations.ts.txt', import.meta.url));
const clean = fileURLToPath(new URL('./tidy-fixtures/clean.ts.txt', import.meta.url));

function judge(file: string, as: string): string[] {
  return tidyFile(as, readFileSync(file, 'utf8')).map((v) => `${v.line} ${v.rule}`);
}

/** The fixture's findings by kind, at their lines. */
const LENGTHS = ['4 line-length', '6 function-length']; // a 106-column line, a 72-line function
const CLOCKS_AND_TIMERS = [
  '80 banned-call', // new Date()
  '81 banned-call', // Date.now
  '81 banned-call', // performance.now
  '85 banned-call', // setTimeout
  '86 banned-call', // setInterval
  '87 banned-call', // setImmediate
  '88 banned-call', // globalThis.setTimeout
];
const RANDOM_CALLS = [
  '92 banned-call', // Math.random
  '92 banned-call', // crypto.randomUUID
];
const RANDOM_IMPORT = '2 banned-call'; // randomBytes imported from node:crypto

describe('tidy', () => {
  it('reports every rule a file in a pure root breaks, at its line', () => {
    expect(judge(violations, 'packages/engine/src/violations.ts')).toEqual([
      RANDOM_IMPORT,
      ...LENGTHS,
      ...CLOCKS_AND_TIMERS,
      ...RANDOM_CALLS,
    ]);
  });

  it('judges the cluster layer and the Raft core as pure, other packages on lengths only', () => {
    const banned = (as: string) => judge(violations, as).filter((v) => v.endsWith('banned-call'));
    expect(banned('packages/member/src/cluster/violations.ts')).toHaveLength(10);
    expect(banned('packages/raft/src/core/violations.ts')).toHaveLength(10);
    expect(judge(violations, 'packages/cli/src/violations.ts')).toEqual(LENGTHS);
  });

  it('judges the gateway on clocks and timers, not on its random source', () => {
    expect(judge(violations, 'packages/gateway/src/violations.ts')).toEqual([
      ...LENGTHS,
      ...CLOCKS_AND_TIMERS,
    ]);
  });

  it('does not hold a conformance suite to the function length', () => {
    expect(judge(violations, 'packages/testkit/src/conformance/violations.ts')).toEqual([
      '4 line-length',
    ]);
  });

  it('passes a clean file: a Date of a given time, an injected clock, a hash', () => {
    expect(judge(clean, 'packages/engine/src/clean.ts')).toEqual([]);
  });

  it('prints file:line and the rule, and exits non-zero, on a violation', () => {
    const run = (file: string) =>
      spawnSync(process.execPath, [script, '--as', 'packages/engine/src/fixture.ts', file], {
        encoding: 'utf8',
      });
    const failed = run(violations);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain(
      'packages/engine/src/fixture.ts:85: banned-call: setTimeout is a real timer',
    );
    expect(failed.stdout).toContain('tidy: 1 files, 12 violations');
    const passed = run(clean);
    expect(passed.status).toBe(0);
    expect(passed.stdout).toContain('tidy: 1 files, 0 violations');
  });
});
