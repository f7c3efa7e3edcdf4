// The replicated state of the metadata group: the cluster secret and founding members, spools
// and their replica sets, and the accounts and keys tables. Deterministic: the same commands give
// the same state and the same snapshot bytes on every member (tables are encoded in key order).

import { assert } from '@mq/engine';
import { MetaCodecError, MetaReader, MetaWriter } from './meta-bytes.js';
import {
  type AccountRecord,
  CLUSTER_SECRET_BYTES,
  type InitCommand,
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
const SNAPSHOT_VERSION = 1;
const END = 0x454e4421; // "END!"

/**
 * A spool as the metadata holds it. `gen` numbers its incarnations: a spool deleted and created
 * again under its name is a new Raft group, so messages of the old group can never reach it.
 */
export interface PlacedSpool extends SpoolRecord {
  /** >= 1, unique in the cluster's history. */
  readonly gen: number;
}

export class MetaState {
  /** Null until the init entry is applied. */
  secret: Uint8Array | null = null;
  /** Founding members, sorted. */
  members: readonly string[] = [];
  readonly spools = new Map<string, PlacedSpool>();
  /** Generation the next created spool gets. */
  nextSpoolGen = 1;
  readonly accounts = new Map<string, AccountRecord>();
  /** By the hex of the key hash. */
  readonly keys = new Map<string, KeyRecord>();

  get initialized(): boolean {
    return this.secret !== null;
  }

  /**
   * Applies one command. Results: `ok`; `exists` (init after the first, a spool name taken);
   * `not_found` (delete of an unknown spool or key, a key for an unknown account);
   * `not_initialized` (anything but init before init).
   */
  apply(command: MetaCommand): MetaResult {
    if (command.type === 'init') return this.init(command);
    if (!this.initialized) return NOT_INITIALIZED;
    switch (command.type) {
      case 'createSpool':
        if (this.spools.has(command.name)) return EXISTS;
        this.place(command);
        return OK;
      case 'deleteSpool':
        return this.spools.delete(command.name) ? OK : NOT_FOUND;
      case 'putAccount':
        this.accounts.set(command.account.id, command.account);
        return OK;
      case 'putKey':
        if (!this.accounts.has(command.key.accountId)) return NOT_FOUND;
        this.keys.set(hex(command.key.hash), command.key);
        return OK;
      case 'deleteKey':
        return this.keys.delete(hex(command.hash)) ? OK : NOT_FOUND;
    }
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
    this.spools.set(spool.name, { name: spool.name, replicas: [...spool.replicas], gen });
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
    writer.u32(END);
    return writer.finish();
  }

  /** Decodes `encode` bytes. Throws MetaCodecError on malformed input or a foreign version. */
  static decode(data: Uint8Array): MetaState {
    const reader = new MetaReader(data);
    if (reader.u32() !== MAGIC) throw new MetaCodecError('not a metadata snapshot');
    const version = reader.u16();
    if (version !== SNAPSHOT_VERSION) throw new MetaCodecError(`unsupported version ${version}`);
    const state = new MetaState();
    const secret = reader.bytes();
    if (secret.byteLength !== 0 && secret.byteLength !== CLUSTER_SECRET_BYTES) {
      throw new MetaCodecError('secret length');
    }
    state.secret = secret.byteLength === 0 ? null : secret;
    state.members = reader.strings();
    state.nextSpoolGen = reader.u32();
    for (let i = reader.u32(); i > 0; i--) {
      const spool = { ...readSpool(reader), gen: reader.u32() };
      if (spool.gen < 1 || spool.gen >= state.nextSpoolGen) throw new MetaCodecError('spool gen');
      state.spools.set(spool.name, spool);
    }
    for (let i = reader.u32(); i > 0; i--) {
      const account = readAccount(reader);
      state.accounts.set(account.id, account);
    }
    for (let i = reader.u32(); i > 0; i--) {
      const key = readKey(reader);
      state.keys.set(hex(key.hash), key);
    }
    if (reader.u32() !== END) throw new MetaCodecError('missing end marker');
    reader.end();
    return state;
  }
}

function sortedValues<T>(map: ReadonlyMap<string, T>): T[] {
  return [...map.keys()].sort().map((key) => map.get(key)!);
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
