// Checks on what the members logged, beside the history: a chaos run injects one fault at a
// time, so every acknowledged payload keeps a good copy on a majority, and a member reporting a
// payload it could not repair from any replica (`payload_unrepaired`) shows a bug in the repair,
// not bad luck.

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckReport, Violation } from './report.js';

/** The `payload_unrepaired` lines of every member log under `logsDir`, as violations. */
export async function unrepairedPayloads(logsDir: string): Promise<Violation[]> {
  const found: Violation[] = [];
  for (const file of (await readdir(logsDir)).filter((name) => name.endsWith('.log')).sort()) {
    const text = await readFile(join(logsDir, file), 'utf8');
    for (const line of text.split('\n')) {
      if (!line.includes('"payload_unrepaired"')) continue;
      found.push({
        category: 'unrepaired',
        explanation: `${file.replace(/\.log$/, '')} logged a payload no replica could repair`,
        excerpt: [line.slice(0, 400)],
      });
    }
  }
  return found;
}

/** `report` with `violations` added to its `unrepaired` category (first `examplesMax` kept). */
export function withLogViolations(
  report: CheckReport,
  violations: readonly Violation[],
  examplesMax: number,
): CheckReport {
  if (violations.length === 0) return report;
  const unrepaired = { count: violations.length, examples: violations.slice(0, examplesMax) };
  return { ...report, valid: false, violations: { ...report.violations, unrepaired } };
}
