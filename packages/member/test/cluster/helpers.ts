// Test fixture: members over the in-process MemoryNetwork, each with its own storage (memory by
// default, LevelDB in a temp dir when asked), sharing one manual clock for the spool hosts (entry
// times, lease timeouts). Raft runs on real time with short ticks.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Delivery, MqError, type SpoolService } from '@spoolmq/engine';
import { decodeAdminStep, ManualClock } from '@spoolmq/protocol';
import { MemoryNetwork, MemoryStorageEngine, type StorageEngine } from '@spoolmq/raft';
import { expect } from 'vitest';
import { Member } from '../../src/cluster/member.js';
import type { MemberOptions } from '../../src/cluster/member-options.js';
import type { RaftTuning } from '../../src/cluster/raft-tuning.js';

export const FAST_RAFT: RaftTuning = { tickMs: 10, electionTicks: 10, heartbeatTicks: 1, leaseTicks: 8 };

export interface ClusterOptions {
  /** Store in LevelDB under a temp dir (default: MemoryStorageEngine). */
  readonly level?: boolean;
  readonly raft?: RaftTuning;
  readonly seed?: number;
  readonly replicasPerSpool?: number;
  /** More member options, for every member started. */
  readonly member?: Partial<MemberOptions>;
}

export class TestCluster {
  readonly network: MemoryNetwork;
  readonly clock = new ManualClock();
  readonly members = new Map<string, Member>();
  private readonly storages = new Map<string, MemoryStorageEngine>();
  private readonly dirs = new Map<string, string>();
  private readonly peers: Record<string, string>;
  /** While set, payload fetches between members wait for it (see holdPayloadFetches). */
  private payloadGate: Promise<void> | null = null;

  private constructor(
    readonly ids: readonly string[],
    private readonly options: ClusterOptions,
  ) {
    this.network = new MemoryNetwork({ seed: options.seed ?? 1 });
    this.peers = Object.fromEntries(ids.map((id, i) => [id, `127.0.0.1:${7100 + i}`]));
  }

  static async start(ids: readonly string[], options: ClusterOptions = {}): Promise<TestCluster> {
    const cluster = new TestCluster(ids, options);
    for (const id of ids) await cluster.startMember(id);
    return cluster;
  }

  /** Starts (or restarts on its old storage) member `id`. */
  /** Waits until every member is ready and one leads the metadata group; returns that one. */
  async readyMetaLeader(): Promise<Member> {
    await Promise.all([...this.members.values()].map((member) => member.ready()));
    let leader: Member | undefined;
    const leads = (m: Member): boolean => m.meta.node.isLeader();
    await waitFor(() => (leader = [...this.members.values()].find(leads)) !== undefined);
    return leader!;
  }

  async startMember(id: string): Promise<Member> {
    const options: MemberOptions = {
      id,
      peers: this.peers,
      transport: this.network.transport(id),
      clock: this.clock,
      adminCall: (to, request) => this.adminCall(to, request),
      raft: this.options.raft ?? FAST_RAFT,
      ...(this.options.replicasPerSpool === undefined ? {} : { replicasPerSpool: this.options.replicasPerSpool }),
      ...(this.options.level ? { dataDir: await this.dirOf(id) } : { storage: this.storageOf(id) }),
      ...this.options.member,
    };
    const member = await Member.start(options);
    this.members.set(id, member);
    return member;
  }

  /** Closes member `id` gracefully (its storage stays for a restart). */
  async stopMember(id: string): Promise<void> {
    const member = this.members.get(id);
    this.members.delete(id);
    await member?.close();
  }

  /**
   * Member `id` loses its disk: closed, its storage dropped; the next `startMember(id)` starts
   * on empty storage (memory storage only).
   */
  async wipeMember(id: string): Promise<void> {
    await this.stopMember(id);
    const storage = this.storages.get(id);
    if (storage === undefined) throw new Error(`no memory storage for ${id}`);
    this.storages.delete(id);
    await storage.close();
  }

  /**
   * An admin step on member `to`, in process (the accounts service's Call without gRPC): the
   * encoded call and answer, as on the wire; a stopped member fails the call as an unreachable
   * one would.
   */
  private async adminCall(to: string, call: Uint8Array): Promise<Uint8Array> {
    if (decodeAdminStep(call).op === 'payloads' && this.payloadGate !== null) await this.payloadGate;
    const member = this.members.get(to);
    if (member === undefined) throw new MqError('unavailable', `member ${to} did not answer`);
    return member.handleAdminCall(call);
  }

  /** Holds every payload fetch between members until the returned function is called. */
  holdPayloadFetches(): () => void {
    let release: () => void = () => undefined;
    this.payloadGate = new Promise((resolve) => (release = resolve));
    return () => {
      this.payloadGate = null;
      release();
    };
  }

  /** Member `id`'s data directory (LevelDB storage only). */
  dataDirOf(id: string): string {
    const dir = this.dirs.get(id);
    if (dir === undefined) throw new Error(`no data directory for ${id}`);
    return dir;
  }

  member(id: string): Member {
    const member = this.members.get(id);
    if (member === undefined) throw new Error(`no member ${id}`);
    return member;
  }

  /** Waits until exactly one running member serves `spool` and holds its lease; returns it. */
  async primary(spool = 'default', among: readonly string[] = [...this.members.keys()]): Promise<Member> {
    let found: Member | null = null;
    await waitFor(() => {
      const serving = among
        .map((id) => this.members.get(id))
        .filter((m): m is Member => m?.replica(spool)?.isServing() === true && m.replica(spool)!.node.hasLeaderLease());
      found = serving.length === 1 ? serving[0]! : null;
      return found !== null;
    });
    return found!;
  }

  /**
   * Waits until every running replica of `spool` applied the same index and encodes the same
   * snapshot; returns that snapshot.
   */
  async converged(spool = 'default', among: readonly string[] = [...this.members.keys()]): Promise<Uint8Array> {
    let bytes: Uint8Array | null = null;
    await waitFor(() => {
      const replicas = among.map((id) => this.members.get(id)?.replica(spool));
      if (replicas.some((r) => r === undefined)) return false;
      const applied = replicas.map((r) => r!.status().appliedIndex);
      const commit = Math.max(...replicas.map((r) => r!.status().commitIndex));
      if (applied.some((a) => a !== commit)) return false;
      // Payload locations differ between replicas; the replicated state must not.
      const snapshots = replicas.map((r) => Buffer.from(r!.engine.replicatedState()));
      if (!snapshots.every((s) => s.equals(snapshots[0]!))) return false;
      bytes = snapshots[0]!;
      return true;
    });
    return bytes!;
  }

  /** Groups with state in member `id`'s storage (memory storage only). */
  async storedGroups(id: string): Promise<string[]> {
    const storage = this.storages.get(id);
    if (storage === undefined) throw new Error(`no memory storage for ${id}`);
    return storage.groups();
  }

  async close(): Promise<void> {
    for (const id of [...this.members.keys()]) await this.stopMember(id);
    await this.network.close();
    for (const storage of this.storages.values()) await storage.close();
    for (const dir of this.dirs.values()) await rm(dir, { recursive: true, force: true });
  }

  private storageOf(id: string): StorageEngine {
    let storage = this.storages.get(id);
    if (storage === undefined) {
      storage = new MemoryStorageEngine();
      this.storages.set(id, storage);
    }
    return storage;
  }

  /** Member `id`'s data directory (LevelDB storage only). */
  dataDir(id: string): string {
    const dir = this.dirs.get(id);
    if (dir === undefined) throw new Error(`no data directory for ${id}`);
    return dir;
  }

  private async dirOf(id: string): Promise<string> {
    let dir = this.dirs.get(id);
    if (dir === undefined) {
      dir = await mkdtemp(join(tmpdir(), `mq-member-${id}-`));
      this.dirs.set(id, dir);
    }
    return dir;
  }
}

/**
 * Polls `condition` every few ms until it holds; throws after `timeoutMs`. Waits for a condition,
 * never for an amount of time: the bound only turns a hang into a failure.
 */
export async function waitFor(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('waitFor: condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `waitFor` for a condition that must be computed asynchronously. */
export async function waitForAsync(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error('waitForAsync: condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

export const bytes = (...values: number[]): Uint8Array => new Uint8Array(values);

export async function send(service: SpoolService, queue: string, payload: Uint8Array, spool = 'default'): Promise<string> {
  const result = await service.send(spool, queue, { payload, delayMs: 0, wantHandle: false });
  return result.messageId;
}

export async function receiveNow(service: SpoolService, queue: string, spool = 'default'): Promise<Delivery> {
  const delivery = await service.receive(spool, queue, { waitMs: 0 });
  if (delivery === null) throw new Error('nothing to receive');
  return delivery;
}

/** Awaits `promise` expecting an MqError of `kind`; returns it. */
export async function expectError(promise: Promise<unknown>, kind: string): Promise<MqError> {
  let caught: unknown = null;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected ${kind}`).toBeInstanceOf(MqError);
  expect((caught as MqError).kind, (caught as MqError).message).toBe(kind);
  return caught as MqError;
}
