// The admin backend on in-process members: accounts with their default spool, keys (hashed, shown
// once), the auth table every member pushes, and plans logged into the spools' replicated state
// so every replica enforces the same caps.

import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { MqError } from '@spoolmq/engine';
import { MemoryStorageEngine } from '@spoolmq/raft';
import { Member } from '../../src/cluster/member.js';
import { FAST_RAFT, TestCluster, expectError, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

async function readyLeader(ids: string[]): Promise<{ c: TestCluster; leader: Member }> {
  const c = await TestCluster.start(ids);
  cluster = c;
  await Promise.all([...c.members.values()].map((member) => member.ready()));
  let leader: Member | undefined;
  await waitFor(() => (leader = [...c.members.values()].find((m) => m.meta.node.isLeader())) !== undefined);
  return { c, leader: leader! };
}

describe('MemberAdmin', () => {
  it('creates an account with its default spool and a key stored only as its hash', async () => {
    const { c, leader } = await readyLeader(['n1', 'n2', 'n3']);
    const account = await leader.admin.createAccount('acme', undefined);
    expect(account).toEqual({ id: 'acme', state: 'active', plan: 'default', spools: ['default'], keys: [] });
    const key = await leader.admin.createKey('acme');
    expect(key.key).toMatch(/^mqk_[A-Za-z0-9_-]{43}$/);
    const hashHex = createHash('sha256').update(key.key).digest('hex');
    expect(key.id).toBe(hashHex.slice(0, 16));
    for (const member of c.members.values()) {
      await waitFor(() => member.meta.state.keys.has(hashHex));
      const stored = JSON.stringify([...member.meta.state.keys.values()].map((k) => Buffer.from(k.hash).toString('base64')));
      expect(stored).not.toContain(key.key.slice(4, 20)); // never the key itself
      const table = member.authTable();
      expect(table.keys).toContainEqual({ hashHex, accountId: 'acme', blocked: false });
      expect(table.accounts).toContainEqual({ id: 'acme', state: 'active', messageSizeMaxBytes: 1_048_576, requestsPerSecond: 0, requestBurst: 0 });
    }
    // The account's spool serves on its primary.
    const service = (await c.primary('acme/default')).service;
    await service.createQueue('acme/default', 'jobs', {});
    expect((await service.send('acme/default', 'jobs', { payload: new Uint8Array(3), delayMs: 0, wantHandle: false })).duplicate).toBe(false);
  });

  it('refuses bad names, unknown accounts and plans, a taken id, and deleting default', async () => {
    const { leader } = await readyLeader(['n1']);
    await expectError(leader.admin.createAccount('a/b', undefined), 'invalid_argument');
    await expectError(leader.admin.createAccount('a', 'nope'), 'not_found');
    await leader.admin.createAccount('a', undefined);
    await expectError(leader.admin.createAccount('a', undefined), 'conflict');
    await expectError(leader.admin.createKey('ghost'), 'not_found');
    await expectError(leader.admin.revokeKey('0000000000000000'), 'not_found');
    await expectError(leader.admin.deleteSpool('a', 'default'), 'conflict');
    await expectError(leader.admin.createSpool('a', 'bad name'), 'invalid_argument');
    await expectError(leader.admin.putPlan('p', { requestsPerSecond: 5, requestBurst: 0 }), 'invalid_argument');
  });

  it("logs the account's plan into its spools: every replica applies the same limits", async () => {
    const { c, leader } = await readyLeader(['n1', 'n2', 'n3']);
    await leader.admin.createAccount('acme', undefined);
    await leader.admin.putPlan('small', { queuesPerSpoolMax: 1, retentionLimitSeconds: 600 });
    await leader.admin.updateAccount('acme', { plan: 'small' });
    const replicas = () => [...c.members.values()].map((member) => member.replica('acme/default')!);
    await waitFor(() => replicas().every((replica) => replica.engine.plan.queuesPerSpoolMax === 1));
    for (const replica of replicas()) {
      expect(replica.engine.plan).toMatchObject({ queuesPerSpoolMax: 1, retentionLimitSeconds: 600 });
      expect(replica.engine.planVersion).toBe(leader.meta.state.planEpoch);
    }
    const service = (await c.primary('acme/default')).service;
    const created = await service.createQueue('acme/default', 'only', { retentionSeconds: 0 });
    expect(created.settings.effectiveRetentionSeconds).toBe(600);
    const error = await expectError(service.createQueue('acme/default', 'second', {}), 'queue_limit');
    expect(error).toBeInstanceOf(MqError);
  });
});

describe('MemberAdmin membership', () => {
  it('adds a member started to join as a metadata voter; removing it moves its replicas off', async () => {
    const { c, leader } = await readyLeader(['n1', 'n2', 'n3']);
    const peers = { n1: '127.0.0.1:7100', n2: '127.0.0.1:7101', n3: '127.0.0.1:7102', n4: '127.0.0.1:7103' };
    const joiner: Member = await Member.start({
      id: 'n4',
      peers,
      transport: c.network.transport('n4'),
      storage: new MemoryStorageEngine(),
      clock: c.clock,
      raft: FAST_RAFT,
      join: true,
      // Admin steps in process, as the cluster's members run them (no gRPC here).
      adminCall: (to, request) => (to === 'n4' ? joiner : c.member(to)).handleAdminCall(request),
    });
    try {
      // Not founded: it knows no secret until the leader adds it.
      expect(joiner.meta.state.initialized).toBe(false);
      const shape = await leader.admin.addMember('n4', peers.n4);
      expect(shape.members).toEqual(['n1', 'n2', 'n3', 'n4']);
      await waitFor(() => joiner.meta.state.initialized && joiner.meta.state.members.includes('n4'));
      expect(leader.meta.node.status().config.voters).toContain('n4');
      expect(Buffer.from(joiner.meta.state.secret!).equals(Buffer.from(leader.meta.state.secret!))).toBe(true);
      // New spools may be placed on it; one placed there pins it.
      let pinned = '';
      for (let i = 0; pinned === '' && i < 50; i++) {
        const name = `acct${i}`;
        if (leader.placeSpool(`${name}/default`).includes('n4')) pinned = name;
      }
      await leader.admin.createAccount(pinned, undefined);
      const removed = await leader.admin.removeMember('n4');
      expect(removed.members).toEqual(['n1', 'n2', 'n3']);
      expect([...leader.meta.state.spools.get(`${pinned}/default`)!.replicas].sort()).toEqual(['n1', 'n2', 'n3']);
      await expectError(leader.admin.addMember('bad id', 'x:1'), 'invalid_argument');
      await expectError(leader.admin.removeMember('n9'), 'not_found');
    } finally {
      await joiner.close();
    }
  });

  it('removes a member that holds no replica from the metadata group', async () => {
    const { c, leader } = await readyLeader(['n1', 'n2', 'n3']);
    const peers = { n1: '127.0.0.1:7100', n2: '127.0.0.1:7101', n3: '127.0.0.1:7102', n5: '127.0.0.1:7105' };
    const joiner = await Member.start({ id: 'n5', peers, transport: c.network.transport('n5'), storage: new MemoryStorageEngine(), clock: c.clock, raft: FAST_RAFT, join: true });
    try {
      await leader.admin.addMember('n5', peers.n5);
      await waitFor(() => joiner.meta.state.members.includes('n5'));
      const shape = await leader.admin.removeMember('n5');
      expect(shape.members).toEqual(['n1', 'n2', 'n3']);
      expect(leader.meta.node.status().config.voters).not.toContain('n5');
    } finally {
      await joiner.close();
    }
  });
});
