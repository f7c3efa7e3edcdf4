// Starting a member's groups on one in-memory storage and network: the metadata group founded by
// a member that stored nothing, a spool replica on the same storage (its group stored there),
// and the watch on each node: a storage failure the storage can reopen from starts a recovery,
// any other failure is reported as the group's.

import { EventEmitter } from 'node:events';
import {
  GroupRouter,
  MemoryNetwork,
  MemoryStorageEngine,
  StorageError,
  type RaftNode,
} from '@spoolmq/raft';
import { resolvePlan } from '@spoolmq/engine';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, monotonicClock } from '@spoolmq/protocol';
import { GroupStarter, type StarterHost } from '../../src/cluster/group-starter.js';
import { MemberStorage } from '../../src/cluster/member-storage.js';
import type { MemberOptions } from '../../src/cluster/member-options.js';
import { spoolGroup } from '../../src/cluster/spool-replica.js';
import { FAST_RAFT, waitFor } from './helpers.js';

const closing: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

/** A memory engine that can "reopen" (as LevelDB can after a failed write). */
function reopenable(): MemoryStorageEngine {
  return Object.assign(new MemoryStorageEngine(), { reopen: async () => undefined });
}

async function fixture(extra: Partial<MemberOptions> = {}) {
  const network = new MemoryNetwork({ seed: 1 });
  const transport = network.transport('n1');
  const router = new GroupRouter(transport);
  const options: MemberOptions = { id: 'n1', peers: { n1: 'h:1' }, raft: FAST_RAFT, ...extra };
  const storage = await MemberStorage.open({ ...options, storage: reopenable() }, null);
  const log: string[] = [];
  const host: StarterHost = {
    options,
    storage,
    clock: new ManualClock(),
    clusterClock: monotonicClock,
    plan: resolvePlan(undefined),
    transport: () => transport,
    router: () => router,
    codecs: () => null,
    fetchPayloads: () => Promise.reject(new Error('no payloads here')),
    metaApplied: (command) => void log.push(`applied ${command?.type ?? 'restart'}`),
    replicaChanged: (spool) => void log.push(`changed ${spool}`),
    recover: (group) => void log.push(`recover ${group}`),
  };
  closing.push(() => network.close());
  return { starter: new GroupStarter(host), storage, log };
}

describe('GroupStarter', () => {
  it('founds the metadata group and starts a spool replica on the shared storage', async () => {
    const f = await fixture();
    const meta = await f.starter.startMeta([]);
    closing.push(() => meta.close());
    await waitFor(() => meta.node.isLeader() && meta.state.initialized);
    expect(f.log).toContain('applied init');
    const replica = await f.starter.startReplica('a', 1, ['n1']);
    closing.push(() => replica.close());
    expect(replica.group).toBe(spoolGroup('a', 1));
    await waitFor(() => replica.node.isLeader());
    expect(await f.storage.engine.groups()).toEqual(expect.arrayContaining(['meta', 'spool:a#1']));
  });

  it('gives its groups one log budget of logMemoryBytes (64 MiB unless set)', async () => {
    expect((await fixture()).starter.logBudget.bytesMax).toBe(64 * 1024 * 1024);
    const f = await fixture({ logMemoryBytes: 2 * 1024 * 1024 });
    expect(f.starter.logBudget.bytesMax).toBe(2 * 1024 * 1024);
    const meta = await f.starter.startMeta([]);
    closing.push(() => meta.close());
    await waitFor(() => meta.node.isLeader() && meta.state.initialized);
    const replica = await f.starter.startReplica('a', 1, ['n1']);
    closing.push(() => replica.close());
    await waitFor(() => replica.node.isLeader() && f.starter.logBudget.holders === 2);
    expect(f.starter.logBudget.heldBytes).toBeGreaterThan(0);
  });

  it('starts a recovery on a storage failure, reports any other as the group\'s', async () => {
    const failures: string[] = [];
    const onGroupFailure = (group: string, error: Error): void => {
      failures.push(`${group}: ${error.message}`);
    };
    const f = await fixture({ onGroupFailure });
    const node = new EventEmitter();
    f.starter.watch('spool:a#1', node as unknown as RaftNode);
    node.emit('error', new StorageError('io', 'disk full'));
    node.emit('error', new Error('invariant broken'));
    expect(f.log).toEqual(['recover spool:a#1']);
    expect(failures).toEqual(['spool:a#1: invariant broken']);
  });
});
