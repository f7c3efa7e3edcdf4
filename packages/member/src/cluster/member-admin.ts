// The admin API's backend on a member (AdminBackend from @mq/gateway). Reads come from this
// member's metadata replica; changes are proposed to the metadata group's leader (forwarded over
// the accounts service's Call when another member leads). A change to accounts, keys or plans
// answers once every reachable member has applied it and every gateway watching them has
// installed it (at most PROPAGATION_WAIT_MS), so a key created or revoked through the admin API
// is in force on every gateway when the call returns.

import { randomBytes, createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { MqError } from '@mq/engine';
import {
  ACCOUNTS_CALL_BYTES_MAX,
  ACCOUNTS_CALL_PATH,
  type AdminAccount,
  type AdminAccountState,
  type AdminBackend,
  type AdminCluster,
  type AdminKey,
  type AdminNewKey,
  type AdminPlan,
  type AdminSpool,
} from '@mq/gateway';
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
import type { Member } from './member.js';

/** Longest an admin change waits for every member and gateway to hold it. */
export const PROPAGATION_WAIT_MS = 2_000;
/** Longest a spool creation waits for the new spool's primary to open. */
export const SPOOL_OPEN_WAIT_MS = 5_000;
/** Pause between propagation checks. */
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

const passThrough = (bytes: Buffer): Buffer => bytes;

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
    case 'not_initialized':
      return unavailable('the cluster is not initialized yet; retry');
  }
}

function invalid(field: string, message: string): MqError {
  return new MqError('invalid_argument', message, { field });
}

export class MemberAdmin implements AdminBackend {
  private readonly clients = new Map<string, grpc.Client>();

  constructor(private readonly member: Member) {}

  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
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
    const key = API_KEY_PREFIX + randomBytes(API_KEY_RANDOM_BYTES).toString('base64url');
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
    if (!SPOOL_NAME.test(spool)) throw invalid('spool', `spool name must match ${SPOOL_NAME.source}`);
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
    await this.change({ type: 'deleteSpool', name: accountSpool(accountId, spool) }, `spool ${spool}`, false);
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
    if (record === undefined) throw new MqError('not_found', `spool ${spool} of ${accountId}: not found`);
    if (!record.replicas.includes(to)) {
      throw invalid('to', `member ${to} holds no replica of the spool (${record.replicas.join(', ')})`);
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

  async removeMember(id: string): Promise<AdminCluster> {
    if (!this.member.meta.state.members.includes(id)) {
      throw new MqError('not_found', `member ${id}: not found`);
    }
    const holding = [...this.member.meta.state.spools.values()].filter((s) => s.replicas.includes(id));
    if (holding.length > 0) {
      const names = holding.map((s) => s.name).slice(0, 10).join(', ');
      throw new MqError('conflict', `member ${id} holds replicas of ${holding.length} spool(s) (${names}); ` +
        'moving replicas off a member is not supported yet', { spools: holding.length });
    }
    await this.onMetaLeader({ op: 'removeMember', id });
    return this.cluster();
  }

  /** Runs a membership step on the metadata leader (here, or forwarded there). */
  private async onMetaLeader(request: Record<string, unknown>): Promise<void> {
    const leader = this.member.meta.node.leaderId();
    if (leader === null) throw unavailable('the metadata group has no leader now; retry');
    await this.callOn(leader, request);
  }

  /** addMember on the metadata leader: record the address everywhere, then add the voter. */
  private async addMemberHere(id: string, address: string): Promise<void> {
    const meta = this.member.meta;
    if (!meta.node.isLeader()) throw unavailable('this member does not lead the metadata now; retry');
    const result = await meta.propose({ type: 'addMember', id, address });
    // `exists`: added before (perhaps the voter step failed then): the voter step is retried.
    if (result.kind !== 'ok' && result.kind !== 'exists') throw metaError(result, `member ${id}`)!;
    if (meta.node.status().config.voters.includes(id)) return;
    try {
      await meta.node.addVoter(id);
    } catch (error) {
      throw unavailable(`member ${id} did not catch up as a voter (started with --join?): ${String(error)}`);
    }
  }

  /** removeMember on the metadata leader: the voter goes first, then the record. */
  private async removeMemberHere(id: string): Promise<void> {
    const meta = this.member.meta;
    if (!meta.node.isLeader()) throw unavailable('this member does not lead the metadata now; retry');
    if (id === this.member.id) {
      throw new MqError('conflict', `member ${id} leads the metadata: move that leadership first`);
    }
    try {
      await meta.node.removeMember(id);
    } catch (error) {
      throw unavailable(`removing ${id} from the metadata group failed: ${String(error)}`);
    }
    const error = metaError(await meta.propose({ type: 'removeMember', id }), `member ${id}`);
    if (error !== null) throw error;
  }

  // ---- Forwarded steps (accounts service Call) ----------------------------------------------

  /** Runs a step another member forwarded. Rejects with MqError. */
  async handleCall(request: Record<string, unknown>): Promise<Record<string, unknown>> {
    switch (request['op']) {
      case 'propose': {
        const bytes = Buffer.from(String(request['command']), 'base64');
        const result = await this.proposeHere(decodeMetaCommand(bytes));
        return { result, index: this.member.meta.status().appliedIndex };
      }
      case 'acked':
        return { acked: this.member.authPropagated(Number(request['index'])) };
      case 'transfer':
        await this.transferHere(String(request['spool']), String(request['to']));
        return {};
      case 'addMember':
        await this.addMemberHere(String(request['id']), String(request['address']));
        return {};
      case 'removeMember':
        await this.removeMemberHere(String(request['id']));
        return {};
      default:
        throw new MqError('invalid_argument', 'unknown accounts call');
    }
  }

  // ---- Proposals ---------------------------------------------------------------------------

  /**
   * Proposes `command` on the metadata leader; throws the MqError of a refused result. With
   * `propagate`, then waits until every reachable member and its gateways hold the change.
   */
  private async change(command: MetaCommand, what: string, propagate = true): Promise<void> {
    const leader = this.member.meta.node.leaderId();
    let result: MetaResult;
    let index: number;
    if (leader === this.member.id) {
      result = await this.proposeHere(command);
      index = this.member.meta.status().appliedIndex;
    } else {
      if (leader === null) throw unavailable('the metadata group has no leader now; retry');
      const command64 = Buffer.from(encodeMetaCommand(command)).toString('base64');
      const answer = await this.callOn(leader, { op: 'propose', command: command64 });
      result = answer['result'] as MetaResult;
      index = Number(answer['index']);
    }
    const error = metaError(result, what);
    if (error !== null) throw error;
    if (propagate) await this.propagated(index);
  }

  private proposeHere(command: MetaCommand): Promise<MetaResult> {
    return this.member.meta.propose(command);
  }

  /** Waits until every member answering holds `index` with all its watchers (bounded). */
  private async propagated(index: number): Promise<void> {
    const deadline = performance.now() + PROPAGATION_WAIT_MS;
    const pending = new Set(this.member.meta.state.members);
    while (pending.size > 0 && performance.now() < deadline) {
      for (const id of [...pending]) {
        if (id === this.member.id) {
          if (this.member.authPropagated(index)) pending.delete(id);
          continue;
        }
        try {
          const answer = await this.callOn(id, { op: 'acked', index }, PROPAGATION_WAIT_MS);
          if (answer['acked'] === true) pending.delete(id);
        } catch {
          pending.delete(id); // unreachable: its gateways watch another member by now
        }
      }
      if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, PROPAGATION_POLL_MS));
    }
  }

  /**
   * Waits (at most SPOOL_OPEN_WAIT_MS) until this member's replica of a new spool knows its
   * primary and, when that is this member, serves it under its plan, so the first calls after
   * the admin answer need no retry. A spool placed elsewhere is not waited for.
   */
  private async served(spool: string): Promise<void> {
    const deadline = performance.now() + SPOOL_OPEN_WAIT_MS;
    while (performance.now() < deadline) {
      const placed = this.member.meta.state.spools.get(spool)?.replicas.includes(this.member.id);
      if (placed !== true || this.member.spoolServed(spool)) return;
      await new Promise((resolve) => setTimeout(resolve, PROPAGATION_POLL_MS));
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

  /** Runs `request` on member `id` (here when it is this member). Rejects with MqError. */
  private async callOn(
    id: string,
    request: Record<string, unknown>,
    deadlineMs = CALL_DEADLINE_MS,
  ): Promise<Record<string, unknown>> {
    if (id === this.member.id) return this.handleCall(request);
    const address = this.member.peerAddress(id);
    if (address === undefined) throw unavailable(`member ${id} is unknown`);
    let client = this.clients.get(id);
    if (client === undefined) {
      client = new grpc.Client(address, grpc.credentials.createInsecure(), {
        'grpc.max_receive_message_length': ACCOUNTS_CALL_BYTES_MAX,
      });
      this.clients.set(id, client);
    }
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      client.makeUnaryRequest<Buffer, Buffer>(
        ACCOUNTS_CALL_PATH,
        passThrough,
        passThrough,
        Buffer.from(JSON.stringify(request)),
        { deadline: Date.now() + deadlineMs },
        (error, answer) => (error || answer === undefined ? reject(error) : resolve(answer)),
      );
    }).catch((error: unknown) => {
      throw unavailable(`member ${id} did not answer: ${String(error)}`);
    });
    const answer = JSON.parse(bytes.toString('utf8')) as {
      ok?: Record<string, unknown>;
      error?: { kind: string; message: string; details: Record<string, string | number | boolean> };
    };
    if (answer.error !== undefined) {
      const { kind, message, details } = answer.error;
      throw new MqError(kind as MqError['kind'], message, details);
    }
    return answer.ok ?? {};
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

function keyView(key: KeyRecord): AdminKey {
  return { id: keyIdOf(key.hash), accountId: key.accountId, blocked: key.blocked };
}
