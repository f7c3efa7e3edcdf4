// The deterministic simulation: a whole Raft cluster (3 or 5 founding voters plus spares that
// join later) in one process, run from one seed. Fault phase: clients propose, the network
// loses, duplicates, delays, reorders and partitions (symmetric and one-way), replicas crash
// (losing some unsynced writes) and restart, writes fail (the process exits and restarts),
// fsyncs stall, a restarting replica finds bad bytes in its log, snapshot or hard state (one
// replica at a time: a majority corrupted at once is beyond repair), members are added,
// promoted and removed, leadership is transferred, replicas snapshot and compact. Every step
// runs the safety checker. Heal phase:
// faults stop, everything restarts and reconnects, and the cluster must converge with every
// acknowledged proposal applied on every member in the same order.

import { bootstrapState } from '../../src/core/bootstrap.js';
import { ConfChangeType, decodeConfChange, type ConfChange } from '../../src/core/conf-change.js';
import { EntryType, type Entry, type Message, type NodeId } from '../../src/types.js';
import { Checker, type Ack } from './checker.js';
import { EventQueue } from './event-queue.js';
import { Prng } from '../../src/prng.js';
import { CALM, SimNetwork, type NetworkFaults } from './sim-network.js';
import { SimNode, type SimHost, type SimNodeParams } from './sim-node.js';

export interface SimOptions {
  readonly seed: number;
  /** Steps (events) of the fault phase. */
  readonly faultSteps?: number;
  /** Bound on heal-phase steps before the run counts as not converging (a liveness failure). */
  readonly healStepsMax?: number;
  /** Print every trace line as it happens. */
  readonly verbose?: boolean;
}

export interface SimResult {
  readonly seed: number;
  readonly steps: number;
  readonly simTimeMs: number;
  readonly voters: number;
  readonly acked: number;
  readonly elections: number;
  readonly crashes: number;
  /** Restarts that found bad bytes: entries or a snapshot dropped, or the hard state restored. */
  readonly corruptions: number;
  readonly confChanges: number;
  readonly transfers: number;
  readonly snapshotsTaken: number;
  readonly snapshotsRestored: number;
  readonly repairedWithoutLeader: number;
  readonly messages: number;
  readonly leaseChecks: number;
}

interface Pending {
  readonly node: NodeId;
  readonly term: number;
  readonly key: string;
}

const encoder = new TextEncoder();
const TRACE_LINES = 400;

export class SimulationFailure extends Error {
  constructor(
    readonly seed: number,
    cause: unknown,
    trace: readonly string[],
  ) {
    const reason =
      cause instanceof Error
        ? `${cause.name}: ${cause.message}\n${cause.stack ?? ''}`
        : String(cause);
    super(
      `raft simulation failed, seed ${seed}\n${reason}\n` +
        `replay: RAFT_SEED=${seed} npx vitest run packages/raft/test/sim/simulation.test.ts\n` +
        `last trace lines:\n${trace.join('\n')}`,
    );
    this.name = 'SimulationFailure';
  }
}

export class Simulation implements SimHost {
  readonly queue = new EventQueue();
  readonly network: SimNetwork;
  readonly checker = new Checker();
  private readonly prng: Prng;
  private readonly nodes = new Map<NodeId, SimNode>();
  private readonly founders: NodeId[];
  private readonly spares: NodeId[];
  private readonly params: SimNodeParams;
  private readonly faults: NetworkFaults;
  private faultsOn = true;
  private readonly pending = new Map<number, Pending>();
  private readonly acks: Ack[] = [];
  private proposalSeq = 0;
  private quietUntil = 0;
  private crashes = 0;
  private corruptions = 0;
  /** Chance that a restart in the fault phase finds bad bytes on the replica's disk. */
  private readonly corruptionRate: number;
  private confChanges = 0;
  private transfers = 0;
  private readonly traceRing: string[] = [];

  constructor(private readonly options: SimOptions) {
    const prng = new Prng(options.seed);
    this.prng = prng;
    this.network = new SimNetwork(this.queue, prng.fork(), (m) => this.deliver(m));
    const voters = prng.chance(0.5) ? 3 : 5;
    this.founders = Array.from({ length: voters }, (_, i) => `n${i + 1}`);
    this.spares = Array.from({ length: 3 }, (_, i) => `n${voters + i + 1}`);
    // Odd seeds run replicas that release applied payloads (as members do), followers keeping a
    // tail of 0 to 7 entries; taken from the seed, not the PRNG, so every seed's other draws stay
    // what they were.
    const release = options.seed % 2 === 1;
    const tail = { payloadTailEntries: (options.seed >> 1) % 8, payloadTailBytes: 1 << 20 };
    const drawn = randomParams(prng);
    const raft = { ...drawn.raft, releaseAppliedPayloads: release, ...tail };
    this.params = { ...drawn, raft };
    this.faults = randomFaults(prng);
    this.corruptionRate = prng.pick([0, 0.1, 0.3]);
    for (const id of [...this.founders, ...this.spares]) {
      const params = { ...this.params, tickPeriodMs: drifted(prng, this.params.tickPeriodMs) };
      this.nodes.set(id, new SimNode(id, this, params, prng.fork()));
    }
  }

  trace(line: string): void {
    const text = `${this.queue.now().toFixed(2)}ms ${line}`;
    if (this.options.verbose === true) console.log(text);
    this.traceRing.push(text);
    if (this.traceRing.length > TRACE_LINES) this.traceRing.shift();
  }

  /** Runs the fault phase then the heal phase; throws SimulationFailure on any violation. */
  run(): SimResult {
    const faultSteps = this.options.faultSteps ?? 4000;
    const healStepsMax = this.options.healStepsMax ?? 60_000;
    let steps = 0;
    try {
      const initial = bootstrapState(this.founders);
      for (const id of this.founders) this.nodes.get(id)!.start(initial);
      this.network.faults = this.faults;
      const params = JSON.stringify(this.params);
      const faults = JSON.stringify(this.faults);
      this.trace(`start voters=${this.founders} params=${params} faults=${faults}`);
      this.scheduleLoops();
      for (; steps < faultSteps; steps += 1) this.step();
      this.heal();
      let healSteps = 0;
      while (!this.converged()) {
        if (healSteps >= healStepsMax) {
          throw new Error(`liveness: no convergence after ${healSteps} heal steps`);
        }
        this.step();
        healSteps += 1;
        steps += 1;
      }
      this.checker.checkAcked(this.acks);
    } catch (cause) {
      this.trace(`state at failure:\n${this.describe()}`);
      throw new SimulationFailure(this.options.seed, cause, this.traceRing);
    }
    let snapshotsTaken = 0;
    let snapshotsRestored = 0;
    let repairedWithoutLeader = 0;
    for (const node of this.nodes.values()) {
      snapshotsTaken += node.snapshotsTaken;
      snapshotsRestored += node.snapshotsRestored;
      repairedWithoutLeader += node.repairedWithoutLeader;
    }
    return {
      seed: this.options.seed,
      steps,
      simTimeMs: Math.round(this.queue.now()),
      voters: this.founders.length,
      acked: this.acks.length,
      elections: this.checker.elections,
      crashes: this.crashes,
      corruptions: this.corruptions,
      confChanges: this.confChanges,
      transfers: this.transfers,
      snapshotsTaken,
      snapshotsRestored,
      repairedWithoutLeader,
      messages: this.network.sent,
      leaseChecks: this.checker.leaseChecks,
    };
  }

  /** One line per replica, for failure reports. */
  describe(): string {
    const lines: string[] = [];
    for (const node of this.nodes.values()) {
      const core = node.core;
      if (core === null) {
        const why = node.removed ? ' (removed)' : node.started ? '' : ' (never started)';
        lines.push(`  ${node.id} down${why}`);
        continue;
      }
      const config = core.config();
      const progress = [...core.progressAll()]
        .map(([id, p]) => `${id}:${p.state}/${p.match}/${p.next}`)
        .join(' ');
      lines.push(
        `  ${node.id} ${core.role()} term=${core.currentTerm()} lead=${core.leaderId()} ` +
          `commit=${core.commitIndex()} applied=${node.sm.index} last=${core.lastIndex()} ` +
          `base=${core.logBaseIndex()} voters=${config.voters.join(',')} ` +
          `learners=${config.learners.join(',')} ${progress}`,
      );
    }
    return lines.join('\n');
  }

  private step(): void {
    if (!this.queue.step()) throw new Error('event queue ran dry');
    const live = [];
    for (const node of this.nodes.values()) {
      if (node.core === null) continue;
      live.push({ id: node.id, core: node.core, stalled: node.isStalled() });
    }
    this.checker.afterStep(live);
  }

  private deliver(m: Message): void {
    this.nodes.get(m.to)?.deliver(m);
  }

  onApplied(node: SimNode, entry: Entry): void {
    const pending = this.pending.get(entry.index);
    if (pending !== undefined && pending.term !== entry.term) this.pending.delete(entry.index);
    if (pending !== undefined && pending.term === entry.term && pending.node === node.id) {
      this.acks.push({ index: entry.index, term: entry.term, key: pending.key });
      this.pending.delete(entry.index);
    }
    if (entry.type === EntryType.ConfChange) this.onConfChangeApplied(entry);
  }

  private onConfChangeApplied(entry: Entry): void {
    const change = decodeConfChange(entry.data);
    if (change.type !== ConfChangeType.RemoveMember) return;
    const node = this.nodes.get(change.node)!;
    if (node.removed) return;
    // Committed (it is applied): the member is gone for good. Stop it outside this callback.
    node.removed = true;
    this.trace(`${change.node} removed at ${entry.index}, stopping it`);
    this.queue.after(0, () => node.crash());
  }

  // ------------------------------------------------------------ fault-phase activity

  private scheduleLoops(): void {
    this.loop(2, 12, () => this.propose());
    this.loop(40, 300, () => this.injectFault());
    this.loop(150, 600, () => this.changeMembership());
    this.loop(250, 900, () => this.transferLeadership());
  }

  private loop(minMs: number, maxMs: number, action: () => void): void {
    this.queue.after(minMs + this.prng.next() * (maxMs - minMs), () => {
      if (!this.faultsOn) return;
      action();
      this.loop(minMs, maxMs, action);
    });
  }

  private upNodes(): SimNode[] {
    return [...this.nodes.values()].filter((node) => node.core !== null);
  }

  private leader(): SimNode | null {
    let best: SimNode | null = null;
    for (const node of this.upNodes()) {
      if (!node.core!.isLeader()) continue;
      if (best === null || node.core!.currentTerm() > best.core!.currentTerm()) best = node;
    }
    return best;
  }

  private propose(): void {
    // Quiet spells let lagging replicas catch up, so elections among equally up-to-date logs
    // (where stickiness and the lease matter) happen too.
    if (this.queue.now() < this.quietUntil) return;
    if (this.prng.chance(0.02)) {
      this.quietUntil = this.queue.now() + this.prng.range(50, 800);
      return;
    }
    const up = this.upNodes();
    if (up.length === 0) return;
    const leader = this.leader();
    const target = leader !== null && this.prng.chance(0.85) ? leader : this.prng.pick(up);
    const count = this.prng.range(1, 3);
    const keys = Array.from({ length: count }, () => `p${++this.proposalSeq}`);
    const result = target.core!.propose(keys.map((key) => encoder.encode(key)));
    if (result.ok) {
      keys.forEach((key, i) => {
        this.pending.set(result.index + i, { node: target.id, term: result.term, key });
      });
    }
    target.process();
  }

  private injectFault(): void {
    const ids = [...this.nodes.keys()].filter((id) => this.nodes.get(id)!.started);
    const roll = this.prng.next();
    if (roll < 0.15) {
      const candidates = this.upNodes().filter((node) => !node.removed);
      if (candidates.length > 0) this.crash(this.prng.pick(candidates), this.prng.range(10, 400));
    } else if (roll < 0.25) {
      // The leader dies, typically with writes in flight: where lost acknowledgements and the
      // figure 8 histories come from.
      const leader = this.leader();
      if (leader !== null) this.crash(leader, this.prng.range(5, 150));
    } else if (roll < 0.3) {
      // Power failure: a majority (or everyone) goes down at once, losing unsynced writes.
      const candidates = this.upNodes().filter((node) => !node.removed);
      const victims = candidates.filter(() => this.prng.chance(0.7));
      for (const victim of victims) this.crash(victim, this.prng.range(5, 100));
    } else if (roll < 0.37) {
      // Cut the leader off from one follower, one way or both: the follower campaigns while the
      // leader still holds its lease through the others.
      const leader = this.leader();
      const others = ids.filter((id) => id !== leader?.id);
      if (leader === null || others.length === 0) return;
      const follower = this.prng.pick(others);
      this.network.cutLink(leader.id, follower);
      if (this.prng.chance(0.5)) this.network.cutLink(follower, leader.id);
      this.trace(`cut ${leader.id} -> ${follower}`);
      this.queue.after(this.prng.range(100, 800), () => this.healNetwork());
    } else if (roll < 0.45) {
      const side = ids.filter(() => this.prng.chance(0.5));
      this.network.partition(side, ids);
      this.trace(`partition [${side.join(',')}] from the rest`);
      this.queue.after(this.prng.range(50, 600), () => this.healNetwork());
    } else if (roll < 0.6) {
      const a = this.prng.pick(ids);
      const b = this.prng.pick(ids);
      if (a === b) return;
      this.network.cutLink(a, b);
      this.trace(`cut ${a} -> ${b} (one way)`);
      this.queue.after(this.prng.range(50, 600), () => this.healNetwork());
    } else if (roll < 0.68) {
      // A blocked event loop (GC pause, slow callback), often the leader's.
      const up = this.upNodes();
      if (up.length === 0) return;
      const leader = this.leader();
      const victim = leader !== null && this.prng.chance(0.5) ? leader : this.prng.pick(up);
      const ms = this.prng.range(20, 250);
      this.trace(`stall ${victim.id} for ${ms}ms`);
      victim.stall(ms);
    } else if (roll < 0.7) {
      // A write fails (EIO, ENOSPC): the process exits and its supervisor restarts it; what
      // the failed write left on the disk is unknown (crash() lets a random prefix through).
      const busy = this.upNodes().filter((node) => !node.removed && node.pendingWrites() > 0);
      if (busy.length === 0) return;
      const victim = this.prng.pick(busy);
      this.trace(`io error on ${victim.id} (${victim.pendingWrites()} writes pending)`);
      this.crash(victim, this.prng.range(5, 60));
    } else if (roll < 0.72) {
      this.healNetwork();
    } else if (roll < 0.8) {
      this.network.faults = this.network.faults === CALM ? this.faults : CALM;
      this.trace(`network ${this.network.faults === CALM ? 'calm' : 'lossy'}`);
    }
  }

  private crash(victim: SimNode, downMs: number): void {
    victim.crash();
    this.crashes += 1;
    this.trace(`crash ${victim.id} for ${downMs}ms`);
    this.queue.after(downMs, () => this.restart(victim));
  }

  private restart(node: SimNode): void {
    if (node.removed || node.core !== null) return;
    this.trace(`restart ${node.id}`);
    if (this.faultsOn && this.prng.chance(this.corruptionRate) && !this.anyDamaged()) {
      const dropped = node.disk.corrupt(this.prng);
      if (dropped !== null) {
        this.corruptions += 1;
        this.trace(`bad bytes on ${node.id}: ${dropped}`);
      }
    }
    node.start(null);
  }

  /** Some replica still lacks entries it lost to bad bytes (on disk or in its running core). */
  private anyDamaged(): boolean {
    for (const node of this.nodes.values()) {
      if (node.disk.isDamaged() || (node.core?.storageDamage() ?? null) !== null) return true;
    }
    return false;
  }

  private healNetwork(): void {
    if (!this.faultsOn || this.network.cutCount() === 0) return;
    this.network.heal();
    this.trace('network healed');
  }

  private changeMembership(): void {
    const leader = this.leader();
    if (leader === null) return;
    const core = leader.core!;
    const config = core.config();
    const roll = this.prng.next();
    let change: ConfChange | null = null;
    const spare = this.spares.find((id) => !this.nodes.get(id)!.started);
    if (roll < 0.35 && spare !== undefined) {
      this.nodes.get(spare)!.start(null); // joins empty; learns everything from the leader
      const type = this.prng.chance(0.8) ? ConfChangeType.AddLearner : ConfChangeType.AddVoter;
      change = { type, node: spare };
    } else if (roll < 0.65 && config.learners.length > 0) {
      change = { type: ConfChangeType.PromoteLearner, node: this.prng.pick(config.learners) };
    } else if (roll < 0.9) {
      const removable = [...config.learners, ...(config.voters.length > 3 ? config.voters : [])];
      if (removable.length > 0) {
        change = { type: ConfChangeType.RemoveMember, node: this.prng.pick(removable) };
      }
    }
    if (change === null) return;
    const result = core.proposeConfChange(change);
    const outcome = result.ok ? `index ${result.index}` : result.reason;
    this.trace(`conf change ${JSON.stringify(change)} via ${leader.id}: ${outcome}`);
    if (result.ok) this.confChanges += 1;
    leader.process();
  }

  private transferLeadership(): void {
    const leader = this.leader();
    if (leader === null) return;
    const voters = leader.core!.config().voters.filter((id) => id !== leader.id);
    if (voters.length === 0) return;
    const target = this.prng.pick(voters);
    const result = leader.core!.transferLeadership(target);
    this.trace(`transfer ${leader.id} -> ${target}: ${result.ok ? 'started' : result.reason}`);
    if (result.ok) this.transfers += 1;
    leader.process();
  }

  // ------------------------------------------------------------ heal phase

  private heal(): void {
    this.faultsOn = false;
    this.network.heal();
    this.network.faults = CALM;
    this.trace('heal: faults off, network healed, restarting everyone');
    for (const node of this.nodes.values()) {
      if (node.started && !node.removed && node.core === null) node.start(null);
    }
  }

  /** A leader that committed its term's Noop, with every member up and applied to its commit. */
  private converged(): boolean {
    const leader = this.leader();
    if (leader === null) return false;
    const core = leader.core!;
    const commit = core.commitIndex();
    if (commit < core.termStartIndex() || commit !== core.lastIndex()) return false;
    const config = core.config();
    for (const id of [...config.voters, ...config.learners]) {
      const node = this.nodes.get(id)!;
      if (node.core === null || node.sm.index !== commit) return false;
    }
    for (const ack of this.acks) if (ack.index > commit) return false;
    return true;
  }
}

function randomParams(prng: Prng): SimNodeParams {
  const electionTicks = 10;
  return {
    raft: {
      electionTicks,
      heartbeatTicks: prng.range(1, 3),
      leaseTicks: 8,
      inflightMessagesMax: prng.pick([1, 2, 4, 16]),
      appendBytesMax: prng.pick([64, 256, 4096]),
      snapshotChunkBytes: prng.pick([32, 200, 1024]),
      preVote: prng.chance(0.8),
      checkQuorum: prng.chance(0.9),
    },
    tickPeriodMs: 10,
    fsyncMinMs: 0.2,
    fsyncMaxMs: prng.pick([1, 4, 12, 30]),
    snapshotEveryEntries: prng.range(8, 80),
    retainEntries: prng.pick([0, 0, 4, 32]),
    fillerBytesMax: prng.pick([0, 300, 3000]),
    slowFsyncRate: prng.pick([0, 0, 0.002, 0.01]),
  };
}

function randomFaults(prng: Prng): NetworkFaults {
  return {
    dropRate: prng.pick([0, 0.01, 0.05, 0.15]),
    duplicateRate: prng.pick([0, 0.02, 0.1]),
    delayMinMs: 0.2,
    delayMaxMs: prng.pick([2, 8, 30]),
  };
}

/** A tick period off by up to 2% (clock drift, well inside the lease's safety margin). */
function drifted(prng: Prng, periodMs: number): number {
  return periodMs * (1 + (prng.next() * 2 - 1) * 0.02);
}

/** Runs one seed. */
export function runSimulation(options: SimOptions): SimResult {
  return new Simulation(options).run();
}
