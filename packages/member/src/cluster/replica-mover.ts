// Drives the spools' replica moves recorded in the metadata (MoveReplicaCommand). The member
// leading a spool's Raft group does the Raft steps, one at a time, each re-derived from the
// group's configuration, so a move interrupted anywhere (the driver's member closed, leadership
// moved, the metadata leader lost) resumes from where it stood on whichever member leads next:
//
//   1. `to` joins the group as a learner, catches up, and is promoted (RaftNode.addVoter, thesis
//      4.2.1): every acknowledged entry is on the new voter before anything is taken away;
//   2. when `from` leads the group, it hands leadership to another voter first (the new leader
//      goes on from step 3);
//   3. `from` leaves the group (RaftNode.removeMember);
//   4. `finishMove` in the metadata: the replica set becomes replicas - from + to, and `from`
//      closes its replica and drops its storage (Member.reconcile).

import type { ClusterConfig, RaftNode } from '@spoolmq/raft';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import type { MetaCommand, MetaResult } from './meta-commands.js';
import type { MetaState, SpoolMove } from './meta-state.js';
import type { SpoolReplica } from './spool-replica.js';

/** What the mover needs of its member. */
export interface MoverHost {
  readonly id: string;
  /** The metadata as applied here (null before the member opened it). */
  metaState(): MetaState | null;
  replica(spool: string): SpoolReplica | undefined;
  /** Proposes on the metadata group's leader (forwarded when another member leads). */
  proposeMeta(command: MetaCommand): Promise<MetaResult>;
  /** Pause before a failed step is tried again (ms, >= 1), on `clock`. */
  readonly retryMs: number;
  /** The cluster layer's clock (MemberOptions.clusterClock). */
  readonly clock: Clock;
}

/** The next Raft step of a move, given the spool group's configuration as its leader sees it. */
export type MoveStep =
  | { readonly kind: 'addVoter'; readonly id: string }
  | { readonly kind: 'transfer'; readonly to: string }
  | { readonly kind: 'remove'; readonly id: string }
  | { readonly kind: 'finish' };

/**
 * The step that comes next for `move` on the group whose leader is `self`. Pure. A shrink
 * (`to` '') skips the voter step; the leader hands its leadership to `to`, the voter just caught
 * up, or else to the first other voter.
 */
export function nextMoveStep(move: SpoolMove, config: ClusterConfig, self: string): MoveStep {
  const { from, to } = move;
  if (to !== '' && !config.voters.includes(to)) return { kind: 'addVoter', id: to };
  if (config.voters.includes(from) || config.learners.includes(from)) {
    if (from !== self) return { kind: 'remove', id: from };
    const heir = to !== '' ? to : config.voters.find((id) => id !== self);
    if (heir !== undefined) return { kind: 'transfer', to: heir };
  }
  return { kind: 'finish' };
}

export class ReplicaMover {
  /** Spools whose move this member is driving now. */
  private readonly driving = new Set<string>();
  /** Spools waiting to retry a failed step. */
  private readonly retries = new Map<string, TimerHandle>();
  private closed = false;

  constructor(private readonly host: MoverHost) {}

  /** Looks at every move the metadata records (after a metadata change). */
  kickAll(): void {
    const state = this.host.metaState();
    if (state === null) return;
    for (const spool of state.spools.values()) {
      if (spool.moving !== null) this.kick(spool.name);
    }
  }

  /** Drives `spool`'s move if one is recorded and this member leads the spool's group. */
  kick(spool: string): void {
    if (this.closed || this.driving.has(spool) || this.retries.has(spool)) return;
    if (this.moveOf(spool) === null) return;
    const replica = this.host.replica(spool);
    if (replica === undefined || !replica.node.isLeader()) return;
    this.driving.add(spool);
    this.drive(spool, replica).then(
      () => this.driving.delete(spool),
      () => {
        this.driving.delete(spool);
        this.retryLater(spool);
      },
    );
  }

  close(): void {
    this.closed = true;
    for (const timer of this.retries.values()) this.host.clock.clearTimer(timer);
    this.retries.clear();
  }

  /**
   * Runs the move's steps while this member leads the group. Returns when the move is finished,
   * gone, or handed to the next leader; rejects when a step fails (tried again later).
   */
  private async drive(spool: string, replica: SpoolReplica): Promise<void> {
    const node = replica.node;
    for (;;) {
      const move = this.moveOf(spool, replica.gen);
      if (this.closed || move === null || !node.isLeader()) return;
      const step = nextMoveStep(move, node.status().config, this.host.id);
      if (step.kind === 'finish') return this.finish(spool, move);
      await this.runStep(node, step);
      if (step.kind === 'transfer') return; // the new leader goes on
    }
  }

  private async runStep(
    node: RaftNode,
    step: Exclude<MoveStep, { kind: 'finish' }>,
  ): Promise<void> {
    switch (step.kind) {
      case 'addVoter':
        return node.addVoter(step.id);
      case 'transfer':
        return node.transferLeadership(step.to);
      case 'remove':
        return node.removeMember(step.id);
    }
  }

  /** Records the new replica set. `not_found`: finished already (by an earlier leader). */
  private async finish(spool: string, move: SpoolMove): Promise<void> {
    const result = await this.host.proposeMeta({ type: 'finishMove', spool, ...move });
    if (result.kind !== 'ok' && result.kind !== 'not_found') {
      throw new Error(`finishMove of ${spool}: ${result.kind}`);
    }
  }

  /** The spool's move in progress (of incarnation `gen` when given), or null. */
  private moveOf(spool: string, gen?: number): SpoolMove | null {
    const record = this.host.metaState()?.spools.get(spool);
    if (record === undefined || (gen !== undefined && record.gen !== gen)) return null;
    return record.moving;
  }

  private retryLater(spool: string): void {
    if (this.closed || this.retries.has(spool)) return;
    // Steps fail while the group changes leader, the joining member has not started its replica
    // yet, or the metadata has no leader: all pass by themselves, so the step is simply retried.
    const timer = this.host.clock.setTimer(() => {
      this.retries.delete(spool);
      this.kick(spool);
    }, this.host.retryMs);
    this.retries.set(spool, timer);
  }
}
