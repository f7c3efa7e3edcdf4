// The web console's static files (packages/gateway/console/), read once from the package and
// served from memory. A fixed list: nothing outside it is ever read, whatever the path asks for.

import { readFileSync } from 'node:fs';

/** The console's files and their content types; the page needs nothing else (no CDN). */
export const CONSOLE_FILES: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'api.js': 'text/javascript; charset=utf-8',
  'charts.js': 'text/javascript; charset=utf-8',
  'dom.js': 'text/javascript; charset=utf-8',
  'public-pages.js': 'text/javascript; charset=utf-8',
  'admin-pages.js': 'text/javascript; charset=utf-8',
  'redrive.js': 'text/javascript; charset=utf-8',
  'queue-page.js': 'text/javascript; charset=utf-8',
};

/**
 * The page's Content-Security-Policy: scripts and styles only from the console's own files (no
 * inline script), requests only to the same origin, never framed.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface ConsoleAsset {
  readonly body: Uint8Array;
  readonly contentType: string;
}

/** Where the files live, beside src/ and dist/ (both one level below the package root). */
const ASSET_DIR = new URL('../../console/', import.meta.url);

let loaded: ReadonlyMap<string, ConsoleAsset> | undefined;

/** Every console file, read on first use. Throws if the package lacks one (a broken build). */
export function consoleAssets(): ReadonlyMap<string, ConsoleAsset> {
  if (loaded !== undefined) return loaded;
  const assets = new Map<string, ConsoleAsset>();
  for (const [name, contentType] of Object.entries(CONSOLE_FILES)) {
    assets.set(name, { body: readFileSync(new URL(name, ASSET_DIR)), contentType });
  }
  loaded = assets;
  return assets;
}
