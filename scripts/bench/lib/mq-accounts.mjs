// Accounts for benchmarks of `mq serve` and clusters, which check API keys: every server is
// started with MQ_ADMIN_TOKEN (a random token) and an admin port, and the bench creates the
// account `bench` (the default plan: no request cap) and uses its key.
import { randomBytes } from 'node:crypto';

/** A random admin token for a bench deployment. */
export function benchAdminToken() {
  return randomBytes(24).toString('base64url');
}

/**
 * Creates the account `bench` (if missing) through the admin API on `adminPort` and resolves a
 * new key of it. With `plan` (limits, see engine/src/plan.ts) the account gets the plan
 * `bench` with those limits instead of the default plan (a backlog beyond its 1 GiB).
 * Rejects with the admin API's answer otherwise.
 */
export async function benchApiKey(adminPort, token, plan = null) {
  const root = `http://127.0.0.1:${adminPort}/admin/v1`;
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const account = { id: 'bench' };
  if (plan !== null) {
    const put = await fetch(`${root}/plans/bench`, { method: 'PUT', headers, body: JSON.stringify(plan) });
    if (put.status !== 200) throw new Error(`admin: put plan ${put.status} ${await put.text()}`);
    account.plan = 'bench';
  }
  const created = await fetch(`${root}/accounts`, { method: 'POST', headers, body: JSON.stringify(account) });
  if (created.status !== 201 && created.status !== 409) throw new Error(`admin: create account ${created.status} ${await created.text()}`);
  const key = await fetch(`${root}/accounts/bench/keys`, { method: 'POST', headers });
  if (key.status !== 201) throw new Error(`admin: create key ${key.status} ${await key.text()}`);
  return (await key.json()).key;
}
