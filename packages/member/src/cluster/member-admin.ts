// The admin API's backend on a member (AdminBackend from @spoolmq/protocol). Reads come from this
// member's metadata replica; changes are proposed to the metadata group's leader (forwarded over
// the accounts service's Call when another member leads). A change to accounts, keys or plans
// answers once every reachable member has applied it and every gateway watching them has
// installed it (at most PROPAGATION_WAIT_MS), so a key created or revoked through the admin API
// is in force on every gateway when the call returns.

import { createHash } from 'node:crypto';
import { MqError } from '@spoolmq/engine';
import {
  type AdminAnswers,
  type AdminOp,
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
  type Clock,
} from '@spoolmq/protocol';
import { metaError, unavailable } from './cluster-errors.js';
import { Membership, noSpool } from './membership.js';
import { type WaitHost, untilApplied } from './node-wait.js';
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
import type { SpoolReplica } from './spool-replica.js';

/** Longest an admin change waits for every member and gateway to hold it. */
export const PROPAGATION_WAIT_MS = 2_000;
/** Longest a spool creation waits for the new spool's primary to open. */
export const SPOOL_OPEN_WAIT_MS = 5_000;
/**
 * Time a long-polled member has to answer once its wait is over (the answer's way back): past
 * the wait plus this, the member counts as unreachable.
 */
const PROPAGATION_ANSWER_MS = 500;
/** Deadline of one forwarded call. */
const CALL_DEADLINE_MS = 5_000;
const SPOOL_NAME = /^[A-Za-z0-9_:-]{1,63}$/;
/** Prefix of every API key (recognisable in logs and secret scanners). */
export const API_KEY_PREFIX = 'mqk_';
/** Random bytes of an API key. */
export const API_KEY_RANDOM_BYTES = 32;

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
  /**
   * Resolves true once this member and every gateway watching it hold metadata index `index`,
   * else with what holds after `waitMs` (0: at once). Never rejects.
   */
  whenAuthPropagated(index: number, waitMs: number): Promise<boolean>;
  /** Answers a payload fetch for spool group `group`; throws 503 unavailable. */
  servePayloads(group: string, items: readonly PayloadItem[]): PayloadChunks;
  /** The member is closing or closed. */
  isClosing(): boolean;
}

export class MemberAdmin implements AdminBackend {
  /** Adding and removing members, moving replicas (membership.ts). */
  private readonly membership: Membership;
  /** What the waits on a group's applies need (node-wait.ts). */
  private readonly waits: WaitHost;

  /**
   * `clock` is the cluster layer's (MemberOptions.clusterClock): every wait and deadline here runs
   * on it. `randomBytes` makes API keys.
   */
  constructor(
    private readonly member: AdminHost,
    private readonly clock: Clock,
    private readonly randomBytes: (bytes: number) => Uint8Array,
  ) {
    this.waits = { id: member.id, clock, isClosing: () => member.isClosing() };
    this.membership = new Membership({
      ...this.waits,
      meta: () => member.meta,
      callOn: (id, step) => this.callOn(id, step),
      proposeOnLeader: (command) => this.proposeOnLeader(command),
    });
  }

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
    await this.membership.add(id, address);
    return this.cluster();
  }

  async moveReplica(
    accountId: string,
    spool: string,
    from: string,
    to: string,
  ): Promise<AdminSpool> {
    await this.membership.moveReplica(accountId, spool, from, to);
    return this.spoolView(accountSpool(accountId, spool));
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
    await this.membership.remove(id, options);
    return this.cluster();
  }

  // ---- Forwarded steps (accounts service Call) ----------------------------------------------

  /** How this member runs each step another member forwards (@spoolmq/protocol ADMIN_STEPS). */
  private readonly steps: { readonly [O in AdminOp]: StepRunner<O> } = {
    propose: async (step) => {
      const result = await this.proposeHere(decodeMetaCommand(step.command));
      return { result, index: this.member.meta.status().appliedIndex };
    },
    // The asker's wait, bounded by this member's own: a waiter is held at most that long.
    acked: async (step) => {
      const waitMs = Math.min(step.waitMs, PROPAGATION_WAIT_MS);
      return { acked: await this.member.whenAuthPropagated(step.index, waitMs) };
    },
    transfer: async (step) => {
      await this.transferHere(step.spool, step.to);
      return {};
    },
    addMember: async (step) => {
      await this.membership.addHere(step.id, step.address);
      return {};
    },
    removeMember: async (step) => {
      await this.membership.removeHere(step.id);
      return {};
    },
    moveOff: async (step) => {
      await this.membership.moveOffHere(step.id, step.allowShrink);
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
   * Waits until every member answering holds `index` with all its watchers, at most
   * PROPAGATION_WAIT_MS on the cluster clock. Each member is asked once, in parallel, and answers
   * when it holds the index or its wait is over (a long poll: what ends it is other members'
   * state, which their own events report). A member that does not answer in time counts as
   * unreachable: its gateways watch another member by now. Any other failure (a step this
   * member cannot encode, an answer it cannot read) is a defect and fails the admin call.
   */
  private async propagated(index: number): Promise<void> {
    const deadlineMs = this.clock.nowMs() + PROPAGATION_WAIT_MS;
    const held = async (id: string): Promise<void> => {
      const waitMs = Math.max(0, deadlineMs - this.clock.nowMs());
      if (id === this.member.id) {
        await this.member.whenAuthPropagated(index, waitMs);
        return;
      }
      const step = { op: 'acked', index, waitMs } as const;
      await this.callOn(id, step, waitMs + PROPAGATION_ANSWER_MS).catch(unreachableOnly);
    };
    await Promise.all(this.member.meta.state.members.map(held));
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
      const meta = this.member.meta;
      if (!(await untilApplied(this.waits, meta.node, started, SPOOL_OPEN_WAIT_MS))) return;
      const replica = this.member.replica(spool);
      if (replica === undefined) return; // placed elsewhere
      // Served once its group knows a primary and applied the plan: judged on the group's turns.
      const servedHere = (): boolean => !placed() || this.member.spoolServed(spool);
      await untilApplied(this.waits, replica.node, servedHere, deadlineMs - this.clock.nowMs());
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

function keyView(key: KeyRecord): AdminKey {
  return { id: keyIdOf(key.hash), accountId: key.accountId, blocked: key.blocked };
}

/**
 * Passes over a member that could not be reached or did not answer in time (503); rethrows
 * anything else. A blanket catch here once hid a codec defect: every step threw before it was
 * sent and the leader never waited for any other member.
 */
function unreachableOnly(error: unknown): void {
  if (error instanceof MqError && error.kind === 'unavailable') return;
  throw error;
}
