// The console in Chromium against a real three-member cluster behind a gateway: the queues page
// through the gateway, and on a member's admin listener the cluster, accounts, an account with a
// new key, and plans pages. No console errors on any page.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ProcessCluster, TEST_ACCOUNT, ensureCliBuilt } from '@spoolmq/testkit';
import { collectErrors, launchChromium, screenshot } from './browser.js';

const START_TIMEOUT_MS = 180_000;
let cluster: ProcessCluster | undefined;
let browser: Browser | undefined;
let apiKey = '';

beforeAll(async () => {
  // First: without Chromium the suite fails at once with how to install it.
  browser = await launchChromium();
  await ensureCliBuilt();
  cluster = await ProcessCluster.start({ members: 3 });
  try {
    await cluster.waitReady();
    apiKey = await cluster.apiKey();
    await cluster.waitPrimary('default');
    const put = await fetch(`${cluster.baseUrl}/spools/default/queues/emails`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(put.status).toBe(201);
  } catch (error) {
    await cluster.stop();
    cluster = undefined;
    throw error;
  }
}, START_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await cluster?.stop();
}, 60_000);

async function adminPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser!.newPage();
  const errors = collectErrors(page);
  await page.goto(`${cluster!.admin(0).rootUrl}/console/`);
  await page.fill('#credential', cluster!.adminToken);
  await page.click('#sign-in button[type=submit]');
  return { page, errors };
}

describe('console on a three-member cluster', () => {
  it('shows the queues through the gateway', async () => {
    const page = await browser!.newPage();
    const errors = collectErrors(page);
    await page.goto(`${new URL('/', cluster!.baseUrl)}console/`);
    await page.fill('#credential', apiKey);
    await page.click('#sign-in button[type=submit]');
    await page.locator('#queues-table tr[data-queue="emails"]').waitFor();
    await screenshot(page, 'cluster-queues');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows members, primaries and Raft groups on the admin listener', async () => {
    const { page, errors } = await adminPage();
    await page.locator('#spools-table tbody tr').first().waitFor();
    const members = await page.locator('#members-table tbody tr td:first-child').allTextContents();
    expect(members.sort()).toEqual(['n1', 'n2', 'n3']);
    const spools = await page.locator('#spools-table tbody tr').allTextContents();
    expect(spools.some((row) => row.startsWith(`${TEST_ACCOUNT}default`))).toBe(true);
    expect(await page.textContent('#tile-orphans .tile-value')).toBe('0');
    await screenshot(page, 'admin-cluster');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists accounts, creates, blocks and revokes a key, and lists plans', async () => {
    const { page, errors } = await adminPage();
    await page.locator('#spools-table').waitFor();
    await page.click('#nav a[href="#/accounts"]');
    await page.click(`#accounts-table a[href="#/account/${TEST_ACCOUNT}"]`);
    const keys = page.locator('#keys-table tbody tr');
    await keys.first().waitFor();
    const before = await keys.count();
    await page.click('#create-key');
    await expect.poll(() => page.textContent('#new-key pre')).toMatch(/\S{16,}/);
    expect(await keys.count()).toBe(before + 1);
    await screenshot(page, 'admin-account');
    await keys.last().locator('button:text-is("Block")').click();
    await expect.poll(() => keys.last().locator('td').nth(1).textContent()).toBe('blocked');
    const revoke = keys.last().locator('button.danger');
    await revoke.click();
    expect(await revoke.textContent()).toBe('Really revoke?');
    await revoke.click();
    await expect.poll(() => keys.count()).toBe(before);
    await page.click('#nav a[href="#/plans"]');
    await page.locator('#plans-table tbody tr').first().waitFor();
    await screenshot(page, 'admin-plans');
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('per-queue metrics on a member of the cluster', () => {
  it('are on the primary admin listener, behind the admin token', async () => {
    const primary = await cluster!.waitPrimary('default');
    const url = `${cluster!.admin(cluster!.ids.indexOf(primary)).rootUrl}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    const headers = { authorization: `Bearer ${cluster!.adminToken}` };
    const text = await (await fetch(url, { headers })).text();
    const labels = `account="${TEST_ACCOUNT}",spool="default",queue="emails"`;
    expect(text).toContain(`mq_queue_messages{${labels},state="visible"} 0`);
    expect(text).toContain(`mq_queue_oldest_visible_age_seconds{${labels}} 0`);
    expect(text).toContain('mq_queue_series_dropped 0');
  });
});

describe('operator log of a cluster member', () => {
  it('has one line for the new primary of a spool, with the fields to act on', async () => {
    const primary = await cluster!.waitPrimary('default');
    const node = cluster!.memberById(primary);
    const operatorLines = (): Record<string, unknown>[] =>
      readFileSync(node.logPath, 'utf8')
        .split('\n')
        .filter((line) => line.includes('"log":"operator"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const spool = `${TEST_ACCOUNT}/default`;
    const isPrimaryLine = (line: Record<string, unknown>): boolean =>
      line['event'] === 'leader_changed' && line['spool'] === spool && line['to'] === primary;
    // The operator log compares the member's status once a second: wait for that sample.
    await expect.poll(() => operatorLines().filter(isPrimaryLine).length, { timeout: 15_000 }).toBe(1);
    const line = operatorLines().find(isPrimaryLine)!;
    expect(line).toMatchObject({ level: 30, member: primary, role: 'leader' });
    expect(typeof line['term']).toBe('number');
    const was = String(line['from'] ?? 'none');
    const term = String(line['term']);
    expect(line['msg']).toBe(`spool ${spool} primary is now ${primary} (was ${was}, term ${term})`);
  });
});
