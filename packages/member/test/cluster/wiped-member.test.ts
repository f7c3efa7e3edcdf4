// A member whose storage is lost (the chaos harness's `wipe`) starts again on empty storage: it
// bootstraps the founding state, is rebuilt from the others, and nothing acknowledged is lost
// when the cluster later depends on it. Found by the chaos harness (a 10-minute run, seed 101):
// a wiped member was not rebuilt by the leader it came back to, and, wiped members voting as if
// they had never voted, the spool rolled back to empty. The Raft rules are tested in
// packages/raft/test/core/wiped-replica.test.ts.

import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_RAFT, TestCluster, bytes, receiveNow, send, waitFor } from './helpers.js';

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
    const payloads: Uint8Array[] = [];
    for (let i = 0; i < 15; i++) {
      const delivery = await receiveNow(primary.service, 'q');
      received.push(delivery.messageId);
      payloads.push(delivery.payload);
    }
    expect(received).toEqual(sent.filter((id) => !acked.has(id)));
    // The right bytes, whichever survivor serves: the rebuilt one fetched them from the others.
    const expected = sent.map((_, i) => bytes(i)).filter((_, i) => !acked.has(sent[i]!));
    expect(payloads).toEqual(expected);
  });

  it('is rebuilt from a snapshot without payloads, fetches them in chunks, and holds the right bytes', async () => {
    // Snapshots after every few entries: the wiped member gets a snapshot, not the log.
    // Slower elections than FAST_RAFT: 700 KiB entries on a loaded machine must not flap leaders.
    const raft = { ...FAST_RAFT, electionTicks: 40, leaseTicks: 32, snapshotEntries: 4, retainEntries: 0 };
    cluster = await TestCluster.start(['n1', 'n2', 'n3'], { raft });
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    // Larger than one fetch answer (512 KiB): such a payload arrives in several chunks.
    const payloadOf = (i: number): Uint8Array =>
      Uint8Array.from({ length: i % 2 === 0 ? 700 * 1024 : 100 + i }, (_, j) => (i * 7 + j) & 0xff);
    for (let i = 0; i < 12; i++) await send(primary.service, 'q', payloadOf(i));
    const first = await receiveNow(primary.service, 'q');
    await primary.service.ack('default', first.lease);
    const wiped = cluster.ids.find((id) => id !== primary.id)!;
    await cluster.wipeMember(wiped);
    await cluster.startMember(wiped);
    await cluster.member(wiped).ready();
    await cluster.converged('default');
    const replica = cluster.member(wiped).replica('default')!;
    expect(replica.status().restores).toBeGreaterThan(0);
    await waitFor(() => replica.engine.missingPayloadCount === 0);
    expect(replica.payloadsFetched).toBeGreaterThan(0);
    const queue = replica.engine.queue('q')!;
    // Compared as digests: a diff of 700 KiB arrays would take minutes to print.
    const digest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
    const held = queue.order.liveMessages().map((m) => [m.seq, digest(replica.engine.payloadOf(m))]);
    expect(held).toEqual(Array.from({ length: 11 }, (_, i) => [i + 2, digest(payloadOf(i + 1))]));
  });

  it('is rebuilt by an InstallSnapshot of many chunks read from the file, and restarts from its own', async () => {
    // Small snapshot steps and InstallSnapshot chunks: the spool's snapshot spans dozens of
    // each (file frames, step chunks and sent chunks all straddle one another).
    const raft = {
      ...FAST_RAFT,
      electionTicks: 40,
      leaseTicks: 32,
      snapshotEntries: 50,
      retainEntries: 0,
      snapshotSliceBytes: 700,
      snapshotChunkBytes: 1000,
    };
    cluster = await TestCluster.start(['n1', 'n2', 'n3'], { raft });
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    const primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    for (let i = 0; i < 400; i++) await send(primary.service, 'q', bytes(i));
    const wiped = cluster.ids.find((id) => id !== primary.id)!;
    await cluster.wipeMember(wiped);
    await cluster.startMember(wiped);
    await cluster.member(wiped).ready();
    const state = await cluster.converged('default');
    const rebuilt = cluster.member(wiped).replica('default')!;
    expect(rebuilt.status().restores).toBeGreaterThan(0);
    expect(rebuilt.engine.messageCount).toBe(400);
    await waitFor(() => rebuilt.engine.missingPayloadCount === 0);
    // About 21 KB of snapshot: some 21 InstallSnapshot chunks, now in a file of its own.
    expect(rebuilt.status().snapshotIndex).toBeGreaterThan(0);
    // Restarted, it restores from its own stored snapshot (read a frame at a time) and log.
    await cluster.stopMember(wiped);
    await cluster.startMember(wiped);
    await cluster.member(wiped).ready();
    expect(await cluster.converged('default')).toEqual(state);
    const restarted = cluster.member(wiped).replica('default')!;
    const queue = restarted.engine.queue('q')!;
    const held = queue.order.liveMessages().map((m) => [...restarted.engine.payloadOf(m)]);
    expect(held).toEqual(Array.from({ length: 400 }, (_, i) => [...bytes(i)]));
  });
});
