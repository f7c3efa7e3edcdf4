// Applies the fault episodes of a schedule to a real cluster: process faults through the
// ProcessCluster (SIGKILL, SIGSTOP/SIGCONT, data directory wiped, bad bytes in stored log
// entries and payload records: see bad-bytes.ts), network faults through the
// ProxyMesh on every link. `inject` starts an episode and hands back how to end it; `recover`
// restarts, continues or heals. A PRIMARY target is resolved when the episode starts.
//
// A wiped or corrupted member is recovered only once it is rebuilt: ready, every Raft group it
// hosts applied up to the commit index the other members had reached when it came back, and
// none still awaiting repair of entries lost to bad bytes, nor still fetching payloads it lacks
// (a replica sent a snapshot holds its payloads only once fetched), and each spool replica's
// payload scrub has made its first pass (a bit flipped in a payload record is latent until read
// or scrubbed; the pass has the copy it finds bad fetched while the others are good). Until then
// its data exists on one other member only, so a second fault then would be a second failure
// while the first is still under way (the schedule's one-fault-at-a-time model). A member that
// is not rebuilt within the injector's rebuild timeout fails the run.

import type { ClusterNode } from '../cluster/cluster-node.js';
import { metricSamples } from '../cluster/metrics-text.js';
import type { ProcessCluster } from '../cluster/process-cluster.js';
import { corruptPayloadRecords, corruptStoredEntries } from './bad-bytes.js';
import { Prng } from '@spoolmq/raft';
import type { ProxyMesh } from './proxy-mesh.js';
import { FAULT_KINDS, PRIMARY, type FaultEpisode, type FaultKind } from './schedule.js';

/** An episode in effect: what was done (for logs and history windows) and how to undo it. */
export interface InjectedFault {
  readonly kind: FaultKind;
  /** `kill n2`, `partition [n1] | [n2,n3] blackhole`... */
  readonly label: string;
  /** Ends the episode: restarts, continues or heals. Rejects when a process does not start. */
  readonly recover: () => Promise<void>;
}

export type FaultCounts = Record<FaultKind, number>;

/** Log entries a `corrupt` episode flips a bit in. */
const CORRUPTED_ENTRIES = 4;
/** Payload records a `corrupt` episode flips a bit in. */
const CORRUPTED_PAYLOADS = 4;

/** How long a wiped member has to be rebuilt from the others, by default. */
export const REBUILD_TIMEOUT_MS = 60_000;
const REBUILD_POLL_MS = 250;

/** Zero of every kind (killMajority included, so reports have a fixed shape). */
export function zeroFaultCounts(): FaultCounts {
  const counts = Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as FaultCounts;
  counts.killMajority = 0;
  return counts;
}

export class FaultInjector {
  private readonly countsValue = zeroFaultCounts();

  constructor(
    private readonly cluster: ProcessCluster,
    private readonly mesh: ProxyMesh,
    /** The spool whose primary PRIMARY names. */
    private readonly spool: string,
    /**
     * How long a wiped or corrupted member has to be rebuilt, ms; default REBUILD_TIMEOUT_MS
     * (a harness with a large backlog gives more: the rebuild moves it).
     */
    private readonly rebuildTimeoutMs = REBUILD_TIMEOUT_MS,
  ) {}

  /** Episodes injected so far, by kind. */
  get counts(): Readonly<FaultCounts> {
    return { ...this.countsValue };
  }

  /** Starts `episode`. Rejects when a process cannot be signalled or its data removed. */
  async inject(episode: FaultEpisode): Promise<InjectedFault> {
    const fault = await this.start(episode);
    this.countsValue[episode.kind] += 1;
    return fault;
  }

  private async start(episode: FaultEpisode): Promise<InjectedFault> {
    const kind = episode.kind;
    switch (kind) {
      case 'kill':
      case 'wipe': {
        const member = await this.resolve(episode.member, episode.index);
        const node = this.cluster.memberById(member);
        await node.kill('SIGKILL');
        if (kind === 'kill') return { kind, label: `kill ${member}`, recover: () => node.start() };
        await node.wipe();
        const recover = async (): Promise<void> => {
          await node.start();
          await this.waitRebuilt(node);
        };
        return { kind, label: `wipe ${member}`, recover };
      }
      case 'corrupt':
        return this.corrupt(episode);
      case 'pause': {
        const node = this.cluster.memberById(await this.resolve(episode.member, episode.index));
        node.pause();
        return { kind, label: `pause ${node.id}`, recover: async () => node.resume() };
      }
      case 'killMajority': {
        const nodes = episode.members.map((id) => this.cluster.memberById(id));
        await Promise.all(nodes.map((node) => node.kill('SIGKILL')));
        const recover = async (): Promise<void> => {
          await Promise.all(nodes.map((node) => node.start()));
        };
        return { kind, label: `killMajority ${episode.members.join(',')}`, recover };
      }
      case 'partition': {
        const minority = await this.resolveAll(episode.minority, episode.index);
        const majority = this.mesh.members.filter((id) => !minority.includes(id));
        this.mesh.partition(minority, majority, episode.mode);
        const label = `partition [${minority.join(',')}] | [${majority.join(',')}] ${episode.mode}`;
        return this.network(kind, label);
      }
      case 'isolate': {
        const member = await this.resolve(episode.member, episode.index);
        this.mesh.isolate(member, episode.mode);
        return this.network(kind, `isolate ${member} ${episode.mode}`);
      }
      case 'cutOneWay': {
        const from = await this.resolve(episode.from, episode.index);
        const to = episode.to === 'others' ? this.mesh.members : episode.to;
        const targets = to.filter((id) => id !== from);
        for (const id of targets) this.mesh.cutOneWay(from, id, episode.mode);
        return this.network(kind, `cutOneWay ${from} -> ${targets.join(',')} ${episode.mode}`);
      }
      case 'delay': {
        const member = await this.resolveOrAll(episode.member, episode.index);
        this.mesh.delay(episode.delayMs, episode.jitterMs, member);
        const what = `${episode.delayMs}±${episode.jitterMs} ms`;
        return this.network(kind, `delay ${member ?? 'all'} ${what}`);
      }
      case 'drop': {
        const member = await this.resolveOrAll(episode.member, episode.index);
        this.mesh.drop(episode.probability, episode.stallMs, member);
        const what = `p=${episode.probability} stall ${episode.stallMs} ms`;
        return this.network(kind, `drop ${member ?? 'all'} ${what}`);
      }
    }
  }

  /** Kills a member, flips bits in its stored entries and payloads; recovery awaits a rebuild. */
  private async corrupt(
    episode: Extract<FaultEpisode, { kind: 'corrupt' }>,
  ): Promise<InjectedFault> {
    const member = await this.resolve(episode.member, episode.index);
    const node = this.cluster.memberById(member);
    await node.kill('SIGKILL');
    if (node.dataDir === undefined) throw new Error(`${node.label} has no data directory`);
    const prng = new Prng(episode.index + 1);
    const { entries } = await corruptStoredEntries(node.dataDir, prng, CORRUPTED_ENTRIES);
    const { records } = await corruptPayloadRecords(node.dataDir, prng, CORRUPTED_PAYLOADS);
    const recover = async (): Promise<void> => {
      await node.start();
      await this.waitRebuilt(node);
    };
    const label = `corrupt ${member} ${[...entries, ...records].join(',')}`;
    return { kind: 'corrupt', label, recover };
  }

  /** See the file comment. Rejects after `rebuildTimeoutMs` with what was still behind. */
  private async waitRebuilt(node: ClusterNode): Promise<void> {
    const deadlineMs = performance.now() + this.rebuildTimeoutMs;
    let targets: Map<string, number> | null = null;
    let behind = 'not ready';
    while (performance.now() < deadlineMs) {
      if (targets === null && (await node.isReady())) targets = await this.commitTargets(node);
      if (targets !== null) {
        const applied = await groupValues(node, 'mq_member_raft_applied_index');
        const lagging = [...targets].filter(([group, index]) => (applied.get(group) ?? 0) < index);
        const damaged = await groupValues(node, 'mq_member_raft_storage_damaged');
        const unrepaired = [...damaged].filter(([, value]) => value !== 0).map(([group]) => group);
        const missing = await groupValues(node, 'mq_member_spool_payloads_missing');
        const fetching = [...missing].filter(([, value]) => value !== 0);
        const passes = await groupValues(node, 'mq_member_spool_scrub_passes_total');
        const spools = [...targets.keys()].filter((group) => group.startsWith('spool:'));
        const unscrubbed = spools.filter((group) => (passes.get(group) ?? 0) < 1);
        const whole = fetching.length === 0 && unscrubbed.length === 0;
        if (lagging.length === 0 && unrepaired.length === 0 && whole) return;
        behind = lagging.map(([group, index]) => `${group} ${applied.get(group)}/${index}`).join();
        if (unrepaired.length > 0) behind += ` damaged: ${unrepaired.join()}`;
        const payloads = fetching.map(([group, count]) => `${group} ${count}`).join();
        if (fetching.length > 0) behind += ` payloads still missing: ${payloads}`;
        if (unscrubbed.length > 0) behind += ` not scrubbed yet: ${unscrubbed.join()}`;
      }
      await new Promise((resolve) => setTimeout(resolve, REBUILD_POLL_MS));
    }
    throw new Error(`${node.label} not rebuilt within ${this.rebuildTimeoutMs} ms: ${behind}`);
  }

  /** Per group `node` hosts: the highest commit index any other running member reports. */
  private async commitTargets(node: ClusterNode): Promise<Map<string, number>> {
    const own = await groupValues(node, 'mq_member_raft_applied_index');
    const targets = new Map<string, number>([...own.keys()].map((group) => [group, 0]));
    const others = this.cluster.members.filter((m) => m !== node && m.alive && !m.paused);
    for (const other of others) {
      for (const [group, commit] of await groupValues(other, 'mq_member_raft_commit_index')) {
        if (targets.has(group)) targets.set(group, Math.max(targets.get(group)!, commit));
      }
    }
    return targets;
  }

  private network(kind: FaultKind, label: string): InjectedFault {
    return { kind, label, recover: async () => this.mesh.heal() };
  }

  /**
   * A member id as given, or for PRIMARY the spool's primary now; with no primary known (an
   * election under way) a member chosen by the episode's index, so a replay picks the same.
   */
  private async resolve(target: string, index: number): Promise<string> {
    if (target !== PRIMARY) return target;
    const primary = await this.cluster.primaryOf(this.spool);
    if (primary !== null) return primary;
    const ids = this.cluster.ids;
    return ids[index % ids.length]!;
  }

  /** undefined for 'all' (every link), else `resolve`. */
  private async resolveOrAll(target: string, index: number): Promise<string | undefined> {
    return target === 'all' ? undefined : this.resolve(target, index);
  }

  private async resolveAll(targets: readonly string[], index: number): Promise<string[]> {
    const out: string[] = [];
    for (const target of targets) {
      const id = await this.resolve(target, index);
      if (!out.includes(id)) out.push(id);
    }
    return out;
  }
}

/** Group -> value of a per-group gauge in `node`'s /metrics (empty when it does not answer). */
async function groupValues(node: ClusterNode, metric: string): Promise<Map<string, number>> {
  const text = await node.metrics().catch(() => '');
  const samples = metricSamples(text, metric);
  return new Map(samples.map((sample) => [sample.labels['group'] ?? '', sample.value]));
}
