// Debian's chromium driven by playwright-core (which never downloads a browser): launching it,
// collecting console errors, saving screenshots under test-results/console (gitignored).

import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
export const SCREENSHOT_DIR = fileURLToPath(
  new URL('../../../../test-results/console/', import.meta.url),
);

/** The browser binary: MQ_CHROMIUM, else the first installed candidate. Throws when none is. */
export function chromiumPath(): string {
  const given = process.env['MQ_CHROMIUM'];
  const found = given ?? CANDIDATES.find((path) => existsSync(path));
  if (found === undefined || !existsSync(found)) {
    throw new Error(
      'The console browser tests need Chromium and found none at ' +
        `${given ?? CANDIDATES.join(', ')}. Install it with scripts/ci/install-chromium.sh ` +
        '(apt-get install -y chromium), or set MQ_CHROMIUM to its path.',
    );
  }
  return found;
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] });
}

/** Every console error and uncaught exception of `page`, in order. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  return errors;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
