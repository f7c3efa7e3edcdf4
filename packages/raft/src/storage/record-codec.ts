// Value encodings of the LevelDB records. Every value starts with a CRC-32C so that a torn or
// corrupted record is detected on load. Entry checksums also cover the entry's index (which
// lives in the key), so a value found under the wrong key is rejected too.
//
//   entry:      crc u32 | term u64 | type u8 | data
//   hard state: crc u32 | term u64 | commit u64 | flags u8
//               [| damage last index u64 | damage last term u64] | vote utf8
//               (flags: 1 = has vote, 2 = has damage; records without damage are unchanged)
//   snapshot:   crc u32 | JSON of SnapshotRecord (rare, small: not a hot path)
//
// The registry value of a group holds a copy of its hard state (same encoding; empty in stores
// written before the copy existed): see LevelGroupStorage.load for why.

import { Buffer } from 'node:buffer';
import type { ClusterConfig, Entry, EntryType, HardState, SnapshotMeta } from '../types.js';
import { crc32c, crc32cUpdate } from './crc32c.js';
import { defined } from '../core/assert.js';
import { StorageError } from './storage-error.js';

const TWO_POW_32 = 0x1_0000_0000;
const ENTRY_HEADER_BYTES = 13;
const HARD_STATE_HEADER_BYTES = 21;
const DAMAGE_BYTES = 16;
const HAS_VOTE = 1;
const HAS_DAMAGE = 2;
const scratch = Buffer.alloc(8);

function writeU64(buffer: Buffer, offset: number, value: number): void {
  buffer.writeUInt32BE(Math.floor(value / TWO_POW_32), offset);
  buffer.writeUInt32BE(value >>> 0, offset + 4);
}

function readU64(buffer: Buffer, offset: number): number {
  return buffer.readUInt32BE(offset) * TWO_POW_32 + buffer.readUInt32BE(offset + 4);
}

function entryChecksum(index: number, value: Buffer): number {
  writeU64(scratch, 0, index);
  return crc32cUpdate(crc32c(scratch), value, 4);
}

/** Encodes an entry's value (its index goes into the key and the checksum). */
export function encodeEntryValue(entry: Entry): Buffer {
  return writeEntryValue(entry, Buffer.allocUnsafe(ENTRY_HEADER_BYTES + entry.data.length));
}

/** Values up to this size are encoded into an EntryValueScratch's one reused buffer. */
export const ENTRY_SCRATCH_BYTES_MAX = 1024 * 1024;

/**
 * Encodes entry values into one reused buffer, for a caller that copies each value before the
 * next encode (a LevelDB batch's put copies its value into the native batch at once). A logged
 * payload then costs no second JavaScript buffer: a short-lived payload-sized buffer per entry
 * is memory that waits for a garbage collection before the allocator can reuse it.
 */
export class EntryValueScratch {
  private buffer = Buffer.allocUnsafeSlow(4096);

  /** The value of `entry`: a view valid until the next call, or its own buffer when large. */
  encode(entry: Entry): Buffer {
    const bytes = ENTRY_HEADER_BYTES + entry.data.length;
    if (bytes > ENTRY_SCRATCH_BYTES_MAX) return encodeEntryValue(entry);
    if (bytes > this.buffer.length) {
      this.buffer = Buffer.allocUnsafeSlow(Math.min(ENTRY_SCRATCH_BYTES_MAX, bytes * 2));
    }
    return writeEntryValue(entry, this.buffer.subarray(0, bytes));
  }
}

function writeEntryValue(entry: Entry, value: Buffer): Buffer {
  writeU64(value, 4, entry.term);
  value[12] = entry.type;
  value.set(entry.data, ENTRY_HEADER_BYTES);
  value.writeUInt32BE(entryChecksum(entry.index, value), 0);
  return value;
}

/**
 * Decodes the value stored under `index`, or returns null when it is too short or fails its
 * checksum (a torn or corrupted record). `data` is a view of `value`, not a copy.
 */
export function decodeEntryValue(index: number, value: Buffer): Entry | null {
  if (value.length < ENTRY_HEADER_BYTES) return null;
  if (value.readUInt32BE(0) !== entryChecksum(index, value)) return null;
  return {
    index,
    term: readU64(value, 4),
    type: value[12] as EntryType,
    data: value.subarray(ENTRY_HEADER_BYTES),
  };
}

export function encodeHardState(hardState: HardState): Buffer {
  const vote = hardState.vote === null ? null : Buffer.from(hardState.vote, 'utf8');
  const damage = hardState.damage ?? null;
  const voteAt = HARD_STATE_HEADER_BYTES + (damage === null ? 0 : DAMAGE_BYTES);
  const value = Buffer.allocUnsafe(voteAt + (vote?.length ?? 0));
  writeU64(value, 4, hardState.term);
  writeU64(value, 12, hardState.commit);
  value[20] = (vote === null ? 0 : HAS_VOTE) | (damage === null ? 0 : HAS_DAMAGE);
  if (damage !== null) {
    writeU64(value, HARD_STATE_HEADER_BYTES, damage.lastIndex);
    writeU64(value, HARD_STATE_HEADER_BYTES + 8, damage.lastTerm);
  }
  if (vote) vote.copy(value, voteAt);
  value.writeUInt32BE(crc32c(value, 4), 0);
  return value;
}

/** Decodes a hard state. Throws StorageError `corrupt` on a bad record: a lost vote is unsafe. */
export function decodeHardState(group: string, value: Buffer): HardState {
  const state = decodeHardStateOrNull(value);
  if (state !== null) return state;
  const why = checksumFails(value) ? 'fails its checksum' : 'has an unknown layout';
  throw new StorageError('corrupt', `group ${group}: hard state ${why}`);
}

function checksumFails(value: Buffer): boolean {
  return value.length < HARD_STATE_HEADER_BYTES || value.readUInt32BE(0) !== crc32c(value, 4);
}

/** Decodes a hard state, or returns null when it fails its checksum or has an unknown layout. */
export function decodeHardStateOrNull(value: Buffer): HardState | null {
  if (checksumFails(value)) return null;
  const flags = defined(value[20], 'hard state flags byte (checksum checked the length)');
  const hasDamage = (flags & HAS_DAMAGE) !== 0;
  const short = hasDamage && value.length < HARD_STATE_HEADER_BYTES + DAMAGE_BYTES;
  if (flags > (HAS_VOTE | HAS_DAMAGE) || short) {
    return null;
  }
  const voteAt = HARD_STATE_HEADER_BYTES + (hasDamage ? DAMAGE_BYTES : 0);
  const state = {
    term: readU64(value, 4),
    commit: readU64(value, 12),
    vote: (flags & HAS_VOTE) === 0 ? null : value.toString('utf8', voteAt),
  };
  if (!hasDamage) return state;
  const damage = {
    lastIndex: readU64(value, HARD_STATE_HEADER_BYTES),
    lastTerm: readU64(value, HARD_STATE_HEADER_BYTES + 8),
  };
  return { ...state, damage };
}

/** What LevelDB records about a group's snapshot; the data lives in `file`. */
export interface SnapshotRecord {
  readonly meta: SnapshotMeta;
  /** File name inside the group's snapshot directory. */
  readonly file: string;
  /** The file's format (snapshot-files.ts); absent in records written before format 2: 1. */
  readonly format?: number;
  readonly dataBytes: number;
  /** CRC-32C of the snapshot data. */
  readonly dataCrc: number;
}

export function encodeSnapshotRecord(record: SnapshotRecord): Buffer {
  const json = Buffer.from(JSON.stringify(record), 'utf8');
  const value = Buffer.allocUnsafe(4 + json.length);
  json.copy(value, 4);
  value.writeUInt32BE(crc32c(value, 4), 0);
  return value;
}

/** Decodes a snapshot record. Throws StorageError `corrupt` on a bad record. */
export function decodeSnapshotRecord(group: string, value: Buffer): SnapshotRecord {
  if (value.length < 4 || value.readUInt32BE(0) !== crc32c(value, 4)) {
    throw new StorageError('corrupt', `group ${group}: snapshot record fails its checksum`);
  }
  const parsed = JSON.parse(value.toString('utf8', 4)) as SnapshotRecord;
  const config: ClusterConfig = {
    voters: [...parsed.meta.config.voters],
    learners: [...parsed.meta.config.learners],
  };
  return { ...parsed, meta: { index: parsed.meta.index, term: parsed.meta.term, config } };
}
