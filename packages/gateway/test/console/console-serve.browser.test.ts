// The console in Chromium against a real `mq serve`: sign in (a mistyped key gets a clear
// message), the queues page, a queue's page, peek, a test send, and a bulk redrive of N failed
// messages that is stopped half way and resumed. No console errors on any page.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ServeProcess, ensureCliBuilt } from '@spoolmq/testkit';
import { collectErrors, launchChromium, screenshot } from './browser.js';

const START_TIMEOUT_MS = 180_000;
const FAILED = 12;
const STOP_AFTER = 5;
const QUEUE = 'jobs';
/** The one error a refused sign-in leaves: Chromium reports the 401 of the check. */
const REFUSED_KEY_ERROR = /Failed to load resource: the server responded with a status of 401/;

let serve: ServeProcess | undefined;
let browser: Browser | undefined;
let apiKey = '';

function root(): string {
  return new URL('/', serve!.baseUrl).toString();
}

async function api(method: string, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { authorization: `Bearer ${apiKey}`, ...(init.headers ?? {}) };
  const url = `${serve!.baseUrl}/spools/default${path}`;
  const response = await fetch(url, { ...init, method, headers });
  if (response.status >= 400) {
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  }
  return response;
}

/** N messages in `queue`, each received and failed: the failure queue holds N. */
async function failMessages(count: number, queue = QUEUE): Promise<void> {
  await api('PUT', `/queues/${queue}`, {
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ maxRetries: 0 }),
  });
  for (let i = 0; i < count; i++) {
    await api('POST', `/queues/${queue}/send`, { body: JSON.stringify({ order: i }) });
    await receiveAndFail(queue);
  }
}

async function receiveAndFail(queue: string): Promise<void> {
  const delivery = await api('POST', `/queues/${queue}/recv?waitSeconds=0`);
  await delivery.arrayBuffer();
  await api('POST', '/fail', { headers: { 'svc-lease': delivery.headers.get('svc-lease')! } });
}

async function queueCounts(queue = QUEUE): Promise<{ failed: number; visible: number }> {
  const stats = (await (await api('GET', `/stats?queue=${queue}`)).json()) as {
    queues: { items: { stats: { failed: number; visible: number } }[] };
  };
  return stats.queues.items[0]!.stats;
}

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${root()}console/`);
  await page.fill('#credential', key);
  await page.click('#sign-in button[type=submit]');
}

beforeAll(async () => {
  // First: without Chromium the suite fails at once with how to install it.
  browser = await launchChromium();
  await ensureCliBuilt();
  serve = await ServeProcess.start();
  apiKey = await serve.apiKey();
  await failMessages(FAILED);
}, START_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await serve?.stop();
}, 60_000);

describe('console on mq serve', () => {
  it('tells a mistyped key apart, then signs in and shows the queues', async () => {
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    const last = apiKey.at(-1) === 'x' ? 'y' : 'x';
    await signIn(page, `${apiKey.slice(0, -1)}${last}`);
    await expect.poll(() => page.textContent('#sign-in-error')).toContain('is not recognized');
    await screenshot(page, 'sign-in-refused');
    expect(errors.filter((e) => !REFUSED_KEY_ERROR.test(e))).toEqual([]);
    errors.length = 0;

    await page.fill('#credential', apiKey);
    await page.click('#sign-in button[type=submit]');
    const row = page.locator(`#queues-table tr[data-queue="${QUEUE}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe(String(FAILED));
    expect(await page.textContent('#tile-failed .tile-value')).toBe(String(FAILED));
    await screenshot(page, 'queues');
    await page.click('#live .window-toggle button:text-is("last 5 min")');
    await expect.poll(() => page.locator('#live figcaption').allTextContents()).toEqual([
      'Messages by state, last 5 min',
      'Rates per second, last 5 min',
    ]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('redrives every failed message, stopped half way and resumed', async () => {
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    await signIn(page, apiKey);
    await page.click(`#queues-table a[href="#/queue/${QUEUE}"]`);
    await expect.poll(() => page.textContent('#queue-failed .tile-value')).toBe(String(FAILED));
    await page.locator('#failures tbody tr').first().waitFor();
    await screenshot(page, 'queue-failed');

    // Hold the STOP_AFTER-th recover until Stop is clicked: the run then ends after it.
    let calls = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached: () => void = () => {};
    const reachedHold = new Promise<void>((resolve) => (reached = resolve));
    await page.route('**/v1/spools/default/recover', async (route) => {
      calls += 1;
      if (calls === STOP_AFTER) {
        reached();
        await held;
      }
      await route.continue();
    });
    await page.click('#recover-all');
    await reachedHold;
    await page.click('.bulk button:text-is("Stop")');
    release();
    const status = page.locator('#redrive-status');
    await expect.poll(() => status.textContent()).toBe(`Recovered ${STOP_AFTER} of ${FAILED}`);
    expect((await queueCounts()).failed).toBe(FAILED - STOP_AFTER);
    await screenshot(page, 'redrive-stopped');

    await page.unroute('**/v1/spools/default/recover');
    await page.click('.bulk button:text-is("Resume")');
    await expect.poll(() => status.textContent()).toBe(`Recovered ${FAILED} of ${FAILED}`);
    expect(await queueCounts()).toMatchObject({ failed: 0, visible: FAILED });
    expect(await page.getAttribute('#redrive-progress', 'value')).toBe(String(FAILED));
    await screenshot(page, 'redrive-done');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('peeks a payload and sends a test message', async () => {
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    await signIn(page, apiKey);
    // Signed in once the queues page shows; a navigation before that would be overridden.
    await page.locator('#queues-table').waitFor();
    await page.goto(`${root()}console/#/queue/${QUEUE}`);
    // The redriven messages are visible again: the page shows how long the oldest has waited.
    const oldest = () => page.textContent('#queue-oldest .tile-value');
    await expect.poll(oldest).toMatch(/^\d+ (s|min \d+ s)$/);
    await page.locator('#messages tbody tr button:text-is("Peek")').first().click();
    await expect.poll(() => page.textContent('#payload')).toContain('"order"');
    await page.click('.peek-head button:text-is("hex")');
    await expect.poll(() => page.textContent('#payload')).toMatch(/^00000000 {2}7b 22 6f/);
    const before = (await queueCounts()).visible;
    await page.click('#send-form button[type=submit]');
    await expect.poll(() => page.textContent('#banner')).toContain('Message sent.');
    expect((await queueCounts()).visible).toBe(before + 1);
    await screenshot(page, 'queue-peek');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('creates a queue, updates its settings and deletes it', async () => {
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    await signIn(page, apiKey);
    await page.locator('#queues-table').waitFor();
    await page.click('summary:text-is("Create a queue")');
    await page.fill('#create-queue input[name=name]', 'scratch');
    await page.fill('#create-queue input[name=maxRetries]', '2');
    await page.click('#create-queue button[type=submit]');
    await page.locator('#queues-table tr[data-queue="scratch"]').waitFor();
    await page.click('#queues-table a[href="#/queue/scratch"]');
    const maxRetries = page.locator('#settings-form input[name=maxRetries]');
    await expect.poll(() => maxRetries.inputValue()).toBe('2');
    await maxRetries.fill('7');
    await page.click('#settings-form button[type=submit]');
    await expect.poll(() => page.textContent('#banner')).toBe('Settings saved.');
    const view = (await (await api('GET', '/queues/scratch')).json()) as {
      settings: { maxRetries: number };
    };
    expect(view.settings.maxRetries).toBe(7);
    await page.selectOption('select[name=mode]', 'force');
    await page.click('#delete-queue');
    await page.click('#delete-queue');
    await expect.poll(() => new URL(page.url()).hash).toBe('#/queues');
    await page.locator(`#queues-table tr[data-queue="${QUEUE}"]`).waitFor();
    expect(await page.locator('#queues-table tr[data-queue="scratch"]').count()).toBe(0);
    const gone = await fetch(`${serve!.baseUrl}/spools/default/queues/scratch`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(gone.status).toBe(404);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('ends a redrive at the count it began with when recovered messages fail again', async () => {
    const flaky = 'flaky';
    await failMessages(3, flaky);
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    await signIn(page, apiKey);
    await page.locator('#queues-table').waitFor();
    await page.goto(`${root()}console/#/queue/${flaky}`);
    await page.locator('#failures tbody tr').first().waitFor();
    // A consumer that fails everything: each recovered message is received and failed again
    // before the page lists failed messages anew.
    let refailed = Promise.resolve();
    let recovers = 0;
    page.on('response', (response) => {
      if (!response.url().endsWith('/recover') || response.status() !== 204) return;
      recovers += 1;
      refailed = refailed.then(() => receiveAndFail(flaky));
    });
    await page.route('**/messages?state=failed*', async (route) => {
      await refailed;
      await route.continue();
    });
    await page.click('#recover-all');
    const status = page.locator('#redrive-status');
    await expect.poll(() => status.textContent()).toBe('Recovered 3 of 3');
    await refailed;
    expect(recovers).toBe(3);
    expect((await queueCounts(flaky)).failed).toBe(3);
    expect(await page.isHidden('.bulk button:text-is("Resume")')).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('computes rates over at least 5 s, never over two samples a moment apart', async () => {
    const page = await browser!.newPage();
    await page.goto(`${root()}console/`);
    // [tMs, cumulative count]: a sample 1 s after the first, then a restart (the count drops).
    // A string, so the test runner leaves the browser's own import() alone.
    const points = '[[0, 0], [1000, 100], [6000, 600], [12000, 600], [18000, 60]]';
    const rates = await page.evaluate(
      `import('/console/public-pages.js').then((m) => m.ratePoints(${points}))`,
    );
    expect(rates).toEqual([[6_000, 100], [12_000, 0], [18_000, 0]]);
    await page.close();
  });
});

describe('admin console on mq serve', () => {
  it('shows the member, its spool, the accounts and the plans on the admin listener', async () => {
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    await page.goto(`${serve!.admin.rootUrl}/console/`);
    await page.fill('#credential', serve!.admin.token);
    await page.click('#sign-in button[type=submit]');
    await page.locator('#spools-table tbody tr').first().waitFor();
    const members = await page.locator('#members-table tbody tr td:first-child').allTextContents();
    expect(members).toEqual(['n1']);
    expect(await page.textContent('#tile-orphans .tile-value')).toBe('0');
    await screenshot(page, 'serve-admin-cluster');
    await page.click('#nav a[href="#/accounts"]');
    await page.locator('#accounts-table tbody tr').first().waitFor();
    await page.click('#nav a[href="#/plans"]');
    await page.locator('#plans-table tbody tr').first().waitFor();
    await screenshot(page, 'serve-admin-plans');
    expect(errors).toEqual([]);
    await page.close();
  });
});
