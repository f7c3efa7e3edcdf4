import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  decodeEntryValue,
  decodeHardState,
  decodeSnapshotRecord,
  encodeEntryValue,
  encodeHardState,
  encodeSnapshotRecord,
} from '../../src/storage/record-codec.js';
import { EntryType } from '../../src/types.js';

describe('record codec', () => {
  it('round-trips entries with large indexes and terms', () => {
    const entry = { index: 2 ** 40 + 3, term: 2 ** 33 + 1, type: EntryType.ConfChange, data: new Uint8Array([9, 8, 7]) };
    const decoded = decodeEntryValue(entry.index, encodeEntryValue(entry));
    expect(decoded).toEqual({ ...entry, data: Buffer.from([9, 8, 7]) });
  });

  it('rejects an entry value under another index, truncated, or with a flipped bit', () => {
    const value = encodeEntryValue({ index: 5, term: 1, type: EntryType.Normal, data: new Uint8Array([1, 2, 3]) });
    expect(decodeEntryValue(5, value)).not.toBeNull();
    expect(decodeEntryValue(6, value)).toBeNull();
    expect(decodeEntryValue(5, value.subarray(0, 10))).toBeNull();
    const flipped = Buffer.from(value);
    flipped[14]! ^= 0x04;
    expect(decodeEntryValue(5, flipped)).toBeNull();
  });

  it('round-trips hard states and throws corrupt on a bad one', () => {
    for (const hardState of [
      { term: 0, vote: null, commit: 0 },
      { term: 2 ** 45, vote: 'member-ü', commit: 2 ** 45 - 1 },
    ]) {
      expect(decodeHardState('g', encodeHardState(hardState))).toEqual(hardState);
    }
    const value = encodeHardState({ term: 3, vote: 'n1', commit: 1 });
    value[value.length - 1]! ^= 1;
    expect(() => decodeHardState('g', value)).toThrow(/checksum/);
  });

  it('round-trips snapshot records and throws corrupt on a bad one', () => {
    const record = {
      meta: { index: 7, term: 2, config: { voters: ['a', 'b'], learners: ['c'] } },
      file: '7-2-abcd.snap',
      dataBytes: 10,
      dataCrc: 123,
    };
    const value = encodeSnapshotRecord(record);
    expect(decodeSnapshotRecord('g', value)).toEqual(record);
    value[6]! ^= 1;
    expect(() => decodeSnapshotRecord('g', value)).toThrow(/checksum/);
  });
});
