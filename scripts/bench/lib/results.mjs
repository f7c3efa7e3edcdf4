// Writes a benchmark's results as JSON under bench-results/ at the repository root.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Repository root (three levels above this file: scripts/bench/lib). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Writes `bench-results/<name>.json` (pretty-printed) and returns its path.
 * The object should carry `machine` (machineInfo()), `command` and `startedAt` besides results.
 * @param {string} name benchmark name, [a-z0-9-]+
 * @param {object} data
 */
export function writeResults(name, data) {
  if (!/^[a-z0-9-]+$/.test(name)) throw new Error(`bad results name: ${name}`);
  const dir = new URL('bench-results/', `file://${REPO_ROOT}`);
  mkdirSync(dir, { recursive: true });
  const path = fileURLToPath(new URL(`${name}.json`, dir));
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}
