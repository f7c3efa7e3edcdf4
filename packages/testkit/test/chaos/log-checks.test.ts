import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { check } from '../../src/chaos/checker.js';
import { History } from '../../src/chaos/history.js';
import { unrepairedPayloads, withLogViolations } from '../../src/chaos/log-checks.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function logs(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mq-log-checks-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const EMPTY_FINAL = { collectedAtMs: 0, queues: [] };

describe('member log checks', () => {
  it('turn each payload_unrepaired line into an unrepaired violation, and the run invalid', async () => {
    const line = '{"level":50,"event":"payload_unrepaired","spool":"s","queue":"q","seq":7}';
    const dir = await logs({ 'n1.log': `{"event":"x"}\n${line}\n`, 'n2.log': '', 'notes.txt': line });
    const found = await unrepairedPayloads(dir);
    expect(found).toEqual([
      { category: 'unrepaired', explanation: expect.stringContaining('n1 logged'), excerpt: [line] },
    ]);
    const clean = check(new History(), EMPTY_FINAL);
    expect(clean.valid).toBe(true);
    const report = withLogViolations(clean, found, 5);
    expect(report.valid).toBe(false);
    expect(report.violations.unrepaired.count).toBe(1);
  });

  it('leave a run valid when no member logged one', async () => {
    const dir = await logs({ 'n1.log': '{"event":"leader_changed"}\n' });
    const clean = check(new History(), EMPTY_FINAL);
    expect(withLogViolations(clean, await unrepairedPayloads(dir), 5)).toBe(clean);
  });
});
