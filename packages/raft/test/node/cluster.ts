// Test fixture: RaftNodes over the in-process MemoryNetwork, each member with its own
// MemoryStorageEngine (so one member can crash alone), replicating a small key-value store.

import { MemoryStorageEngine } from '../../src/storage/memory-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { GroupRouter } from '../../src/node/group-router.js';
import { RaftNode } from '../../src/node/raft-node.js';
import type { RaftNodeOptions } from '../../src/node/options.js';
import type { AppliedEntry, StateMachine } from '../../src/node/state-machine.js';
import type { NodeId } from '../../src/types.js';
import { joinChunks } from '../chunks.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `set key value` commands; apply returns the previous value. */
export class KvStore implements StateMachine {
  readonly map = new Map<string, string>();
  readonly appliedIndexes: number[] = [];
  restores = 0;

  apply(entry: AppliedEntry): unknown {
    this.appliedIndexes.push(entry.index);
    const [, key, value] = decoder.decode(entry.data).split(' ');
    const previous = this.map.get(key!) ?? null;
    this.map.set(key!, value!);
    return previous;
  }

  snapshot(): Uint8Array {
    return encoder.encode(JSON.stringify([...this.map]));
  }

  restore(chunks: Iterable<Uint8Array>): void {
    this.restores += 1;
    this.map.clear();
    for (const [k, v] of JSON.parse(decoder.decode(joinChunks(chunks))) as [string, string][]) this.map.set(k, v);
  }
}

export function set(key: string, value: string): Uint8Array {
  return encoder.encode(`set ${key} ${value}`);
}

export const GROUP = 'spool:test';

export interface Member {
  node: RaftNode;
  store: KvStore;
  storage: MemoryStorageEngine;
}

export class TestCluster {
  readonly network = new MemoryNetwork({ seed: 7 });
  readonly members = new Map<NodeId, Member>();

  constructor(
    private readonly voters: readonly NodeId[],
    private readonly overrides: Partial<RaftNodeOptions> = {},
    /** Builds each (re)started member's state machine: a KvStore or a subclass. */
    private readonly makeStore: (id: NodeId) => KvStore = () => new KvStore(),
  ) {}

  static async start(
    voters: readonly NodeId[],
    overrides: Partial<RaftNodeOptions> = {},
    makeStore?: (id: NodeId) => KvStore,
  ): Promise<TestCluster> {
    const cluster = new TestCluster(voters, overrides, makeStore);
    for (const id of voters) await cluster.startMember(id, true);
    return cluster;
  }

  /** Starts (or restarts, reusing its storage engine) member `id`. */
  async startMember(id: NodeId, founding: boolean): Promise<Member> {
    const storage = this.members.get(id)?.storage ?? new MemoryStorageEngine();
    const store = this.makeStore(id);
    const transport = this.network.transport(id);
    const router = new GroupRouter(transport);
    const node = await RaftNode.start({
      id,
      group: GROUP,
      storage: storage.group(GROUP),
      transport,
      stateMachine: store,
      ...(founding ? { bootstrap: this.voters } : {}),
      tickMs: 10,
      electionTicks: 10,
      heartbeatTicks: 1,
      leaseTicks: 8,
      ...this.overrides,
    });
    router.add(GROUP, node);
    const member = { node, store, storage };
    this.members.set(id, member);
    return member;
  }

  member(id: NodeId): Member {
    return this.members.get(id)!;
  }

  node(id: NodeId): RaftNode {
    return this.member(id).node;
  }

  /** Waits (bounded) until exactly one live member leads and every live member agrees. */
  async leader(timeoutMs = 10_000): Promise<RaftNode> {
    let found: RaftNode | null = null;
    await waitFor(() => {
      const leaders = [...this.members.values()].filter((m) => m.node.isLeader());
      if (leaders.length !== 1) return false;
      found = leaders[0]!.node;
      return found.hasLeaderLease();
    }, timeoutMs);
    return found!;
  }

  async close(): Promise<void> {
    for (const member of this.members.values()) await member.node.close();
    await this.network.close();
  }
}

/**
 * Polls `condition` every few ms until it holds; throws after `timeoutMs`. Waiting for a
 * condition, never for an amount of time: the bound only turns a hang into a failure.
 */
export async function waitFor(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('waitFor: condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
