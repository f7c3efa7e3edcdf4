// Accounts, keys and plans through the gateway against a real cluster: three `mq member`
// processes and two standalone `mq gateway`s on loopback, administered through a member's admin
// API. Every status of the interface's Authentication and plan limits, cross-account attempts
// with valid-looking tokens and names, key propagation and revocation on every gateway, and a
// bounded load test of the rate limit and the size caps.

import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { Api, queueNamer } from '../../src/conformance/index.js';
import type { RawResponse } from '../../src/conformance/http.js';
import { AdminClient, ProcessCluster, ensureCliBuilt } from '../../src/cluster/index.js';

let cluster: ProcessCluster;
let admin: AdminClient;

/** An Api for `key` on `baseUrl` (the spool is always the path's `default`). */
function apiFor(key: string, baseUrl = cluster.baseUrl, spool = 'default'): Api {
  return new Api({ baseUrl, apiKey: key, spool, newQueueName: queueNamer('acct') });
}

function kindOf(response: RawResponse): string | undefined {
  const body = JSON.parse(response.body.toString('utf8')) as { kind?: string };
  return body.kind;
}

function expectRefusal(response: RawResponse, status: number, kind: string | undefined): void {
  expect(response.status, response.body.toString()).toBe(status);
  expect(kindOf(response)).toBe(kind);
}

/** A new account with a first key; `plan` names a plan made with `admin.putPlan`. */
async function account(id: string, plan?: string): Promise<{ id: string; key: string; keyId: string }> {
  await admin.createAccount(id, plan);
  const key = await admin.createKey(id);
  return { id, key: key.key, keyId: key.id };
}

beforeAll(async () => {
  await ensureCliBuilt();
  cluster = await ProcessCluster.start({ members: 3, gateways: 2 });
  await cluster.waitReady();
  admin = cluster.admin(1); // not necessarily the metadata leader: changes are forwarded
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe('authentication through the gateway', () => {
  it('401 without a key, with an unknown key, or with the key in the query string', async () => {
    onTestFailed(() => console.error(cluster.logTails(30)));
    const { key } = await account('auth401');
    const api = apiFor(key);
    expectRefusal(await api.call('GET', api.spoolPath(), { auth: false }), 401, 'unauthenticated');
    expectRefusal(await api.call('GET', api.spoolPath(), { auth: 'Bearer mqk_not-a-key-0123456789' }), 401, 'unauthenticated');
    expectRefusal(await api.call('GET', `${api.spoolPath()}?api_key=${key}`, { auth: false }), 401, 'unauthenticated');
    expect((await api.call('GET', api.spoolPath())).status).toBe(200);
  });

  it('a new key works at once on every gateway; a revoked one stops on every gateway when the call returns', async () => {
    const { id } = await account('propagate');
    const created = await admin.createKey(id);
    for (const gateway of cluster.gateways) {
      const api = apiFor(created.key, gateway.baseUrl);
      expect((await api.call('GET', api.spoolPath())).status, gateway.id).toBe(200);
    }
    // Through each member's embedded gateway too.
    for (const member of cluster.members) {
      const api = apiFor(created.key, member.baseUrl);
      expect((await api.call('GET', api.spoolPath())).status, member.id).toBe(200);
    }
    const startedMs = performance.now();
    await admin.revokeKey(created.id);
    const revokeMs = performance.now() - startedMs;
    for (const node of [...cluster.gateways, ...cluster.members]) {
      const api = apiFor(created.key, node.baseUrl);
      expectRefusal(await api.call('GET', api.spoolPath()), 401, 'unauthenticated');
    }
    console.log(`revocation: admin call returned after ${revokeMs.toFixed(0)} ms, then refused on every gateway`);
  });

  it('blocked key: 403 without a kind; suspended account: 402; account on hold: 403 account_blocked', async () => {
    const { id, key, keyId } = await account('states');
    const second = await admin.createKey(id);
    const api = apiFor(key, cluster.gateways[1]!.baseUrl);
    const other = apiFor(second.key);
    await admin.setKeyBlocked(keyId, true);
    const blocked = await api.call('GET', api.spoolPath());
    expect(blocked.status).toBe(403);
    expect(kindOf(blocked)).toBeUndefined();
    expect((await other.call('GET', other.spoolPath())).status).toBe(200); // only that key
    await admin.setKeyBlocked(keyId, false);
    expect((await api.call('GET', api.spoolPath())).status).toBe(200);
    await admin.setAccountState(id, 'suspended');
    expectRefusal(await api.call('GET', api.spoolPath()), 402, 'account_suspended');
    expectRefusal(await other.call('POST', other.queuePath('q', '/send'), { body: 'x' }), 402, 'account_suspended');
    await admin.setAccountState(id, 'blocked');
    expectRefusal(await api.call('GET', api.spoolPath()), 403, 'account_blocked');
    await admin.setAccountState(id, 'active');
    expect((await api.call('GET', api.spoolPath())).status).toBe(200);
  });
});

describe('isolation between accounts', () => {
  it("one account never sees or touches another's spools, queues, messages or tokens", async () => {
    const a = await account('iso-a');
    const b = await account('iso-b');
    const apiA = apiFor(a.key);
    const apiB = apiFor(b.key, cluster.gateways[1]!.baseUrl);
    const queue = await apiA.createQueue();
    await apiA.sendOk(queue, 'secret of a');
    const { handle } = await apiA.sendWithHandle(queue, 'second secret');
    // Same names, other account: its own (empty) default spool, no such queue.
    expectRefusal(await apiB.describeQueue(queue), 404, 'queue_not_found');
    expectRefusal(await apiB.send(queue, 'into a?'), 404, 'queue_not_found');
    expectRefusal(await apiB.recv(queue, 0), 404, 'queue_not_found');
    const listing = JSON.parse((await apiB.call('GET', apiB.spoolPath('/queues'))).body.toString()) as { items: unknown[] };
    expect(listing.items).toEqual([]);
    const described = JSON.parse((await apiB.call('GET', apiB.spoolPath())).body.toString()) as { name: string };
    expect(described.name).toBe('default');
    // A's lease and handle, presented by B on B's own default spool: they do not verify there.
    const delivery = await apiA.recvOk(queue);
    for (const response of [await apiB.ack(delivery.lease), await apiB.nack(delivery.lease), await apiB.peek(handle)]) {
      expect(response.status).toBe(410);
      expect(JSON.parse(response.body.toString())).toMatchObject({ kind: 'gone', details: { reason: 'stale' } });
    }
    // A spool of A's is not B's, even by name; B's own spool of that name is separate.
    await admin.createSpool(a.id, 'orders');
    expectRefusal(await apiB.call('GET', '/spools/orders'), 404, 'spool_not_found');
    await admin.createSpool(b.id, 'orders');
    const ordersA = apiFor(a.key, cluster.baseUrl, 'orders');
    const ordersB = apiFor(b.key, cluster.baseUrl, 'orders');
    // The admin call returns once the member that ran it serves the spool; a member that has not
    // applied the metadata entry yet answers spool_not_found for a moment (a known gap, noted on
    // issue 12). Isolation is what this test checks, so wait until B's spool answers.
    await expect.poll(async () => (await ordersB.call('GET', ordersB.spoolPath())).status).toBe(200);
    const q = await ordersA.createQueue();
    expectRefusal(await ordersB.describeQueue(q), 404, 'queue_not_found');
    // A's message is still A's: B's attempts changed nothing.
    expect((await apiA.ack(delivery.lease)).status).toBe(204);
    expect((await apiA.peek(handle)).status).toBe(200);
  });
});

describe('plan limits', () => {
  it('413, 403 queue_limit, 403 retention_limit, 507 spool_full (nothing appended), ack-and-send refused only for growth', async () => {
    await admin.putPlan('small', {
      queuesPerSpoolMax: 2,
      retentionLimitSeconds: 3_600,
      retentionDefaultSeconds: 600,
      messagesPerSpoolMax: 3,
      payloadBytesPerSpoolMax: 1_000,
      messageSizeMaxBytes: 400,
    });
    const { key } = await account('limited', 'small');
    const api = apiFor(key);
    const q1 = await api.createQueue();
    const created = JSON.parse((await api.describeQueue(q1)).body.toString()) as { settings: { retentionSeconds: number; effectiveRetentionSeconds: number } };
    expect(created.settings).toMatchObject({ retentionSeconds: 600, effectiveRetentionSeconds: 600 });
    expectRefusal(await api.putQueue(api.target.newQueueName(), { retentionSeconds: 3_601 }), 403, 'retention_limit');
    await api.createQueue({ retentionSeconds: 3_600 });
    expectRefusal(await api.putQueue(api.target.newQueueName()), 403, 'queue_limit');
    const tooLarge = await api.send(q1, Buffer.alloc(401));
    expectRefusal(tooLarge, 413, 'message_too_large');
    expect(JSON.parse(tooLarge.body.toString()).details).toEqual({ limitBytes: 400 });
    await api.sendOk(q1, Buffer.alloc(400));
    await api.sendOk(q1, Buffer.alloc(400));
    expectRefusal(await api.send(q1, Buffer.alloc(300)), 507, 'spool_full'); // bytes bound first
    await api.sendOk(q1, Buffer.alloc(100));
    expectRefusal(await api.send(q1, Buffer.alloc(1)), 507, 'spool_full'); // 3 messages
    expect((await api.queueStats(q1)).total).toBe(3);
    // Ack-and-send is net zero in messages: allowed at the message cap; refused (507, nothing
    // acked) only when it grows the payload bytes past the cap.
    const first = await api.recvOk(q1); // 400 bytes
    expect((await api.ackAndSend(q1, first.lease, Buffer.alloc(400))).status).toBe(201);
    await api.recvOk(q1); // the second 400 bytes, left leased
    const small = await api.recvOk(q1); // 100 bytes
    expect(small.payload.byteLength).toBe(100);
    expectRefusal(await api.ackAndSend(q1, small.lease, Buffer.alloc(400)), 507, 'spool_full');
    expect((await api.ackAndSend(q1, small.lease, Buffer.alloc(150))).status).toBe(201);
    expect((await api.queueStats(q1)).total).toBe(3);
    // A plan change reaches the spool's replicated state: a larger plan admits more at once.
    await admin.putPlan('small', { queuesPerSpoolMax: 3, messagesPerSpoolMax: 10, payloadBytesPerSpoolMax: 10_000, messageSizeMaxBytes: 400 });
    await api.sendOk(q1, Buffer.alloc(10));
    await api.createQueue();
  });

  it('429 rate_limited with a whole-second Retry-After past the account rate, before any append', async () => {
    await admin.putPlan('slow', { requestsPerSecond: 4, requestBurst: 4 });
    const { key } = await account('ratelimited', 'slow');
    // Both gateways enforce half of it each (--gateways 2): 2 requests at once each.
    const api = apiFor(key, cluster.gateways[0]!.baseUrl);
    const statuses: number[] = [];
    let limited: RawResponse | undefined;
    for (let i = 0; i < 10 && limited === undefined; i++) {
      const response = await api.call('GET', api.spoolPath());
      statuses.push(response.status);
      if (response.status === 429) limited = response;
    }
    expect(limited, statuses.join(',')).toBeDefined();
    expect(kindOf(limited!)).toBe('rate_limited');
    expect(limited!.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
    expect(JSON.parse(limited!.body.toString()).details).toEqual({});
  });
});

describe('admin: spool placement and moving a primary', () => {
  it('shows members and placement, and moves a spool primary by leadership transfer', async () => {
    const { id } = await account('mover');
    const shape = (await admin.ok('GET', '/cluster')) as { members: string[]; metaLeader: string | null; spools: { account: string | null; name: string; replicas: string[]; primary: string | null }[] };
    expect(shape.members).toEqual(['n1', 'n2', 'n3']);
    expect(shape.members).toContain(shape.metaLeader);
    const spool = shape.spools.find((s) => s.account === id && s.name === 'default');
    expect(spool?.replicas).toHaveLength(3);
    const before = await cluster.waitPrimary(`${id}/default`);
    const target = spool!.replicas.find((member) => member !== before)!;
    await admin.ok('POST', `/accounts/${id}/spools/default/move`, { to: target });
    expect(await cluster.waitPrimary(`${id}/default`, [before])).toBe(target);
  });
});
