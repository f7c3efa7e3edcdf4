// A member whose spool snapshot file fails its checksum at start (bad bytes on disk) starts that
// replica empty with a damage mark and is sent a snapshot by the primary, instead of refusing to
// start (the storage rule: packages/raft/test/storage/level-storage.test.ts). A sole member has
// no one to repair it from: that spool stays down while the member serves the rest.

import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RaftRepair } from '@spoolmq/raft';
import { parseSpoolGroup } from '../../src/cluster/spool-replica.js';
import { FAST_RAFT, TestCluster, bytes, receiveNow, send, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;

afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

/** Flips one byte in every snapshot file of spool `spool` under `dataDir`; returns how many. */
async function corruptSnapshots(dataDir: string, spool: string): Promise<number> {
  let corrupted = 0;
  const entries = await readdir(dataDir, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith('.snap')) continue;
    const group = parseSpoolGroup(decodeURIComponent(basename(entry.parentPath)));
    if (group?.name !== spool) continue;
    const path = join(entry.parentPath, entry.name);
    const data = await readFile(path);
    const at = data.length >> 1;
    data[at] = data[at]! ^ 0x10;
    await writeFile(path, data);
    corrupted++;
  }
  return corrupted;
}

describe('a corrupt spool snapshot', () => {
  it('on one member: the replica starts empty, is sent a snapshot and later serves everything', async () => {
    const raft = { ...FAST_RAFT, snapshotEntries: 4, retainEntries: 0 };
    const repairs: Array<{ group: string; repair: RaftRepair }> = [];
    const member = { onRaftRepaired: (group: string, repair: RaftRepair) => repairs.push({ group, repair }) };
    cluster = await TestCluster.start(['n1', 'n2', 'n3'], { level: true, raft, member });
    await Promise.all([...cluster.members.values()].map((member) => member.ready()));
    let primary = await cluster.primary();
    await primary.service.createQueue('default', 'q', {});
    const sent: string[] = [];
    for (let i = 0; i < 20; i++) sent.push(await send(primary.service, 'q', bytes(i)));
    const first = await receiveNow(primary.service, 'q');
    await primary.service.ack('default', first.lease);
    await cluster.converged('default');
    const damaged = cluster.ids.find((id) => id !== primary.id)!;
    const stored = (): number => cluster!.member(damaged).replica('default')?.status().snapshotIndex ?? 0;
    await waitFor(() => stored() > 0);
    await cluster.stopMember(damaged);
    expect(await corruptSnapshots(cluster.dataDir(damaged), 'default')).toBe(1);

    await cluster.startMember(damaged);
    await cluster.member(damaged).ready();
    await cluster.converged('default');
    const replica = cluster.member(damaged).replica('default')!;
    expect(replica.status().restores).toBeGreaterThan(0);
    expect(cluster.member(damaged).storageStats()?.snapshotsCorrupt).toBe(1);

    // The repaired member is now needed for a majority: the primary goes away at once (its
    // damage mark may still be set: it votes under the damage rule, never blocks a majority).
    const survivors = cluster.ids.filter((id) => id !== primary.id);
    await cluster.stopMember(primary.id);
    primary = await cluster.primary('default', survivors);
    const received: Uint8Array[] = [];
    for (let i = 1; i < 20; i++) received.push((await receiveNow(primary.service, 'q')).payload);
    expect(received).toEqual(sent.slice(1).map((_, i) => bytes(i + 1)));
    // Repaired: the damage mark ends once its log is as up-to-date as the lost one was.
    await waitFor(() => replica.status().storageDamage === null);
    // ... and the member was told (its log line), once, for that spool's group.
    const told = repairs.filter((r) => parseSpoolGroup(r.group)?.name === 'default');
    expect(told).toHaveLength(1);
    expect(told[0]!.repair.damage.lastIndex).toBeGreaterThan(0);
  });

  it('on a sole member: that spool stays down, keeps its file, and the member serves the rest', async () => {
    const raft = { ...FAST_RAFT, snapshotEntries: 4, retainEntries: 0 };
    cluster = await TestCluster.start(['n1'], { level: true, raft });
    const member = cluster.member('n1');
    await member.ready();
    await member.admin.createAccount('acme', undefined);
    for (const spool of ['default', 'acme/default']) {
      const primary = await cluster.primary(spool);
      await primary.service.createQueue(spool, 'q', {});
      for (let i = 0; i < 10; i++) await primary.service.send(spool, 'q', message(i));
    }
    // A snapshot is written in the background: stop only once one is stored (else no file).
    await waitFor(() => (member.replica('default')?.status().snapshotIndex ?? 0) > 0);
    await cluster.stopMember('n1');
    expect(await corruptSnapshots(cluster.dataDir('n1'), 'default')).toBe(1);

    const restarted = await cluster.startMember('n1');
    const other = await cluster.primary('acme/default');
    await other.service.send('acme/default', 'q', message(10));
    const stats = await other.service.spoolStats('acme/default', { limit: 10 });
    expect(stats.stats.total).toBe(11);
    // What the snapshot held is lost here and nobody holds a copy: never started empty.
    await waitFor(() => (restarted.storageStats()?.snapshotsCorrupt ?? 0) > 0);
    expect(restarted.replica('default')).toBeUndefined();
    await cluster.stopMember('n1');
    expect(await corruptSnapshots(cluster.dataDir('n1'), 'default')).toBe(1);
  });
});

function message(i: number): { payload: Uint8Array; delayMs: number; wantHandle: boolean } {
  return { payload: bytes(i), delayMs: 0, wantHandle: false };
}
