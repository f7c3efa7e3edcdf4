import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../src/storage/crc32c.js';
import {
  decodeEntryValue,
  decodeHardState,
  decodeSnapshotRecord,
  ENTRY_SCRATCH_BYTES_MAX,
  EntryValueScratch,
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

  it('encodes into one reused buffer the same bytes as a fresh encode, large values apart', () => {
    const scratch = new EntryValueScratch();
    const sizes = [3, 5000, 100, 70_000, ENTRY_SCRATCH_BYTES_MAX - 13, ENTRY_SCRATCH_BYTES_MAX];
    const views = sizes.map((size, i) => {
      const entry = { index: 10 + i, term: 2, type: EntryType.Normal, data: Buffer.alloc(size, i) };
      const view = scratch.encode(entry);
      expect(view.equals(encodeEntryValue(entry))).toBe(true);
      return view;
    });
    // Up to the bound the views share one buffer, grown as needed (the caller copies each
    // before the next)...
    expect(views[1]!.buffer).toBe(views[2]!.buffer);
    // ...and a value past it has a buffer of its own, which the scratch does not keep.
    expect(views[5]!.buffer).not.toBe(views[4]!.buffer);
    expect(scratch.encode({ index: 1, term: 1, type: EntryType.Normal, data: Buffer.alloc(1) })
      .buffer).toBe(views[4]!.buffer);
  });

  it('round-trips hard states and throws corrupt on a bad one', () => {
    for (const hardState of [
      { term: 0, vote: null, commit: 0 },
      { term: 2 ** 45, vote: 'member-ü', commit: 2 ** 45 - 1 },
      { term: 7, vote: 'n3', commit: 4, damage: { lastIndex: 2 ** 40, lastTerm: 6 } },
      { term: 7, vote: null, commit: 4, damage: { lastIndex: 9, lastTerm: 7 } },
    ]) {
      expect(decodeHardState('g', encodeHardState(hardState))).toEqual(hardState);
    }
    const value = encodeHardState({ term: 3, vote: 'n1', commit: 1 });
    value[value.length - 1]! ^= 1;
    expect(() => decodeHardState('g', value)).toThrow(/checksum/);
  });

  it('reads hard states without damage written before the damage field existed', () => {
    // Layout of the first format: crc | term | commit | has vote | vote.
    const value = Buffer.alloc(21 + 2);
    value.writeUInt32BE(0, 4);
    value.writeUInt32BE(5, 8);
    value.writeUInt32BE(0, 12);
    value.writeUInt32BE(3, 16);
    value[20] = 1;
    value.write('n2', 21, 'utf8');
    value.writeUInt32BE(crc32c(value, 4), 0);
    expect(decodeHardState('g', value)).toEqual({ term: 5, vote: 'n2', commit: 3 });
    value[20] = 4; // a flag this version does not know: refused, never misread
    value.writeUInt32BE(crc32c(value, 4), 0);
    expect(() => decodeHardState('g', value)).toThrow(/unknown layout/);
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
