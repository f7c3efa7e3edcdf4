// The admin API's backend on a member (AdminBackend from @spoolmq/protocol). Reads come from this
// member's metadata replica; changes are proposed to the metadata group's leader (forwarded over
// the accounts service's Call when another member leads). A change to accounts, keys or plans
// answers once every reachable member has applied it and every gateway watching them has
// installed it (at most PROPAGATION_WAIT_MS), so a key created or revoked through the admin API
// is in force on every gateway when the call returns.

import { createHash } from 'node:crypto';
import { MqError } from '@spoolmq/engine';
import type { RaftNode } from '@spoolmq/raft';
import {
  type AdminAnswers,
  type AdminOp,
  type AdminStep,
  type AdminStepOf,
  type PayloadChunks,
  type PayloadItem,
  WireError,
  decodeAdminAnswer,
  encodeAdminStep,
  type AdminAccount,
  type AdminAccountState,
  type AdminBackend,
  type AdminCluster,
  type AdminKey,
  type AdminNewKey,
  type AdminPlan,
  type AdminSpool,
} from '@spoolmq/protocol';
import { type Clock, sleepMs } from '../host/clock.js';
import { unavailable } from './cluster-errors.js';
import {
  ACCOUNT_ID_PATTERN,
  DEFAULT_PLAN_NAME,
  type KeyRecord,
  type MetaCommand,
  type MetaResult,
  PLAN_NAME_PATTERN,
  accountSpool,
  decodeMetaCommand,
  encodeMetaCommand,
  keyIdOf,
  resolveAccountPlan,
  spoolAccount,
} from './meta-commands.js';
import type { MetaReplica } from './meta-replica.js';
import { type PlacedSpool, hostsReplica } from './meta-state.js';
import { pickReplacement } from './placement.js';
import type { SpoolReplica } from './spool-replica.js';

/** Longest an admin change waits for every member and gateway to hold it. */
export const PROPAGATION_WAIT_MS = 2_000;
/** Longest a spool creation waits for the new spool's primary to open. */
export const SPOOL_OPEN_WAIT_MS = 5_000;
/**
 * Longest a replica move or a member removal waits for its moves (they go on afterwards: a
 * re-run waits again).
 */
export const MOVE_WAIT_MS = 120_000;
/** Rounds of moves a removal makes (a spool placed on the member meanwhile needs another). */
const REMOVE_ROUNDS_MAX = 3;
/** Spools a refusal names. */
const NAMED_SPOOLS_MAX = 10;
/** Pause between checks of what other members hold (remote state: nothing wakes a wait). */
const PROPAGATION_POLL_MS = 10;
/** Deadline of one forwarded call. */
const CALL_DEADLINE_MS = 5_000;
const SPOOL_NAME = /^[A-Za-z0-9_:-]{1,63}$/;
const MEMBER_ID = /^[A-Za-z0-9_.-]{1,64}$/;
const ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):[0-9]{1,5}$/;
/** Prefix of every API key (recognisable in logs and secret scanners). */
export const API_KEY_PREFIX = 'mqk_';
/** Random bytes of an API key. */
export const API_KEY_RANDOM_BYTES = 32;

function metaError(result: MetaResult, what: string): MqError | null {
  switch (result.kind) {
    case 'ok':
      return null;
    case 'exists':
      return new MqError('conflict', `${what} already exists`);
    case 'not_found':
      return new MqError('not_found', `${what}: not found`);
    case 'limit':
      return new MqError('conflict', `${what}: the ${result.what} limit is reached`, {
        limit: result.what,
      });
    case 'conflict':
      return new MqError('conflict', `${what}: ${result.why}`);
    case 'not_initialized':
      return unavailable('the cluster is not initialized yet; retry');
  }
}

function invalid(field: string, message: string): MqError {
  return new MqError('invalid_argument', message, { field });
}

/**
 * What the admin backend needs of its member: the metadata replica, its spool replicas' leaders
 * and nodes, readiness of a new spool, the auth push, payload serving and the way to reach other
 * members. The member implements it; nothing here knows the member's other concerns.
 */
export interface AdminHost {
  readonly id: string;
  readonly meta: MetaReplica;
  /** This member's replica of `spool`, if it holds one. */
  replica(spool: string): Pick<SpoolReplica, 'leaderId' | 'node'> | undefined;
  /**
   * Sends an encoded AdminCall to member `id` (member-links.ts); resolves the encoded answer.
   * Rejects with 503 unavailable when `id` cannot be reached within `deadlineMs`.
   */
  callMember(id: string, call: Uint8Array, deadlineMs: number): Promise<Uint8Array>;
  /** The replica set a new spool named `name` gets. */
  placeSpool(name: string): string[];
  /** Whether this member's replica of `spool` knows its primary and serves its plan. */
  spoolServed(spool: string): boolean;
  /** Whether this member and every gateway watching it hold metadata index `index`. */
  authPropagated(index: number): boolean;
  /** Answers a payload fetch for spool group `group`; throws 503 unavailable. */
  servePayloads(group: string, items: readonly PayloadItem[]): PayloadChunks;
  /** The member is closing or closed. */
  isClosing(): boolean;
}

export class MemberAdmin implements AdminBackend {
  /**
   * `clock` is the cluster layer's (MemberOptions.clusterClock): every wait and deadline here runs
   * on it. `randomBytes` makes API keys.
   */
  constructor(
    private readonly member: AdminHost,
    private readonly clock: Clock,
    private readonly randomBytes: (bytes: number) => Uint8Array,
  ) {}

  // ---- AdminBackend ------------------------------------------------------------------------

  async listAccounts(): Promise<readonly AdminAccount[]> {
    const state = this.member.meta.state;
    return [...state.accounts.keys()].sort().map((id) => this.accountView(id));
  }

  async account(id: string): Promise<AdminAccount> {
    if (!this.member.meta.state.accounts.has(id)) throw this.noAccount(id);
    return this.accountView(id);
  }

  async createAccount(id: string, plan: string | undefined): Promise<AdminAccount> {
    if (!ACCOUNT_ID_PATTERN.test(id)) {
      throw invalid('id', `account id must match ${ACCOUNT_ID_PATTERN.source}`);
    }
    const planName = plan ?? DEFAULT_PLAN_NAME;
    if (!this.member.meta.state.plans.has(planName)) throw this.noPlan(planName);
    const account = { id, state: 'active' as const, plan: planName };
    const defaultReplicas = this.member.placeSpool(accountSpool(id, 'default'));
    await this.change({ type: 'createAccount', account, defaultReplicas }, `account ${id}`);
    await this.served(accountSpool(id, 'default'));
    return this.accountView(id);
  }

  async updateAccount(
    id: string,
    change: { readonly state?: AdminAccountState; readonly plan?: string },
  ): Promise<AdminAccount> {
    const current = this.member.meta.state.accounts.get(id);
    if (current === undefined) throw this.noAccount(id);
    if (change.plan !== undefined && !this.member.meta.state.plans.has(change.plan)) {
      throw this.noPlan(change.plan);
    }
    const account = { ...current, ...change };
    await this.change({ type: 'putAccount', account }, `account ${id}`);
    return this.accountView(id);
  }

  async createKey(accountId: string): Promise<AdminNewKey> {
    if (!this.member.meta.state.accounts.has(accountId)) throw this.noAccount(accountId);
    const random = Buffer.from(this.randomBytes(API_KEY_RANDOM_BYTES));
    const key = API_KEY_PREFIX + random.toString('base64url');
    const hash = new Uint8Array(createHash('sha256').update(key).digest());
    const record: KeyRecord = { hash, accountId, blocked: false };
    await this.change({ type: 'putKey', key: record }, 'key');
    return { ...keyView(record), key };
  }

  async setKeyBlocked(keyId: string, blocked: boolean): Promise<AdminKey> {
    const key = this.keyById(keyId);
    await this.change({ type: 'setKeyBlocked', hash: key.hash, blocked }, `key ${keyId}`);
    return { ...keyView(key), blocked };
  }

  async revokeKey(keyId: string): Promise<void> {
    const key = this.keyById(keyId);
    await this.change({ type: 'deleteKey', hash: key.hash }, `key ${keyId}`);
  }

  async listPlans(): Promise<Readonly<Record<string, AdminPlan>>> {
    const plans = this.member.meta.state.plans;
    return Object.fromEntries([...plans.keys()].sort().map((name) => [name, plans.get(name)!]));
  }

  async putPlan(name: string, partial: Partial<AdminPlan>): Promise<AdminPlan> {
    if (!PLAN_NAME_PATTERN.test(name)) {
      throw invalid('name', `plan name must match ${PLAN_NAME_PATTERN.source}`);
    }
    let plan;
    try {
      plan = resolveAccountPlan(partial);
    } catch (error) {
      throw invalid('plan', error instanceof Error ? error.message : String(error));
    }
    await this.change({ type: 'putPlan', name, plan }, `plan ${name}`);
    return plan;
  }

  async createSpool(accountId: string, spool: string): Promise<AdminSpool> {
    if (!SPOOL_NAME.test(spool)) {
      throw invalid('spool', `spool name must match ${SPOOL_NAME.source}`);
    }
    if (!this.member.meta.state.accounts.has(accountId)) throw this.noAccount(accountId);
    const name = accountSpool(accountId, spool);
    const replicas = this.member.placeSpool(name);
    await this.change({ type: 'createSpool', name, replicas }, `spool ${spool}`, false);
    await this.served(name);
    return this.spoolView(name);
  }

  async deleteSpool(accountId: string, spool: string): Promise<void> {
    if (spool === 'default') {
      throw new MqError('conflict', 'every account keeps its default spool');
    }
    if (!this.member.meta.state.accounts.has(accountId)) throw this.noAccount(accountId);
    const name = accountSpool(accountId, spool);
    await this.change({ type: 'deleteSpool', name }, `spool ${spool}`, false);
  }

  async cluster(): Promise<AdminCluster> {
    const state = this.member.meta.state;
    const names = [...state.spools.keys()].sort();
    return {
      members: state.members,
      metaLeader: this.member.meta.node.leaderId(),
      spools: names.map((name) => this.spoolView(name)),
    };
  }

  async moveSpool(accountId: string, spool: string, to: string): Promise<AdminSpool> {
    const name = accountSpool(accountId, spool);
    const record = this.member.meta.state.spools.get(name);
    if (record === undefined) throw noSpool(accountId, spool);
    if (!record.replicas.includes(to)) {
      const holders = record.replicas.join(', ');
      throw invalid('to', `member ${to} holds no replica of the spool (${holders})`);
    }
    const leader = this.member.replica(name)?.leaderId() ?? record.replicas[0]!;
    await this.callOn(leader, { op: 'transfer', spool: name, to });
    return this.spoolView(name);
  }

  async addMember(id: string, address: string): Promise<AdminCluster> {
    if (!MEMBER_ID.test(id)) throw invalid('id', `member id must match ${MEMBER_ID.source}`);
    if (!ADDRESS.test(address)) throw invalid('address', 'address must be host:port');
    await this.onMetaLeader({ op: 'addMember', id, address });
    return this.cluster();
  }

  async moveReplica(
    accountId: string,
    spool: string,
    from: string,
    to: string,
  ): Promise<AdminSpool> {
    const name = accountSpool(accountId, spool);
    const state = this.member.meta.state;
    const record = state.spools.get(name);
    if (record === undefined) throw noSpool(accountId, spool);
    if (!state.members.includes(to)) throw new MqError('not_found', `member ${to}: not found`);
    const moved = (r: PlacedSpool): boolean =>
      r.moving === null && r.replicas.includes(to) && !r.replicas.includes(from);
    if (!moved(record)) {
      if (!record.replicas.includes(from)) {
        const holders = record.replicas.join(', ');
        throw invalid('from', `member ${from} holds no replica of the spool (${holders})`);
      }
      if (record.replicas.includes(to)) {
        throw invalid('to', `member ${to} holds a replica of the spool already`);
      }
      await this.startMove(name, from, to);
      await this.movesDone([name], moved);
    }
    return this.spoolView(name);
  }

  /**
   * Moves every replica off member `id` (to the least loaded member without one; with
   * `allowShrink`, a spool with no such member loses the replica instead), then takes `id` out of
   * the metadata group. Every step is recorded or derived from the metadata, so a re-run after a
   * failure finishes the job.
   */
  async removeMember(
    id: string,
    options: { readonly allowShrink?: boolean } = {},
  ): Promise<AdminCluster> {
    if (!this.member.meta.state.members.includes(id)) {
      throw new MqError('not_found', `member ${id}: not found`);
    }
    for (let round = 1; ; round++) {
      const holding = this.spoolsOn(id);
      if (holding.length === 0) break;
      if (round > REMOVE_ROUNDS_MAX) {
        const what = `member ${id} still holds replicas of ${names(holding)}`;
        throw unavailable(`${what}; run the removal again`);
      }
      await this.onMetaLeader({ op: 'moveOff', id, allowShrink: options.allowShrink === true });
      await this.movesDone(holding.map((spool) => spool.name), (spool) => !hostsReplica(spool, id));
    }
    await this.onMetaLeader({ op: 'removeMember', id });
    // Answer with the shape the metadata has now, the member gone (as applied here too).
    const gone = (): boolean => !this.member.meta.state.members.includes(id);
    await this.until(this.member.meta.node, gone, PROPAGATION_WAIT_MS);
    return this.cluster();
  }

  /**
   * Resolves true once `condition` holds, false once `waitMs` pass on the cluster clock. Checked
   * after every turn of `node` (the Raft group whose applies the condition waits for; it turns at
   * least once a tick), not by polling. Throws 503 unavailable when this member or the node
   * closes meanwhile.
   */
  private async until(node: RaftNode, condition: () => boolean, waitMs: number): Promise<boolean> {
    if (condition()) return true;
    let expired = false;
    const timer = this.clock.setTimer(() => (expired = true), waitMs);
    try {
      await node.watch((resolve, reject) => {
        if (this.member.isClosing()) return reject(this.closed());
        if (expired || condition()) resolve();
      });
    } catch (error) {
      // The node rejects its watchers only when it closes, which the member does when closing.
      throw error instanceof MqError ? error : this.closed();
    } finally {
      this.clock.clearTimer(timer);
    }
    return condition();
  }

  private closed(): MqError {
    return unavailable(`member ${this.member.id} closed; run the command again`);
  }

  /**
   * On the metadata leader: records the moves taking member `id`'s replicas elsewhere. The leader
   * picks the new members among those it hears from, so no move waits on a member that is down.
   */
  private async moveOffHere(id: string, allowShrink: boolean): Promise<void> {
    const meta = this.member.meta;
    if (!meta.node.isLeader()) throw notMetaLeader();
    const status = meta.node.status();
    const unreachable = new Set([id]);
    for (const [peer, progress] of Object.entries(status.progress)) {
      if (peer !== this.member.id && !progress.recentActive) unreachable.add(peer);
    }
    const moves = this.movesOff(id, this.spoolsOn(id), allowShrink, unreachable);
    for (const move of moves) await this.startMove(move.spool, id, move.to);
  }

  /** Spools with a replica on member `id` (joining ones included). */
  private spoolsOn(id: string): PlacedSpool[] {
    return [...this.member.meta.state.spools.values()].filter((spool) => hostsReplica(spool, id));
  }

  /**
   * The moves taking `id`'s replicas of `holding` elsewhere (spools whose move runs already wait
   * for it). Throws 409 conflict, before anything moves, when some spool has no member to go to
   * and shrinking is not allowed, or when `id` holds its only replica.
   */
  private movesOff(
    id: string,
    holding: readonly PlacedSpool[],
    allowShrink: boolean,
    excluded: ReadonlySet<string>,
  ): { spool: string; to: string }[] {
    const state = this.member.meta.state;
    const hosting = new Map<string, number>();
    for (const spool of state.spools.values()) {
      for (const member of [...spool.replicas, spool.moving?.to ?? '']) {
        if (member !== '') hosting.set(member, (hosting.get(member) ?? 0) + 1);
      }
    }
    const moves: { spool: string; to: string }[] = [];
    const stuck: PlacedSpool[] = [];
    for (const spool of holding) {
      if (spool.moving !== null) continue;
      const to = pickReplacement(spool.name, spool.replicas, state.members, hosting, excluded);
      if (to === null && (!allowShrink || spool.replicas.length < 2)) stuck.push(spool);
      if (to !== null) hosting.set(to, (hosting.get(to) ?? 0) + 1);
      moves.push({ spool: spool.name, to: to ?? '' });
    }
    if (stuck.length > 0) {
      const why = allowShrink
        ? `member ${id} holds the only replica of ${names(stuck)}`
        : `no reachable member without a replica can take ${id}'s replicas of ${names(stuck)}; ` +
          'add a member, or allow the replica sets to shrink (--allow-shrink)';
      throw new MqError('conflict', why, { spools: stuck.length });
    }
    return moves;
  }

  /** Records the move of `from`'s replica of `spool` to `to` ('' shrinks); a re-run is fine. */
  private async startMove(spool: string, from: string, to: string): Promise<void> {
    const { result } = await this.proposeIndexed({ type: 'moveReplica', spool, from, to });
    if (result.kind === 'exists') return;
    const error = metaError(result, `spool ${spool}`);
    if (error !== null) throw error;
  }

  /**
   * Waits (at most MOVE_WAIT_MS) until each of `spools` is gone or `done` holds for it in this
   * member's metadata. Throws 503 unavailable when time runs out (the moves go on).
   */
  private async movesDone(
    spools: readonly string[],
    done: (spool: PlacedSpool) => boolean,
  ): Promise<void> {
    const pending = (): PlacedSpool[] =>
      spools.flatMap((name) => {
        const spool = this.member.meta.state.spools.get(name);
        return spool === undefined || done(spool) ? [] : [spool];
      });
    if (!(await this.until(this.member.meta.node, () => pending().length === 0, MOVE_WAIT_MS))) {
      const what = `replica moves of ${names(pending())} are still running`;
      throw unavailable(`${what}; run the command again to wait`);
    }
  }

  /** Runs a membership step on the metadata leader (here, or forwarded there). */
  private async onMetaLeader(step: AdminStep): Promise<void> {
    const leader = this.member.meta.node.leaderId();
    if (leader === null) throw unavailable('the metadata group has no leader now; retry');
    await this.callOn(leader, step);
  }

  /** addMember on the metadata leader: record the address everywhere, then add the voter. */
  private async addMemberHere(id: string, address: string): Promise<void> {
    const meta = this.member.meta;
    if (!meta.node.isLeader()) throw notMetaLeader();
    const result = await meta.propose({ type: 'addMember', id, address });
    // `exists`: added before (perhaps the voter step failed then): the voter step is retried.
    if (result.kind !== 'ok' && result.kind !== 'exists') throw metaError(result, `member ${id}`)!;
    if (meta.node.status().config.voters.includes(id)) return;
    try {
      await meta.node.addVoter(id);
    } catch (error) {
      const why = `member ${id} did not catch up as a voter (started with --join?)`;
      throw unavailable(`${why}: ${String(error)}`);
    }
  }

  /**
   * removeMember on the metadata leader: the voter goes first, then the record. A leader removing
   * itself hands the metadata's leadership to another voter, which carries on.
   */
  private async removeMemberHere(id: string): Promise<void> {
    const meta = this.member.meta;
    if (!meta.node.isLeader()) throw notMetaLeader();
    if (id === this.member.id) {
      const heir = meta.node.status().config.voters.find((voter) => voter !== id);
      if (heir === undefined) {
        throw new MqError('conflict', `member ${id} is the metadata's only voter`);
      }
      try {
        await meta.node.transferLeadership(heir);
      } catch (error) {
        const why = `handing the metadata's leadership to ${heir} failed`;
        throw unavailable(`${why}: ${String(error)}; retry`);
      }
      await this.callOn(heir, { op: 'removeMember', id });
      return;
    }
    // A leader changes the configuration only once it has committed an entry of its term (it
    // may have just taken over, from the member being removed for instance).
    const leading = (): boolean => meta.node.hasLeaderLease() || !meta.node.isLeader();
    await this.until(meta.node, leading, PROPAGATION_WAIT_MS);
    try {
      await meta.node.removeMember(id);
    } catch (error) {
      throw unavailable(`removing ${id} from the metadata group failed: ${String(error)}`);
    }
    const error = metaError(await meta.propose({ type: 'removeMember', id }), `member ${id}`);
    if (error !== null) throw error;
  }

  // ---- Forwarded steps (accounts service Call) ----------------------------------------------

  /** How this member runs each step another member forwards (@spoolmq/protocol ADMIN_STEPS). */
  private readonly steps: { readonly [O in AdminOp]: StepRunner<O> } = {
    propose: async (step) => {
      const result = await this.proposeHere(decodeMetaCommand(step.command));
      return { result, index: this.member.meta.status().appliedIndex };
    },
    acked: async (step) => ({ acked: this.member.authPropagated(step.index) }),
    transfer: async (step) => {
      await this.transferHere(step.spool, step.to);
      return {};
    },
    addMember: async (step) => {
      await this.addMemberHere(step.id, step.address);
      return {};
    },
    removeMember: async (step) => {
      await this.removeMemberHere(step.id);
      return {};
    },
    moveOff: async (step) => {
      await this.moveOffHere(step.id, step.allowShrink);
      return {};
    },
    payloads: async (step) => this.member.servePayloads(step.group, step.items),
  };

  /** Runs a step another member forwarded (decoded and checked). Rejects with MqError. */
  runStep<O extends AdminOp>(step: AdminStepOf<O>): Promise<AdminAnswers[O]> {
    const run = this.steps[step.op] as StepRunner<O>;
    return run(step);
  }

  // ---- Proposals ---------------------------------------------------------------------------

  /**
   * Proposes `command` on the metadata leader; throws the MqError of a refused result. With
   * `propagate`, then waits until every reachable member and its gateways hold the change.
   */
  private async change(command: MetaCommand, what: string, propagate = true): Promise<void> {
    const { result, index } = await this.proposeIndexed(command);
    const error = metaError(result, what);
    if (error !== null) throw error;
    if (propagate) await this.propagated(index);
  }

  /**
   * Proposes `command` on the metadata leader (forwarded there when another member leads);
   * resolves with its result. Rejects with MqError as `change`, but never for a refused result.
   */
  async proposeOnLeader(command: MetaCommand): Promise<MetaResult> {
    return (await this.proposeIndexed(command)).result;
  }

  /** `proposeOnLeader`, with the metadata index the proposer had applied then. */
  private async proposeIndexed(
    command: MetaCommand,
  ): Promise<{ result: MetaResult; index: number }> {
    const leader = this.member.meta.node.leaderId();
    if (leader === this.member.id) {
      const result = await this.proposeHere(command);
      return { result, index: this.member.meta.status().appliedIndex };
    }
    if (leader === null) throw unavailable('the metadata group has no leader now; retry');
    return this.callOn(leader, { op: 'propose', command: encodeMetaCommand(command) });
  }

  private proposeHere(command: MetaCommand): Promise<MetaResult> {
    return this.member.meta.propose(command);
  }

  /**
   * Waits until every member answering holds `index` with all its watchers (bounded by
   * PROPAGATION_WAIT_MS on the cluster clock). Polls: the state is other members'.
   */
  private async propagated(index: number): Promise<void> {
    const deadline = this.clock.nowMs() + PROPAGATION_WAIT_MS;
    const pending = new Set(this.member.meta.state.members);
    while (pending.size > 0 && this.clock.nowMs() < deadline) {
      for (const id of [...pending]) {
        if (id === this.member.id) {
          if (this.member.authPropagated(index)) pending.delete(id);
          continue;
        }
        try {
          const answer = await this.callOn(id, { op: 'acked', index }, PROPAGATION_WAIT_MS);
          if (answer.acked) pending.delete(id);
        } catch {
          pending.delete(id); // unreachable: its gateways watch another member by now
        }
      }
      if (pending.size > 0) await sleepMs(this.clock, PROPAGATION_POLL_MS);
    }
  }

  /**
   * Waits (at most SPOOL_OPEN_WAIT_MS) until this member's replica of a new spool knows its
   * primary and, when that is this member, serves it under its plan, so the first calls after
   * the admin answer need no retry. A spool placed elsewhere is not waited for. Best effort: a
   * member or replica closing meanwhile ends the wait, as running out of time does.
   */
  private async served(spool: string): Promise<void> {
    const deadlineMs = this.clock.nowMs() + SPOOL_OPEN_WAIT_MS;
    const placed = (): boolean =>
      this.member.meta.state.spools.get(spool)?.replicas.includes(this.member.id) === true;
    const started = (): boolean => !placed() || this.member.replica(spool) !== undefined;
    try {
      // The replica starts once the metadata here holds the spool: judged on the metadata's turns.
      if (!(await this.until(this.member.meta.node, started, SPOOL_OPEN_WAIT_MS))) return;
      const replica = this.member.replica(spool);
      if (replica === undefined) return; // placed elsewhere
      // Served once its group knows a primary and applied the plan: judged on the group's turns.
      const servedHere = (): boolean => !placed() || this.member.spoolServed(spool);
      await this.until(replica.node, servedHere, deadlineMs - this.clock.nowMs());
    } catch (error) {
      if (!(error instanceof MqError)) throw error; // closing: the admin call answers anyway
    }
  }

  private async transferHere(spool: string, to: string): Promise<void> {
    const replica = this.member.replica(spool);
    if (replica === undefined || !replica.node.isLeader()) {
      throw unavailable(`this member does not lead spool ${spool} now; retry`);
    }
    if (to === this.member.id) return;
    try {
      await replica.node.transferLeadership(to);
    } catch (error) {
      throw unavailable(`leadership transfer failed: ${String(error)}`);
    }
  }

  /** Asks member `id` for payload chunks (payload fetches of spool replicas). */
  fetchPayloads(id: string, step: AdminStepOf<'payloads'>): Promise<AdminAnswers['payloads']> {
    return this.callOn(id, step);
  }

  /**
   * Runs `step` on member `id` (here when it is this member, else sent by AdminHost.callMember).
   * Rejects with MqError.
   */
  private async callOn<O extends AdminOp>(
    id: string,
    step: AdminStepOf<O>,
    deadlineMs = CALL_DEADLINE_MS,
  ): Promise<AdminAnswers[O]> {
    if (id === this.member.id) return this.runStep(step);
    const bytes = await this.member.callMember(id, encodeAdminStep(step), deadlineMs);
    try {
      return decodeAdminAnswer(step.op as O, bytes);
    } catch (error) {
      if (!(error instanceof WireError)) throw error;
      throw new MqError('internal', `member ${id} answered ${step.op}: ${error.message}`);
    }
  }

  // ---- Views -------------------------------------------------------------------------------

  private accountView(id: string): AdminAccount {
    const state = this.member.meta.state;
    const account = state.accounts.get(id)!;
    const prefix = accountSpool(id, '');
    const spools = [...state.spools.keys()]
      .filter((name) => name.startsWith(prefix))
      .map((name) => name.slice(prefix.length))
      .sort();
    const keys = [...state.keys.values()]
      .filter((key) => key.accountId === id)
      .map(keyView)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    return { id, state: account.state, plan: account.plan, spools, keys };
  }

  private spoolView(name: string): AdminSpool {
    const record = this.member.meta.state.spools.get(name);
    const account = spoolAccount(name);
    const shown = account === null ? name : name.slice(account.length + 1);
    return {
      account,
      name: shown,
      replicas: record?.replicas ?? [],
      primary: this.member.replica(name)?.leaderId() ?? null,
    };
  }

  private keyById(keyId: string): KeyRecord {
    for (const key of this.member.meta.state.keys.values()) {
      if (keyIdOf(key.hash) === keyId) return key;
    }
    throw new MqError('not_found', `key ${keyId}: not found`);
  }

  private noAccount(id: string): MqError {
    return new MqError('not_found', `account ${id}: not found`);
  }

  private noPlan(name: string): MqError {
    return new MqError('not_found', `plan ${name}: not found`);
  }
}

/** Runs one forwarded step of kind O. */
type StepRunner<O extends AdminOp> = (step: AdminStepOf<O>) => Promise<AdminAnswers[O]>;

function noSpool(accountId: string, spool: string): MqError {
  return new MqError('not_found', `spool ${spool} of ${accountId}: not found`);
}

function notMetaLeader(): MqError {
  return unavailable('this member does not lead the metadata now; retry');
}

/** The first spools' names, for a message. */
function names(spools: readonly PlacedSpool[]): string {
  const shown = spools.slice(0, NAMED_SPOOLS_MAX).map((spool) => spool.name).join(', ');
  return spools.length > NAMED_SPOOLS_MAX ? `${shown}, ... (${spools.length} spools)` : shown;
}

function keyView(key: KeyRecord): AdminKey {
  return { id: keyIdOf(key.hash), accountId: key.accountId, blocked: key.blocked };
}
