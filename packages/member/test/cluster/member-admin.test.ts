// The admin backend on in-process members: accounts with their default spool, keys (hashed, shown
// once), the auth table every member pushes, and plans logged into the spools' replicated state
// so every replica enforces the same caps.

import { afterEach, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { MqError } from '@spoolmq/engine';
import { decodeAdminStep } from '@spoolmq/protocol';
import { Member } from '../../src/cluster/member.js';
import { TestCluster, expectError, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

async function readyLeader(ids: string[]): Promise<{ c: TestCluster; leader: Member }> {
  const c = await TestCluster.start(ids);
  cluster = c;
  return { c, leader: await c.readyMetaLeader() };
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

  describe('waiting for a change to reach every member', () => {
    /** A cluster whose `acked` steps to other members fail with `failure` (others pass). */
    async function ackedFailing(failure: () => Error): Promise<Member> {
      let c: TestCluster | null = null;
      const adminCall = async (to: string, call: Uint8Array): Promise<Uint8Array> => {
        if (decodeAdminStep(call).op === 'acked') throw failure();
        return c!.member(to).handleAdminCall(call);
      };
      c = await TestCluster.start(['n1', 'n2', 'n3'], { member: { adminCall } });
      cluster = c;
      return c.readyMetaLeader();
    }

    it('passes over a member that cannot be reached', async () => {
      const leader = await ackedFailing(() => new MqError('unavailable', 'did not answer'));
      expect((await leader.admin.createAccount('acme', undefined)).id).toBe('acme');
    });

    it('fails the admin call on any other failure, never taking a defect for an outage', async () => {
      const leader = await ackedFailing(() => new RangeError('varint: not a safe integer'));
      await expect(leader.admin.createAccount('acme', undefined)).rejects.toThrow(RangeError);
    });
  });
});
