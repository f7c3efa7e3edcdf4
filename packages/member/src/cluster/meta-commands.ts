// Commands of the metadata group (`meta`) and their binary form: one version byte, one type byte,
// then the fields in a fixed order (see meta-bytes.ts). No JSON.

import { MetaCodecError, MetaReader, MetaWriter } from './meta-bytes.js';

/** Bytes of the cluster secret (HMAC key of tokens and cursors on every member). */
export const CLUSTER_SECRET_BYTES = 32;
/** Bytes of a stored API key hash (sha256). */
export const KEY_HASH_BYTES = 32;

export type AccountState = 'active' | 'suspended' | 'blocked';

/** An account (filled in by the accounts issue; the table exists and replicates now). */
export interface AccountRecord {
  readonly id: string;
  readonly state: AccountState;
  /** Name of the account's plan. */
  readonly plan: string;
  /** Spools the account owns. */
  readonly spools: readonly string[];
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

export interface PutAccountCommand {
  readonly type: 'putAccount';
  readonly account: AccountRecord;
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
  | DeleteKeyCommand;

/** What applying a metadata command did; deterministic on every replica. */
export type MetaResult =
  | { readonly kind: 'ok' }
  | { readonly kind: 'exists' }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'not_initialized' };

const FORMAT_VERSION = 1;
const TYPE_CODES: Readonly<Record<MetaCommand['type'], number>> = {
  init: 1,
  createSpool: 2,
  deleteSpool: 3,
  putAccount: 4,
  putKey: 5,
  deleteKey: 6,
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
  writer.strings(account.spools);
}

export function readAccount(reader: MetaReader): AccountRecord {
  const id = reader.string();
  const state = ACCOUNT_STATES[reader.u8()];
  if (state === undefined) throw new MetaCodecError('unknown account state');
  return { id, state, plan: reader.string(), spools: reader.strings() };
}

export function writeKey(writer: MetaWriter, key: KeyRecord): void {
  writer.bytes(key.hash);
  writer.string(key.accountId);
  writer.u8(key.blocked ? 1 : 0);
}

export function readKey(reader: MetaReader): KeyRecord {
  const hash = readHash(reader);
  const accountId = reader.string();
  const blocked = reader.u8();
  if (blocked > 1) throw new MetaCodecError('bad flag');
  return { hash, accountId, blocked: blocked === 1 };
}

function readHash(reader: MetaReader): Uint8Array {
  const hash = reader.bytes();
  if (hash.byteLength !== KEY_HASH_BYTES) throw new MetaCodecError('key hash length');
  return hash;
}
