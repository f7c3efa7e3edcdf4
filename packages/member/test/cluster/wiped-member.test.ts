// A member whose storage is lost (the chaos harness's `wipe`) starts again on empty storage: it
// bootstraps the founding state, is rebuilt from the others, and nothing acknowledged is lost
// when the cluster later depends on it. Found by the chaos harness (a 10-minute run, seed 101):
// a wiped member was not rebuilt by the leader it came back to, and, wiped members voting as if
// they had never voted, the spool rolled back to empty. The Raft rules are tested in
// packages/raft/test/core/wiped-replica.test.ts.

import { afterEach, describe, expect, it } from 'vitest';
import { TestCluster, bytes, receiveNow, send } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

describe('a member whose storage was wiped', () => {
  it('is rebuilt by the primary it comes back to and later serves everything acknowledged', async () => {
    cluster = await TestCluster.start(['n1', 'n2', 'n3']);
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    let primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push(await send(primary.service, 'q', bytes(i)));
    const acked = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const delivery = await receiveNow(primary.service, 'q');
      await primary.service.ack('default', delivery.lease);
      acked.add(delivery.messageId);
    }
    const wiped = cluster.ids.find((id) => id !== primary.id)!;
    await cluster.wipeMember(wiped);
    await cluster.startMember(wiped);
    await cluster.member(wiped).ready();
    // Rebuilt with the same primary in place: every replica at the same index and bytes.
    await cluster.converged('default');
    expect((await cluster.primary()).id).toBe(primary.id);

    // Now the rebuilt member is needed for a majority: the primary goes away.
    const survivors = cluster.ids.filter((id) => id !== primary.id);
    await cluster.stopMember(primary.id);
    primary = await cluster.primary('default', survivors);
    const stats = await primary.service.spoolStats('default', { limit: 10 });
    expect(stats.stats.total).toBe(15);
    const received: string[] = [];
    for (let i = 0; i < 15; i++) received.push((await receiveNow(primary.service, 'q')).messageId);
    expect(received).toEqual(sent.filter((id) => !acked.has(id)));
  });
});
