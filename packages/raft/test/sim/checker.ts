// Safety properties checked while the simulation runs (Raft paper figure 3):
//   election safety      at most one leader per term;
//   log matching         two logs holding an entry with the same index and term hold the same
//                        entry there and agree on the term just before it;
//   leader completeness  a new leader of term T holds every entry committed in a term before T
//                        (Raft 5.4.3: entries committed in later terms need not be there; a
//                        node stalled mid-election may win an old term after a newer one
//                        committed entries, and can commit nothing in it);
//   state machine safety every replica applying index i reaches the same state (hash chain);
//   leader lease         while a leader holds its lease, nobody leads a later term, and its
//                        term is no older than any applied entry's (a leader elected late for
//                        an old term, after a newer one committed, never holds a lease: it
//                        would serve receives beside the newer primary);
//   durability           every acknowledged proposal is applied at the index it was given.
// A violation throws SafetyViolation, which the simulation reports with its seed.

import type { RaftCore } from '../../src/core/raft.js';
import type { Entry, NodeId } from '../../src/types.js';
import { dataHash, type ChainState } from './hash-state-machine.js';

/** Both known and different. */
function differs(a: number | undefined, b: number | undefined): boolean {
  return a !== undefined && b !== undefined && a !== b;
}

export class SafetyViolation extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetyViolation';
  }
}

interface Registered {
  readonly data: number;
  readonly type: number;
  readonly prevTerm: number | undefined;
}

export interface Ack {
  readonly index: number;
  readonly term: number;
  readonly key: string;
}

export interface LiveReplica {
  readonly id: NodeId;
  readonly core: RaftCore;
  /** Stalled: its lease clock is behind until it resumes and it can serve nothing meanwhile. */
  readonly stalled: boolean;
}

const decoder = new TextDecoder();

export class Checker {
  private readonly leaderOfTerm = new Map<number, NodeId>();
  private readonly leaderTermSeen = new Map<NodeId, number>();
  private readonly registry = new Map<string, Registered>();
  private readonly appliedTerm: number[] = [];
  private readonly appliedH1: number[] = [];
  private readonly appliedH2: number[] = [];
  private readonly appliedKey: (string | undefined)[] = [];
  /**
   * For each applied index, the lowest term of a replica seen applying it: the entry was
   * committed in that term or an earlier one (a replica at term u knows only commits of terms up
   * to u), so a leader of a later term must hold it.
   */
  private readonly committedByTerm: number[] = [];
  maxApplied = 0;
  /** The highest term of any applied entry: committed in that term or later. */
  maxAppliedTerm = 0;
  elections = 0;
  leaseChecks = 0;

  /** Log matching: every entry that enters any log passes through a Ready. */
  onReadyEntries(id: NodeId, core: RaftCore, entries: readonly Entry[]): void {
    let prevTerm = entries.length > 0 ? core.termAt(entries[0]!.index - 1) : undefined;
    for (const entry of entries) {
      const key = `${entry.index}:${entry.term}`;
      const mine: Registered = { data: dataHash(entry.data), type: entry.type, prevTerm };
      const seen = this.registry.get(key);
      if (seen === undefined) {
        this.registry.set(key, mine);
      } else if (seen.data !== mine.data || seen.type !== mine.type) {
        throw new SafetyViolation(`log matching: ${id} holds a different entry at ${key}`);
      } else if (differs(seen.prevTerm, prevTerm)) {
        throw new SafetyViolation(`log matching: ${id} disagrees on the term before ${key}`);
      }
      prevTerm = entry.term;
    }
  }

  /** State machine safety: the chain after applying index i is the same everywhere. */
  onApply(id: NodeId, entry: Entry, state: ChainState, replicaTerm: number): void {
    const i = entry.index;
    const bound = this.committedByTerm[i];
    if (bound === undefined || replicaTerm < bound) this.committedByTerm[i] = replicaTerm;
    if (this.appliedTerm[i] === undefined) {
      this.appliedTerm[i] = entry.term;
      this.appliedH1[i] = state.h1;
      this.appliedH2[i] = state.h2;
      this.appliedKey[i] = entry.type === 0 ? decoder.decode(entry.data) : undefined;
      if (i > this.maxApplied) this.maxApplied = i;
      if (entry.term > this.maxAppliedTerm) this.maxAppliedTerm = entry.term;
      return;
    }
    const sameChain = this.appliedH1[i] === state.h1 && this.appliedH2[i] === state.h2;
    if (this.appliedTerm[i] !== entry.term || !sameChain) {
      throw new SafetyViolation(
        `state machine safety: ${id} applied term ${entry.term} at ${i}, ` +
          `another replica applied term ${this.appliedTerm[i]} (or a different history)`,
      );
    }
  }

  /** A replica's state machine was restored from a snapshot (received or after restart). */
  onRestore(id: NodeId, state: ChainState): void {
    const i = state.index;
    if (i === 0) return;
    if (this.appliedH1[i] === undefined) {
      throw new SafetyViolation(`${id} restored a snapshot at ${i} that nobody applied`);
    }
    if (this.appliedH1[i] !== state.h1 || this.appliedH2[i] !== state.h2) {
      throw new SafetyViolation(`state machine safety: ${id} restored a different state at ${i}`);
    }
  }

  /** Checks run after every simulation step over the replicas that are up. */
  afterStep(replicas: readonly LiveReplica[]): void {
    let leaseHolder: LiveReplica | null = null;
    for (const replica of replicas) {
      const { id, core } = replica;
      if (!core.isLeader()) continue;
      const term = core.currentTerm();
      const known = this.leaderOfTerm.get(term);
      if (known !== undefined && known !== id) {
        throw new SafetyViolation(`election safety: ${known} and ${id} both lead term ${term}`);
      }
      if (known === undefined) this.leaderOfTerm.set(term, id);
      if (this.leaderTermSeen.get(id) !== term) {
        this.leaderTermSeen.set(id, term);
        this.elections += 1;
        this.checkLeaderCompleteness(id, core);
      }
      if (!replica.stalled && core.hasLeaderLease()) {
        if (leaseHolder !== null) {
          throw new SafetyViolation(`lease: ${leaseHolder.id} and ${id} both hold a leader lease`);
        }
        leaseHolder = replica;
      }
    }
    if (leaseHolder === null) return;
    this.leaseChecks += 1;
    const term = leaseHolder.core.currentTerm();
    if (term < this.maxAppliedTerm) {
      throw new SafetyViolation(
        `lease: ${leaseHolder.id} holds a lease in term ${term} after an entry of term ` +
          `${this.maxAppliedTerm} was committed`,
      );
    }
    for (const { id, core } of replicas) {
      if (core.isLeader() && core.currentTerm() > term) {
        throw new SafetyViolation(
          `lease: ${leaseHolder.id} holds a lease in term ${term} while ${id} leads term ` +
            `${core.currentTerm()}`,
        );
      }
    }
  }

  private checkLeaderCompleteness(id: NodeId, core: RaftCore): void {
    const leaderTerm = core.currentTerm();
    for (let i = core.logBaseIndex() + 1; i <= this.maxApplied; i += 1) {
      const committedBy = this.committedByTerm[i];
      if (committedBy === undefined || committedBy >= leaderTerm) continue;
      const term = core.termAt(i);
      if (term !== this.appliedTerm[i]) {
        throw new SafetyViolation(
          `leader completeness: new leader ${id} (term ${core.currentTerm()}) has term ` +
            `${term} at ${i}, applied elsewhere with term ${this.appliedTerm[i]}`,
        );
      }
    }
  }

  /** Durability: each acknowledged proposal is the entry applied at its index. */
  checkAcked(acks: readonly Ack[]): void {
    for (const ack of acks) {
      if (this.appliedTerm[ack.index] !== ack.term || this.appliedKey[ack.index] !== ack.key) {
        throw new SafetyViolation(
          `durability: acknowledged ${ack.key} at ${ack.index} (term ${ack.term}) was replaced`,
        );
      }
    }
  }

  appliedKeyAt(index: number): string | undefined {
    return this.appliedKey[index];
  }
}
