// The replicated state of the metadata group: the cluster secret and founding members, spools
// and their replica sets, and the accounts and keys tables. Deterministic: the same commands give
// the same state and the same snapshot bytes on every member (tables are encoded in key order).

import { assert } from '@spoolmq/engine';
import { MetaCodecError, MetaReader, MetaWriter } from './meta-bytes.js';
import {
  ACCOUNTS_MAX,
  type AccountPlan,
  type AccountRecord,
  CLUSTER_SECRET_BYTES,
  type CreateAccountCommand,
  DEFAULT_PLAN_NAME,
  KEYS_MAX,
  KEYS_PER_ACCOUNT_MAX,
  PLANS_MAX,
  SPOOLS_PER_ACCOUNT_MAX,
  accountSpool,
  readPlan,
  resolveAccountPlan,
  spoolAccount,
  writePlan,
  type FinishMoveCommand,
  type InitCommand,
  type MoveReplicaCommand,
  type KeyRecord,
  type MetaCommand,
  type MetaResult,
  type SpoolRecord,
  readAccount,
  readKey,
  readSpool,
  writeAccount,
  writeKey,
  writeSpool,
} from './meta-commands.js';

const OK: MetaResult = Object.freeze({ kind: 'ok' });
const EXISTS: MetaResult = Object.freeze({ kind: 'exists' });
const NOT_FOUND: MetaResult = Object.freeze({ kind: 'not_found' });
const NOT_INITIALIZED: MetaResult = Object.freeze({ kind: 'not_initialized' });

const MAGIC = 0x4d514d54; // "MQMT"
/**
 * Version 6 added the removed members; version 5 added the spools' moves in progress; version 4
 * added the addresses of members added later; version 3 the plan epoch; version 2 the plans table
 * (and dropped the accounts' spool lists, derived now).
 */
const SNAPSHOT_VERSION = 6;
const SNAPSHOT_VERSION_MOVES = 5;
const SNAPSHOT_VERSION_ADDRESSES = 4;
const SNAPSHOT_VERSION_EPOCH = 3;
const SNAPSHOT_VERSION_PLANS = 2;
const SNAPSHOT_VERSION_FIRST = 1;
const END = 0x454e4421; // "END!"

/**
 * A spool as the metadata holds it. `gen` numbers its incarnations: a spool deleted and created
 * again under its name is a new Raft group, so messages of the old group can never reach it.
 */
export interface PlacedSpool extends SpoolRecord {
  /** >= 1, unique in the cluster's history. */
  readonly gen: number;
  /** The replica being replaced, while a move runs (see MoveReplicaCommand). */
  readonly moving: SpoolMove | null;
}

/** A move in progress: `from`'s replica goes to `to` ('' when the replica set shrinks). */
export interface SpoolMove {
  readonly from: string;
  readonly to: string;
}

/** Whether `member` hosts a replica of `spool`: one of its set, or the joining one of a move. */
export function hostsReplica(spool: PlacedSpool, member: string): boolean {
  return spool.replicas.includes(member) || spool.moving?.to === member;
}

export class MetaState {
  /** Null until the init entry is applied. */
  secret: Uint8Array | null = null;
  /** Members (the founding ones, then those added), sorted. */
  members: readonly string[] = [];
  /** gRPC addresses of the members added after the founding (founders come from configuration). */
  readonly addresses = new Map<string, string>();
  /**
   * Members removed and not added again, sorted: their certificates stay valid until revoked, so
   * every member refuses their calls by name (a removed machine holds a key to the cluster).
   */
  removed: readonly string[] = [];
  readonly spools = new Map<string, PlacedSpool>();
  /** Generation the next created spool gets. */
  nextSpoolGen = 1;
  readonly accounts = new Map<string, AccountRecord>();
  /** By the hex of the key hash. */
  readonly keys = new Map<string, KeyRecord>();
  /**
   * Counts the commands that may change some spool's plan (account created or changed, plan put):
   * the version a spool's setPlan carries, so a primary whose metadata lags never undoes a newer
   * plan.
   */
  planEpoch = 0;
  /** Named plans; `default` always exists (the engine's defaults, no request cap). */
  readonly plans = new Map<string, AccountPlan>([[DEFAULT_PLAN_NAME, resolveAccountPlan()]]);
  /** Keys and spools per account (derived from the tables, kept in step by apply). */
  private readonly keyCounts = new Map<string, number>();
  private readonly spoolCounts = new Map<string, number>();

  get initialized(): boolean {
    return this.secret !== null;
  }

  /**
   * Applies one command. Results: `ok`; `exists` (init after the first, a spool, account or key
   * taken); `not_found` (delete of an unknown spool or key; a key, spool or account change for an
   * unknown account; an unknown plan); `limit` (a table bound); `not_initialized` (anything but
   * init before init).
   */
  apply(command: MetaCommand): MetaResult {
    if (command.type === 'init') return this.init(command);
    if (!this.initialized) return NOT_INITIALIZED;
    switch (command.type) {
      case 'createSpool':
        return this.createSpool(command);
      case 'deleteSpool': {
        if (!this.spools.delete(command.name)) return NOT_FOUND;
        const account = spoolAccount(command.name);
        if (account !== null) bump(this.spoolCounts, account, -1);
        return OK;
      }
      case 'createAccount': {
        const result = this.createAccount(command);
        if (result === OK) this.planEpoch++;
        return result;
      }
      case 'putAccount': {
        const account = command.account;
        if (!this.accounts.has(account.id) || !this.plans.has(account.plan)) return NOT_FOUND;
        this.accounts.set(account.id, account);
        this.planEpoch++;
        return OK;
      }
      case 'putKey':
        return this.putKey(command.key);
      case 'setKeyBlocked': {
        const id = hex(command.hash);
        const key = this.keys.get(id);
        if (key === undefined) return NOT_FOUND;
        this.keys.set(id, { ...key, blocked: command.blocked });
        return OK;
      }
      case 'deleteKey': {
        const id = hex(command.hash);
        const key = this.keys.get(id);
        if (key === undefined) return NOT_FOUND;
        this.keys.delete(id);
        bump(this.keyCounts, key.accountId, -1);
        return OK;
      }
      case 'addMember':
        if (this.members.includes(command.id)) return EXISTS;
        this.members = [...this.members, command.id].sort();
        this.addresses.set(command.id, command.address);
        this.removed = this.removed.filter((id) => id !== command.id);
        return OK;
      case 'removeMember':
        return this.removeMember(command.id);
      case 'moveReplica':
        return this.moveReplica(command);
      case 'finishMove':
        return this.finishMove(command);
      case 'putPlan':
        if (!this.plans.has(command.name) && this.plans.size >= PLANS_MAX) return limit('plans');
        this.plans.set(command.name, command.plan);
        this.planEpoch++;
        return OK;
    }
  }

  /** The plan of the account owning `spool`; null for a spool outside every account. */
  planOfSpool(spool: string): AccountPlan | null {
    const accountId = spoolAccount(spool);
    if (accountId === null) return null;
    const account = this.accounts.get(accountId);
    return account === undefined ? null : (this.plans.get(account.plan) ?? null);
  }

  private createSpool(spool: SpoolRecord): MetaResult {
    if (this.spools.has(spool.name)) return EXISTS;
    const account = spoolAccount(spool.name);
    if (account !== null) {
      if (!this.accounts.has(account)) return NOT_FOUND;
      if ((this.spoolCounts.get(account) ?? 0) >= SPOOLS_PER_ACCOUNT_MAX) {
        return limit('spools per account');
      }
      bump(this.spoolCounts, account, 1);
    }
    this.place(spool);
    return OK;
  }

  /**
   * Records a move: `ok`; `exists` for the same move again (a re-run); `not_found` for an unknown
   * spool; `conflict` when another move of the spool runs, `from` holds no replica, `to` is not a
   * member or holds one already, or shrinking would leave no replica.
   */
  private putKey(key: KeyRecord): MetaResult {
    if (!this.accounts.has(key.accountId)) return NOT_FOUND;
    const id = hex(key.hash);
    if (this.keys.has(id)) return EXISTS;
    if (this.keys.size >= KEYS_MAX) return limit('keys');
    if ((this.keyCounts.get(key.accountId) ?? 0) >= KEYS_PER_ACCOUNT_MAX) {
      return limit('keys per account');
    }
    this.keys.set(id, key);
    bump(this.keyCounts, key.accountId, 1);
    return OK;
  }

  /** `limit` while a spool still has a replica on member `id` (moves go first). */
  private removeMember(id: string): MetaResult {
    if (!this.members.includes(id)) return NOT_FOUND;
    for (const spool of this.spools.values()) {
      if (hostsReplica(spool, id)) return limit(`replicas on ${id}`);
    }
    this.members = this.members.filter((member) => member !== id);
    this.addresses.delete(id);
    this.removed = [...this.removed, id].sort();
    return OK;
  }

  private moveReplica(command: MoveReplicaCommand): MetaResult {
    const spool = this.spools.get(command.spool);
    if (spool === undefined) return NOT_FOUND;
    const { from, to } = command;
    if (spool.moving !== null) {
      if (spool.moving.from === from && spool.moving.to === to) return EXISTS;
      return conflict(`a move of ${command.spool} (${describeMove(spool.moving)}) is running`);
    }
    if (!spool.replicas.includes(from)) {
      return conflict(`${from} holds no replica of ${command.spool}`);
    }
    if (to === '') {
      if (spool.replicas.length < 2) return conflict(`${command.spool} has no other replica`);
    } else {
      if (!this.members.includes(to)) return conflict(`${to} is not a member`);
      if (spool.replicas.includes(to)) return conflict(`${to} holds a replica of ${command.spool}`);
    }
    this.spools.set(spool.name, { ...spool, moving: { from, to } });
    return OK;
  }

  /** Ends the spool's move: `ok`; `not_found` when no such move runs (finished before). */
  private finishMove(command: FinishMoveCommand): MetaResult {
    const spool = this.spools.get(command.spool);
    const moving = spool?.moving;
    if (spool === undefined || moving == null) return NOT_FOUND;
    if (moving.from !== command.from || moving.to !== command.to) return NOT_FOUND;
    // The new replica takes the old one's place, so the placement order stays stable.
    const replicas = spool.replicas.flatMap((id) => {
      if (id !== moving.from) return [id];
      return moving.to === '' ? [] : [moving.to];
    });
    this.spools.set(spool.name, { ...spool, replicas, moving: null });
    return OK;
  }

  private createAccount(command: CreateAccountCommand): MetaResult {
    const account = command.account;
    if (this.accounts.has(account.id)) return EXISTS;
    if (!this.plans.has(account.plan)) return NOT_FOUND;
    if (this.accounts.size >= ACCOUNTS_MAX) return limit('accounts');
    this.accounts.set(account.id, account);
    // Accounts are never deleted, so `<id>/default` cannot exist yet; were it there, the
    // account would simply own it.
    const name = accountSpool(account.id, 'default');
    this.createSpool({ name, replicas: command.defaultReplicas });
    return OK;
  }

  private init(command: InitCommand): MetaResult {
    if (this.initialized) return EXISTS;
    assert(command.secret.byteLength === CLUSTER_SECRET_BYTES, 'cluster secret length');
    this.secret = command.secret.slice();
    this.members = [...command.members].sort();
    for (const spool of command.spools) {
      if (!this.spools.has(spool.name)) this.place(spool);
    }
    return OK;
  }

  private place(spool: SpoolRecord): void {
    const gen = this.nextSpoolGen++;
    const replicas = [...spool.replicas];
    this.spools.set(spool.name, { name: spool.name, replicas, gen, moving: null });
  }

  /** Encodes the state (tables in key order). */
  encode(): Uint8Array {
    const writer = new MetaWriter(256);
    writer.u32(MAGIC);
    writer.u16(SNAPSHOT_VERSION);
    writer.bytes(this.secret ?? new Uint8Array(0));
    writer.strings(this.members);
    writer.u32(this.nextSpoolGen);
    const spools = sortedValues(this.spools);
    writer.u32(spools.length);
    for (const spool of spools) {
      writeSpool(writer, spool);
      writer.u32(spool.gen);
    }
    const accounts = sortedValues(this.accounts);
    writer.u32(accounts.length);
    for (const account of accounts) writeAccount(writer, account);
    const keys = sortedValues(this.keys);
    writer.u32(keys.length);
    for (const key of keys) writeKey(writer, key);
    const planNames = [...this.plans.keys()].sort();
    writer.u32(planNames.length);
    for (const name of planNames) {
      writer.string(name);
      writePlan(writer, this.plans.get(name)!);
    }
    writer.f64(this.planEpoch);
    const added = [...this.addresses.keys()].sort();
    writer.u32(added.length);
    for (const id of added) {
      writer.string(id);
      writer.string(this.addresses.get(id)!);
    }
    const moving = spools.filter((spool) => spool.moving !== null);
    writer.u32(moving.length);
    for (const spool of moving) writer.strings([spool.name, spool.moving!.from, spool.moving!.to]);
    writer.strings(this.removed);
    writer.u32(END);
    return writer.finish();
  }

  /**
   * Decodes `encode` bytes, whole or in chunks. Throws MetaCodecError on malformed input or a
   * foreign version.
   */
  static decode(data: Uint8Array | Iterable<Uint8Array>): MetaState {
    const reader = new MetaReader(data);
    if (reader.u32() !== MAGIC) throw new MetaCodecError('not a metadata snapshot');
    const version = reader.u16();
    if (version < SNAPSHOT_VERSION_FIRST || version > SNAPSHOT_VERSION) {
      throw new MetaCodecError(`unsupported version ${version}`);
    }
    const state = new MetaState();
    const secret = reader.bytes();
    if (secret.byteLength !== 0 && secret.byteLength !== CLUSTER_SECRET_BYTES) {
      throw new MetaCodecError('secret length');
    }
    state.secret = secret.byteLength === 0 ? null : secret;
    state.members = reader.strings();
    state.nextSpoolGen = reader.u32();
    for (let i = reader.u32(); i > 0; i--) {
      const spool = { ...readSpool(reader), gen: reader.u32(), moving: null };
      if (spool.gen < 1 || spool.gen >= state.nextSpoolGen) throw new MetaCodecError('spool gen');
      state.spools.set(spool.name, spool);
      const account = spoolAccount(spool.name);
      if (account !== null) bump(state.spoolCounts, account, 1);
    }
    for (let i = reader.u32(); i > 0; i--) {
      const account = readAccount(reader);
      if (version === SNAPSHOT_VERSION_FIRST) reader.strings(); // the old spool list
      state.accounts.set(account.id, account);
    }
    for (let i = reader.u32(); i > 0; i--) {
      const key = readKey(reader);
      state.keys.set(hex(key.hash), key);
      bump(state.keyCounts, key.accountId, 1);
    }
    if (version >= SNAPSHOT_VERSION_PLANS) {
      for (let i = reader.u32(); i > 0; i--) state.plans.set(reader.string(), readPlan(reader));
    }
    if (version >= SNAPSHOT_VERSION_EPOCH) {
      const epoch = reader.f64();
      if (!Number.isSafeInteger(epoch) || epoch < 0) throw new MetaCodecError('plan epoch');
      state.planEpoch = epoch;
    }
    if (version >= SNAPSHOT_VERSION_ADDRESSES) {
      for (let i = reader.u32(); i > 0; i--) state.addresses.set(reader.string(), reader.string());
    }
    if (version >= SNAPSHOT_VERSION_MOVES) readMoves(reader, state.spools);
    if (version >= SNAPSHOT_VERSION) state.removed = reader.strings();
    if (reader.u32() !== END) throw new MetaCodecError('missing end marker');
    reader.end();
    return state;
  }
}

/** Reads the moves in progress (`encode`'s last table) into their spools. */
function readMoves(reader: MetaReader, spools: Map<string, PlacedSpool>): void {
  for (let i = reader.u32(); i > 0; i--) {
    const fields = reader.strings();
    const [name, from, to] = fields;
    const spool = spools.get(name ?? '');
    if (fields.length !== 3 || spool === undefined || from === undefined || to === undefined) {
      throw new MetaCodecError('move of an unknown spool');
    }
    spools.set(spool.name, { ...spool, moving: { from, to } });
  }
}

function describeMove(move: SpoolMove): string {
  return `${move.from} -> ${move.to === '' ? '(none)' : move.to}`;
}

function conflict(why: string): MetaResult {
  return { kind: 'conflict', why };
}

function sortedValues<T>(map: ReadonlyMap<string, T>): T[] {
  return [...map.keys()].sort().map((key) => map.get(key)!);
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next === 0) counts.delete(key);
  else counts.set(key, next);
}

function limit(what: string): MetaResult {
  return { kind: 'limit', what };
}

/** Hex of a key hash: the keys table's index. */
export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
