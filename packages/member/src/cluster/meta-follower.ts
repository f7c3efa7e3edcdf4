// How a member follows its metadata: what each applied command changes on the member (a deleted
// spool's replica stops, added members are dialled, the auth table is pushed, plans and replica
// moves are revisited), and when the replicas are reconciled with the placement: after every
// applied entry, once more after each batch of applies, after a configuration or leader change,
// and every RECONCILE_INTERVAL_MS (a leader's lease, which its own moved-away replicas wait for,
// comes with no event). Reconciliation is idempotent and cheap.

import type { RaftNode } from '@spoolmq/raft';
import { type Clock, type TimerHandle, afterTurn } from '@spoolmq/protocol';
import type { MetaCommand, MetaResult } from './meta-commands.js';

/** How often a member reconciles its replicas with the metadata without a new entry (ms). */
export const RECONCILE_INTERVAL_MS = 1_000;

/** Metadata commands that change what gateways authenticate with. */
const AUTH_COMMANDS: ReadonlySet<MetaCommand['type']> = new Set([
  'createAccount',
  'putAccount',
  'putKey',
  'deleteKey',
  'setKeyBlocked',
  'putPlan',
]);
/** Metadata commands that change the plan some spool should have. */
const PLAN_COMMANDS: ReadonlySet<MetaCommand['type']> = new Set([
  'createAccount',
  'putAccount',
  'putPlan',
  'createSpool',
]);
/** Metadata commands that start or end a spool's replica move. */
const MOVE_COMMANDS: ReadonlySet<MetaCommand['type']> = new Set(['moveReplica', 'finishMove']);
/** Metadata commands that change who is a member (calls of a removed one are cut). */
const MEMBERSHIP_COMMANDS: ReadonlySet<MetaCommand['type']> = new Set([
  'addMember',
  'removeMember',
]);

/**
 * What following the metadata does on the member. A null command (the groups restarted from
 * storage: anything may have changed) calls every effect but `spoolDeleted`.
 */
export interface MetaEffects {
  /** The member is closing: the periodic reconciliation stops. */
  isClosing(): boolean;
  /** The cluster layer's clock (the periodic reconciliation). */
  readonly clock: Clock;
  /** Spool `name` was deleted: its replica here stops and its storage goes. */
  spoolDeleted(name: string): void;
  /** A member was added: dial it at the address the metadata records. */
  membersAdded(): void;
  /** A member was added or removed: cut the calls of members no longer admitted. */
  membershipChanged(): void;
  /** Accounts, keys or plans changed: push the auth table. */
  authChanged(): void;
  /** Some spool's plan may have changed. */
  plansChanged(): void;
  /** A replica move started or ended. */
  movesChanged(): void;
  /** Start and stop replicas to match the placement. */
  reconcile(): void;
}

export class MetaFollower {
  private timer: TimerHandle | null = null;
  /** A reconciliation is queued for the next turn (see `watch`). */
  private queued = false;

  constructor(private readonly effects: MetaEffects) {}

  /** Runs the effects of `command`, applied with `result` (null, null: the groups restarted). */
  applied(command: MetaCommand | null, result: MetaResult | null): void {
    const all = command === null;
    const effects = this.effects;
    if (command?.type === 'deleteSpool' && result?.kind === 'ok') {
      effects.spoolDeleted(command.name);
    }
    if (all || command.type === 'addMember') effects.membersAdded();
    if (all || MEMBERSHIP_COMMANDS.has(command.type)) effects.membershipChanged();
    if (all || AUTH_COMMANDS.has(command.type)) effects.authChanged();
    if (all || PLAN_COMMANDS.has(command.type)) effects.plansChanged();
    effects.reconcile();
    this.queueReconcile(); // once the batch this entry is part of is applied (see watch)
    if (all || MOVE_COMMANDS.has(command.type)) effects.movesChanged();
  }

  /**
   * Reconciles again once the metadata of `node` may have caught up (metaCaughtUp). Entries are
   * applied in batches, and during a batch the applied index trails the commit index: an apply in
   * the middle of one is no reason to drop a moved replica's storage (the registry waits). The
   * batch's last entry may be a configuration change or a Noop, which reach no `applied`, and a
   * member that was just removed from the metadata group gets no later entry: so a moved replica
   * whose finishMove was applied mid-batch was kept for good (issue 14, the replica-mover test:
   * the removed member's metadata ended with its own removal). Hence one reconciliation after
   * every batch of applies (queued: it runs once the batch is done), after each configuration
   * change, and when the known leader changes.
   */
  watch(node: RaftNode): void {
    node.on('config-change', () => this.queueReconcile());
    node.on('leader-change', () => this.queueReconcile());
  }

  /** Starts the periodic reconciliation. */
  start(): void {
    this.timer = this.effects.clock.setTimer(() => {
      if (this.effects.isClosing()) return;
      this.start(); // first: a throwing reconciliation must not stop the timer
      this.effects.reconcile();
    }, RECONCILE_INTERVAL_MS);
  }

  /** Stops the periodic reconciliation. */
  close(): void {
    if (this.timer !== null) this.effects.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private queueReconcile(): void {
    if (this.queued) return;
    this.queued = true;
    afterTurn(() => {
      this.queued = false;
      this.effects.reconcile();
    });
  }
}

/**
 * Whether metadata `node` on member `id` is as current as the group's: a leader is known and
 * every entry known committed is applied (a leader: its term's first entry too). While a
 * restarted member replays old entries, its metadata may describe the past, and a replica it does
 * not host by that past is no reason to drop the replica's storage.
 */
export function metaCaughtUp(node: RaftNode | undefined, id: string): boolean {
  if (node === undefined) return false;
  const status = node.status();
  if (status.leaderId === null || status.appliedIndex < status.commitIndex) return false;
  return status.leaderId !== id || node.hasLeaderLease();
}
