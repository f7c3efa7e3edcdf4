// A member whose stored hard states fail their checksums (the metadata group's and a spool's)
// comes back on restart: storage restores them from their copies, the metadata and the spool
// serve again, and nothing acknowledged is lost. (LevelGroupStorage.load; issue 14 item 3.)

import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { afterEach, describe, expect, it } from 'vitest';
import { type SpoolService, isMqError } from '@spoolmq/engine';
import { spoolGroup } from '../../src/cluster/spool-replica.js';
import { TestCluster, bytes, receiveNow, send, waitFor } from './helpers.js';

let cluster: TestCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

/** Retries `fn` on the primary of `default` while it answers 503 (a client's retry). */
async function onPrimary<T>(c: TestCluster, fn: (service: SpoolService) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const primary = await c.primary();
    try {
      return await fn(primary.service);
    } catch (error) {
      if (!isMqError(error) || error.status !== 503 || attempt >= 20) throw error;
    }
  }
}

/** The LevelDB key of a group's hard state (see packages/raft/src/storage/level-keys.ts). */
function hardStateKey(group: string): Buffer {
  return Buffer.concat([Buffer.from([0x01]), Buffer.from(group, 'utf8'), Buffer.from([0x00, 0x01])]);
}

/** Flips a bit in the stored hard states of `groups` in the LevelDB under `dataDir`. */
async function corruptHardStates(dataDir: string, groups: readonly string[]): Promise<void> {
  const db = new ClassicLevel<Buffer, Buffer>(join(dataDir, 'log'), { keyEncoding: 'buffer', valueEncoding: 'buffer' });
  await db.open();
  try {
    for (const group of groups) {
      const value = await db.get(hardStateKey(group));
      if (value === undefined) throw new Error(`no hard state for ${group}`);
      value[value.length - 1] = value[value.length - 1]! ^ 0x01;
      await db.put(hardStateKey(group), value, { sync: true });
    }
  } finally {
    await db.close();
  }
}

describe('a member whose hard states fail their checksums', () => {
  it('restarts with them restored from their copies, the metadata group included', async () => {
    const c = await TestCluster.start(['n1', 'n2', 'n3'], { level: true });
    cluster = c;
    await Promise.all([...c.members.values()].map((member) => member.ready()));
    const primary = await c.primary();
    await primary.service.createQueue('default', 'q', {});
    const sent: string[] = [];
    for (let i = 0; i < 10; i++) sent.push(await onPrimary(c, (service) => send(service, 'q', bytes(i))));
    const gen = c.member('n2').meta.state.spools.get('default')!.gen;
    const term = c.member('n2').meta.node.status().term;

    await c.stopMember('n2');
    await corruptHardStates(c.dataDirOf('n2'), ['meta', spoolGroup('default', gen)]);
    const member = await c.startMember('n2');

    await member.ready();
    expect(member.storageStats()?.hardStatesRestored).toBe(2);
    expect(member.meta.node.status().term).toBeGreaterThanOrEqual(term);
    await waitFor(() => member.replica('default')?.hasKnownPrimary() === true);
    // Both groups take part again: a metadata change and a spool change reach n2.
    await c.member('n1').admin.createAccount('acme', undefined);
    await waitFor(() => member.meta.state.accounts.has('acme'));
    await onPrimary(c, (service) => service.createQueue('default', 'r', {}));
    await waitFor(() => member.replica('default')?.engine.queue('r') !== undefined);
    const received: string[] = [];
    for (let i = 0; i < 10; i++) received.push((await onPrimary(c, (service) => receiveNow(service, 'q'))).messageId);
    expect(received).toEqual(sent);
  });
});
