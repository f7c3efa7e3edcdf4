// Binary key layout of the shared LevelDB. Keys of one group share a prefix and entry keys end in
// the big-endian index, so a group's log is one ordered range scan.
//
//   0x00 <group utf8>                          registry: the group has state (value empty)
//   0x01 <group utf8> 0x00 0x01                hard state
//   0x01 <group utf8> 0x00 0x02                snapshot record
//   0x01 <group utf8> 0x00 0x03 <index u64 BE> log entry
//
// Group ids never contain 0x00, so no group's prefix is a prefix of another's.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import type { GroupId } from '../types.js';

const REGISTRY = 0x00;
const GROUP = 0x01;
const HARD_STATE = 0x01;
const SNAPSHOT = 0x02;
const ENTRY = 0x03;
/** Longest group id in UTF-8 bytes. */
export const GROUP_ID_BYTES_MAX = 512;
const TWO_POW_32 = 0x1_0000_0000;

/** First and past-the-end keys of the registry. */
export const REGISTRY_START: Buffer = Buffer.from([REGISTRY]);
export const REGISTRY_END: Buffer = Buffer.from([REGISTRY + 1]);

/** The group a registry key names. */
export function groupOfRegistryKey(key: Buffer): GroupId {
  assert(key[0] === REGISTRY, 'not a registry key');
  return key.toString('utf8', 1);
}

export class GroupKeys {
  readonly registry: Buffer;
  readonly hardState: Buffer;
  readonly snapshot: Buffer;
  /** First and past-the-end keys of everything of the group but its registry key. */
  readonly groupStart: Buffer;
  readonly groupEnd: Buffer;
  /** First and past-the-end keys of the group's log entries. */
  readonly entriesStart: Buffer;
  readonly entriesEnd: Buffer;
  private readonly entryPrefix: Buffer;

  constructor(group: GroupId) {
    const name = Buffer.from(group, 'utf8');
    assert(name.length > 0 && name.length <= GROUP_ID_BYTES_MAX, `group id length ${name.length}`);
    assert(!name.includes(0), 'group id contains NUL');
    this.registry = Buffer.concat([REGISTRY_START, name]);
    const prefix = Buffer.concat([Buffer.from([GROUP]), name, Buffer.from([0x00])]);
    this.groupStart = prefix;
    this.groupEnd = Buffer.concat([Buffer.from([GROUP]), name, Buffer.from([0x01])]);
    this.hardState = Buffer.concat([prefix, Buffer.from([HARD_STATE])]);
    this.snapshot = Buffer.concat([prefix, Buffer.from([SNAPSHOT])]);
    this.entryPrefix = Buffer.concat([prefix, Buffer.from([ENTRY])]);
    this.entriesStart = this.entry(0);
    this.entriesEnd = Buffer.concat([prefix, Buffer.from([ENTRY + 1])]);
  }

  /** Key of the entry at `index` (a safe non-negative integer). */
  entry(index: number): Buffer {
    const key = Buffer.allocUnsafe(this.entryPrefix.length + 8);
    this.entryPrefix.copy(key, 0);
    key.writeUInt32BE(Math.floor(index / TWO_POW_32), this.entryPrefix.length);
    key.writeUInt32BE(index >>> 0, this.entryPrefix.length + 4);
    return key;
  }

  /** The index an entry key of this group holds. */
  entryIndex(key: Buffer): number {
    const at = this.entryPrefix.length;
    assert(key.length === at + 8, 'not an entry key');
    return key.readUInt32BE(at) * TWO_POW_32 + key.readUInt32BE(at + 4);
  }
}
