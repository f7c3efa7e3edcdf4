// End to end: RaftNodes over the real I/O shell (LevelStorageEngine on disk, GrpcTransport on
// 127.0.0.1). Proposals commit on all three members; a member restarted from its directory on
// its old address recovers its log and catches up; snapshots and compaction go through disk.

import { INSECURE_CLUSTER } from '../../src/transport/cluster-security.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GroupRouter } from '../../src/node/group-router.js';
import { RaftNode } from '../../src/node/raft-node.js';
import type { AppliedEntry, StateMachine } from '../../src/node/state-machine.js';
import { LevelStorageEngine } from '../../src/storage/level-storage.js';
import { GrpcTransport } from '../../src/transport/grpc-transport.js';
import type { NodeId } from '../../src/types.js';
import { joinChunks } from '../chunks.js';

const GROUP = 'spool:e2e';
const IDS = ['n1', 'n2', 'n3'];

/** Appends every applied payload to a list (and snapshots it as JSON). */
class LogMachine implements StateMachine {
  applied: string[] = [];
  apply(entry: AppliedEntry): unknown {
    this.applied.push(Buffer.from(entry.data).toString());
    return this.applied.length;
  }
  snapshot(): Uint8Array {
    return Buffer.from(JSON.stringify(this.applied));
  }
  restore(chunks: Iterable<Uint8Array>): void {
    this.applied = JSON.parse(Buffer.from(joinChunks(chunks)).toString()) as string[];
  }
}

interface Member {
  node: RaftNode;
  machine: LogMachine;
  engine: LevelStorageEngine;
  transport: GrpcTransport;
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('RaftNode over LevelStorageEngine and GrpcTransport', () => {
  const directories: string[] = [];
  const members = new Map<NodeId, Member>();
  afterEach(async () => {
    for (const member of members.values()) await stop(member);
    members.clear();
    for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
  });

  async function stop(member: Member): Promise<void> {
    await member.node.close();
    await member.transport.close();
    await member.engine.close();
  }

  async function start(
    id: NodeId,
    directory: string,
    listen: string,
    peers: Record<NodeId, string>,
  ): Promise<Member> {
    const engine = await LevelStorageEngine.open(directory);
    const transport = await GrpcTransport.start({
      selfId: id,
      listen,
      peers,
      security: INSECURE_CLUSTER,
    });
    const router = new GroupRouter(transport);
    const machine = new LogMachine();
    const node = await RaftNode.start({
      id,
      group: GROUP,
      storage: engine.group(GROUP),
      transport,
      stateMachine: machine,
      bootstrap: IDS,
      tickMs: 20,
      snapshotEntries: 50,
      retainEntries: 10,
    });
    router.add(GROUP, node);
    const member = { node, machine, engine, transport };
    members.set(id, member);
    return member;
  }

  it('commits on every member, survives a member restart from disk, and catches it up', async () => {
    const dirs = await Promise.all(IDS.map(() => mkdtemp(join(tmpdir(), 'mq-raft-e2e-'))));
    directories.push(...dirs);
    // Bind first (ephemeral ports), then tell everyone the addresses.
    for (const [i, id] of IDS.entries()) await start(id, dirs[i]!, '127.0.0.1:0', {});
    const peers = Object.fromEntries(IDS.map((id) => [id, members.get(id)!.transport.address]));
    for (const member of members.values()) member.transport.setPeers(peers);

    const leaderOf = (): Member | undefined => [...members.values()].find((m) => m.node.isLeader());
    await waitFor(() => leaderOf() !== undefined, 'a leader');
    const proposals = Array.from({ length: 120 }, (_, i) => leaderOf()!.node.propose(Buffer.from(`cmd-${i}`)));
    await Promise.all(proposals);
    await waitFor(() => [...members.values()].every((m) => m.machine.applied.length === 120), 'apply everywhere');
    const expected = Array.from({ length: 120 }, (_, i) => `cmd-${i}`);
    for (const member of members.values()) expect(member.machine.applied).toEqual(expected);

    // Restart a follower from its directory, on its old address.
    const followerId = IDS.find((id) => !members.get(id)!.node.isLeader())!;
    await stop(members.get(followerId)!);
    members.delete(followerId);
    await Promise.all(Array.from({ length: 30 }, (_, i) => leaderOf()!.node.propose(Buffer.from(`more-${i}`))));
    const restarted = await start(followerId, dirs[IDS.indexOf(followerId)]!, peers[followerId]!, peers);
    // Its snapshot and log came back from disk: what it had applied is restored first.
    expect(restarted.node.status().snapshotIndex).toBeGreaterThan(0);
    await waitFor(() => restarted.machine.applied.length === 150, 'the restarted member to catch up');
    expect(restarted.machine.applied).toEqual([...expected, ...Array.from({ length: 30 }, (_, i) => `more-${i}`)]);
    // What it caught up with is on its disk: reopen the directory and read the group.
    await stop(restarted);
    members.delete(followerId);
    const reopened = await LevelStorageEngine.open(dirs[IDS.indexOf(followerId)]!);
    try {
      const state = await reopened.group(GROUP).load();
      const lastIndex = state.entries.at(-1)?.index ?? state.snapshot!.meta.index;
      expect(lastIndex).toBeGreaterThan(150); // 150 commands and at least one leader Noop
      expect(state.snapshot).not.toBeNull();
      expect(state.hardState.term).toBeGreaterThan(0);
    } finally {
      await reopened.close();
    }
  });
});
