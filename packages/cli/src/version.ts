// The CLI's version, read once from its package.json (one level above src/ and dist/ alike).

import { readFileSync } from 'node:fs';

/** The version field of packages/cli/package.json. */
export function cliVersion(): string {
  const text = readFileSync(new URL('../package.json', import.meta.url), 'utf8');
  const parsed = JSON.parse(text) as { version?: unknown };
  return typeof parsed.version === 'string' ? parsed.version : '0.0.0';
}
