// Membership on in-process members (membership.ts through the admin backend): a member started
// to join is added as a metadata voter and learns the secret; removing it moves its replicas off
// first; a member holding no replica leaves the metadata group at once. Replica moves and
// removals under load are in replica-mover.test.ts.

import { afterEach, describe, expect, it } from 'vitest';
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
  return { c, leader: await c.readyMetaLeader() };
}

describe('Membership', () => {
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
