// Applies the fault episodes of a schedule to a real cluster: process faults through the
// ProcessCluster (SIGKILL, SIGSTOP/SIGCONT, data directory wiped), network faults through the
// ProxyMesh on every link. `inject` starts an episode and hands back how to end it; `recover`
// restarts, continues or heals. A PRIMARY target is resolved when the episode starts.

import type { ProcessCluster } from '../cluster/process-cluster.js';
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
        if (kind === 'wipe') await node.wipe();
        return { kind, label: `${kind} ${member}`, recover: () => node.start() };
      }
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
