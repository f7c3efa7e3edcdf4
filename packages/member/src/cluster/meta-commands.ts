// Commands of the metadata group (`meta`) and their binary form: one version byte, one type byte,
// then the fields in a fixed order (see meta-bytes.ts). No JSON.

import { type Plan, resolvePlan } from '@spoolmq/engine';
import { MetaCodecError, MetaReader, MetaWriter } from './meta-bytes.js';

/** Bytes of the cluster secret (HMAC key of tokens and cursors on every member). */
export const CLUSTER_SECRET_BYTES = 32;
/** Bytes of a stored API key hash (sha256). */
export const KEY_HASH_BYTES = 32;
/** Accounts a cluster holds. */
export const ACCOUNTS_MAX = 10_000;
/** API keys a cluster holds, and a single account. */
export const KEYS_MAX = 100_000;
export const KEYS_PER_ACCOUNT_MAX = 100;
/** Spools an account may own (its `default` included). */
export const SPOOLS_PER_ACCOUNT_MAX = 100;
/** Named plans a cluster holds. */
export const PLANS_MAX = 100;
/** Account ids: like spool names, without `:` (the spool identity is `<account>/<spool>`). */
export const ACCOUNT_ID_PATTERN = /^[A-Za-z0-9_-]{1,63}$/;
/** Plan names. */
export const PLAN_NAME_PATTERN = /^[A-Za-z0-9_-]{1,63}$/;
/** Separates the account from the spool name in a spool's cluster identity. */
export const ACCOUNT_SPOOL_SEPARATOR = '/';
/** The plan every cluster has from its first entry, and new accounts get unless told otherwise. */
export const DEFAULT_PLAN_NAME = 'default';

export type AccountState = 'active' | 'suspended' | 'blocked';

/**
 * An account's plan: the spool limits the engine enforces (logged into each of its spools) and
 * the request rate the gateways enforce. `requestsPerSecond` 0 means no cap.
 */
export interface AccountPlan extends Plan {
  /** Sustained requests a second, 0 = no cap. */
  readonly requestsPerSecond: number;
  /** Requests an idle account may make at once (>= 1 when capped). */
  readonly requestBurst: number;
}

export interface AccountRecord {
  readonly id: string;
  readonly state: AccountState;
  /** Name of the account's plan (a key of the plans table). */
  readonly plan: string;
}

/** An API key, stored hashed. */
export interface KeyRecord {
  /** sha256 of the key, 32 bytes. */
  readonly hash: Uint8Array;
  readonly accountId: string;
  readonly blocked: boolean;
}

/** A spool and the members holding its replicas, in placement order. */
export interface SpoolRecord {
  readonly name: string;
  readonly replicas: readonly string[];
}

/** The cluster identity of an account's spool: `<account>/<spool>`. */
export function accountSpool(accountId: string, spool: string): string {
  return `${accountId}${ACCOUNT_SPOOL_SEPARATOR}${spool}`;
}

/** The account owning a spool identity, or null for a spool outside every account. */
export function spoolAccount(spool: string): string | null {
  const at = spool.indexOf(ACCOUNT_SPOOL_SEPARATOR);
  return at < 0 ? null : spool.slice(0, at);
}

/** The public id of a key: the first 8 bytes of its hash in hex (names it in the admin API). */
export function keyIdOf(hash: Uint8Array): string {
  return Buffer.from(hash.buffer, hash.byteOffset, 8).toString('hex');
}

/**
 * The first entry of a cluster: its secret, founding members and first spools (`default`). Only
 * the first init applied counts; later ones (a second leader's attempt) change nothing.
 */
export interface InitCommand {
  readonly type: 'init';
  readonly secret: Uint8Array;
  readonly members: readonly string[];
  readonly spools: readonly SpoolRecord[];
}

/** A spool and the members holding its replicas (placement decided by the proposer). */
export interface CreateSpoolCommand {
  readonly type: 'createSpool';
  readonly name: string;
  readonly replicas: readonly string[];
}

export interface DeleteSpoolCommand {
  readonly type: 'deleteSpool';
  readonly name: string;
}

/** Changes an existing account's state or plan. */
export interface PutAccountCommand {
  readonly type: 'putAccount';
  readonly account: AccountRecord;
}

/** A new account with its `default` spool placed on `replicas`. */
export interface CreateAccountCommand {
  readonly type: 'createAccount';
  readonly account: AccountRecord;
  readonly defaultReplicas: readonly string[];
}

export interface SetKeyBlockedCommand {
  readonly type: 'setKeyBlocked';
  readonly hash: Uint8Array;
  readonly blocked: boolean;
}

/** Creates or replaces a named plan. */
/** A member joins (its gRPC address is recorded so every member can reach it). */
export interface AddMemberCommand {
  readonly type: 'addMember';
  readonly id: string;
  readonly address: string;
}

/** A member leaves (it must hold no spool replica). */
export interface RemoveMemberCommand {
  readonly type: 'removeMember';
  readonly id: string;
}

/**
 * Starts replacing `from`'s replica of `spool` by one on `to` (`to` empty: the replica set
 * shrinks by `from`). The record keeps its replica set until `finishMove`; meanwhile `to` hosts a
 * joining replica and the spool's primary drives the Raft steps (see replica-mover.ts). One move
 * per spool at a time.
 */
export interface MoveReplicaCommand {
  readonly type: 'moveReplica';
  readonly spool: string;
  readonly from: string;
  /** The member gaining the replica; '' when the replica set shrinks. */
  readonly to: string;
}

/**
 * Ends the spool's move: `to` is a caught-up voter of the spool's group and `from` is out of it,
 * so the replica set becomes replicas - from + to (in `from`'s place).
 */
export interface FinishMoveCommand {
  readonly type: 'finishMove';
  readonly spool: string;
  readonly from: string;
  readonly to: string;
}

export interface PutPlanCommand {
  readonly type: 'putPlan';
  readonly name: string;
  readonly plan: AccountPlan;
}

export interface PutKeyCommand {
  readonly type: 'putKey';
  readonly key: KeyRecord;
}

export interface DeleteKeyCommand {
  readonly type: 'deleteKey';
  readonly hash: Uint8Array;
}

export type MetaCommand =
  | InitCommand
  | CreateSpoolCommand
  | DeleteSpoolCommand
  | PutAccountCommand
  | PutKeyCommand
  | DeleteKeyCommand
  | CreateAccountCommand
  | SetKeyBlockedCommand
  | PutPlanCommand
  | AddMemberCommand
  | RemoveMemberCommand
  | MoveReplicaCommand
  | FinishMoveCommand;

/** What applying a metadata command did; deterministic on every replica. */
export type MetaResult =
  | { readonly kind: 'ok' }
  | { readonly kind: 'exists' }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_initialized' }
  /** A table bound (ACCOUNTS_MAX, KEYS_MAX, ...) refuses the command; `what` names it. */
  | { readonly kind: 'limit'; readonly what: string }
  /** The command contradicts the state (a spool's move while another runs, ...); `why` says how. */
  | { readonly kind: 'conflict'; readonly why: string };

const FORMAT_VERSION = 1;
const TYPE_CODES: Readonly<Record<MetaCommand['type'], number>> = {
  init: 1,
  createSpool: 2,
  deleteSpool: 3,
  putAccount: 4,
  putKey: 5,
  deleteKey: 6,
  createAccount: 7,
  setKeyBlocked: 8,
  putPlan: 9,
  addMember: 10,
  removeMember: 11,
  moveReplica: 12,
  finishMove: 13,
};
const ACCOUNT_STATES: readonly AccountState[] = ['active', 'suspended', 'blocked'];

/** Encodes a metadata command. Throws MetaCodecError for a field out of the format's range. */
export function encodeMetaCommand(command: MetaCommand): Uint8Array {
  const writer = new MetaWriter(64);
  writer.u8(FORMAT_VERSION);
  writer.u8(TYPE_CODES[command.type]);
  switch (command.type) {
    case 'init':
      writer.bytes(command.secret);
      writer.strings(command.members);
      writer.u16(command.spools.length);
      for (const spool of command.spools) writeSpool(writer, spool);
      break;
    case 'createSpool':
      writeSpool(writer, command);
      break;
    case 'deleteSpool':
      writer.string(command.name);
      break;
    case 'putAccount':
      writeAccount(writer, command.account);
      break;
    case 'putKey':
      writeKey(writer, command.key);
      break;
    case 'deleteKey':
      writer.bytes(command.hash);
      break;
    case 'createAccount':
      writeAccount(writer, command.account);
      writer.strings(command.defaultReplicas);
      break;
    case 'setKeyBlocked':
      writer.bytes(command.hash);
      writer.u8(command.blocked ? 1 : 0);
      break;
    case 'putPlan':
      writer.string(command.name);
      writePlan(writer, command.plan);
      break;
    case 'addMember':
      writer.string(command.id);
      writer.string(command.address);
      break;
    case 'removeMember':
      writer.string(command.id);
      break;
    case 'moveReplica':
    case 'finishMove':
      writer.string(command.spool);
      writer.string(command.from);
      writer.string(command.to);
      break;
  }
  return writer.finish();
}

/** Decodes a metadata command. Throws MetaCodecError on malformed input or a foreign version. */
export function decodeMetaCommand(data: Uint8Array): MetaCommand {
  const reader = new MetaReader(data);
  const version = reader.u8();
  if (version !== FORMAT_VERSION) throw new MetaCodecError(`unsupported version ${version}`);
  const command = readCommand(reader, reader.u8());
  reader.end();
  return command;
}

function readCommand(reader: MetaReader, code: number): MetaCommand {
  switch (code) {
    case TYPE_CODES.init: {
      const secret = reader.bytes();
      if (secret.byteLength !== CLUSTER_SECRET_BYTES) throw new MetaCodecError('secret length');
      const members = reader.strings();
      const spools: SpoolRecord[] = [];
      for (let i = reader.u16(); i > 0; i--) spools.push(readSpool(reader));
      return { type: 'init', secret, members, spools };
    }
    case TYPE_CODES.createSpool:
      return { type: 'createSpool', ...readSpool(reader) };
    case TYPE_CODES.deleteSpool:
      return { type: 'deleteSpool', name: reader.string() };
    case TYPE_CODES.putAccount:
      return { type: 'putAccount', account: readAccount(reader) };
    case TYPE_CODES.putKey:
      return { type: 'putKey', key: readKey(reader) };
    case TYPE_CODES.deleteKey:
      return { type: 'deleteKey', hash: readHash(reader) };
    case TYPE_CODES.createAccount:
      return {
        type: 'createAccount',
        account: readAccount(reader),
        defaultReplicas: reader.strings(),
      };
    case TYPE_CODES.setKeyBlocked:
      return { type: 'setKeyBlocked', hash: readHash(reader), blocked: readFlag(reader) };
    case TYPE_CODES.putPlan:
      return { type: 'putPlan', name: reader.string(), plan: readPlan(reader) };
    case TYPE_CODES.addMember:
      return { type: 'addMember', id: reader.string(), address: reader.string() };
    case TYPE_CODES.removeMember:
      return { type: 'removeMember', id: reader.string() };
    case TYPE_CODES.moveReplica:
      return { type: 'moveReplica', ...readMove(reader) };
    case TYPE_CODES.finishMove:
      return { type: 'finishMove', ...readMove(reader) };
    default:
      throw new MetaCodecError(`unknown command type ${code}`);
  }
}

export function writeSpool(writer: MetaWriter, spool: SpoolRecord): void {
  writer.string(spool.name);
  writer.strings(spool.replicas);
}

export function readSpool(reader: MetaReader): SpoolRecord {
  return { name: reader.string(), replicas: reader.strings() };
}

export function writeAccount(writer: MetaWriter, account: AccountRecord): void {
  const state = ACCOUNT_STATES.indexOf(account.state);
  if (state < 0) throw new MetaCodecError('unknown account state');
  writer.string(account.id);
  writer.u8(state);
  writer.string(account.plan);
}

export function readAccount(reader: MetaReader): AccountRecord {
  const id = reader.string();
  const state = ACCOUNT_STATES[reader.u8()];
  if (state === undefined) throw new MetaCodecError('unknown account state');
  return { id, state, plan: reader.string() };
}

const PLAN_FIELDS = [
  'queuesPerSpoolMax',
  'retentionLimitSeconds',
  'retentionDefaultSeconds',
  'messagesPerSpoolMax',
  'payloadBytesPerSpoolMax',
  'messageSizeMaxBytes',
  'dedupKeysPerSpoolMax',
  'requestsPerSecond',
  'requestBurst',
] as const;

export function writePlan(writer: MetaWriter, plan: AccountPlan): void {
  for (const field of PLAN_FIELDS) writer.f64(plan[field]);
}

/** Reads `writePlan` bytes; throws MetaCodecError for a plan `resolveAccountPlan` refuses. */
export function readPlan(reader: MetaReader): AccountPlan {
  const fields: Record<string, number> = {};
  for (const field of PLAN_FIELDS) fields[field] = reader.f64();
  try {
    return resolveAccountPlan(fields as Partial<AccountPlan>);
  } catch (error) {
    throw new MetaCodecError(error instanceof Error ? error.message : 'bad plan');
  }
}

/** Requests a second a plan may allow (a gateway's token bucket holds numbers this size). */
export const REQUESTS_PER_SECOND_LIMIT = 1_000_000;

/**
 * The engine's DEFAULT_PLAN with no request cap, overridden by `partial`. Throws Error for limits
 * `resolvePlan` refuses, or a request rate or burst that is not an integer in
 * 0..REQUESTS_PER_SECOND_LIMIT (burst >= 1 when the rate is capped).
 */
export function resolveAccountPlan(partial: Partial<AccountPlan> = {}): AccountPlan {
  const { requestsPerSecond = 0, requestBurst, ...limits } = partial;
  const plan = resolvePlan(limits);
  const burst = requestBurst ?? requestsPerSecond;
  for (const [name, value] of [
    ['requestsPerSecond', requestsPerSecond],
    ['requestBurst', burst],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0 || value > REQUESTS_PER_SECOND_LIMIT) {
      throw new Error(`plan: ${name} must be an integer in 0..${REQUESTS_PER_SECOND_LIMIT}`);
    }
  }
  if (requestsPerSecond > 0 && burst < 1) throw new Error('plan: requestBurst must be at least 1');
  return Object.freeze({ ...plan, requestsPerSecond, requestBurst: burst });
}

/** The engine limits of an account plan (what a spool's setPlan carries). */
export function spoolPlanOf(plan: AccountPlan): Plan {
  const { requestsPerSecond: _rate, requestBurst: _burst, ...limits } = plan;
  return resolvePlan(limits);
}

export function writeKey(writer: MetaWriter, key: KeyRecord): void {
  writer.bytes(key.hash);
  writer.string(key.accountId);
  writer.u8(key.blocked ? 1 : 0);
}

export function readKey(reader: MetaReader): KeyRecord {
  const hash = readHash(reader);
  const accountId = reader.string();
  return { hash, accountId, blocked: readFlag(reader) };
}

function readFlag(reader: MetaReader): boolean {
  const flag = reader.u8();
  if (flag > 1) throw new MetaCodecError('bad flag');
  return flag === 1;
}

function readHash(reader: MetaReader): Uint8Array {
  const hash = reader.bytes();
  if (hash.byteLength !== KEY_HASH_BYTES) throw new MetaCodecError('key hash length');
  return hash;
}

/** A move's fields in their wire order: spool, from, to. */
function readMove(reader: MetaReader): { spool: string; from: string; to: string } {
  const spool = reader.string();
  const from = reader.string();
  const to = reader.string();
  return { spool, from, to };
}
