// The chaos harness's `corrupt` fault: bad bytes in a stopped member's stored Raft log. One bit
// flips in each of a few log entries chosen at random across its groups, under LevelDB (whose own
// block checksums stay intact, as with a bit that flipped before LevelDB wrote it, or in a
// buggy layer above it), so only the entry checksums of the member's storage can notice. The
// member must drop them on start, be repaired from its peers, and lose nothing acknowledged.
// Key layout: packages/raft/src/storage/level-keys.ts (entry keys end in 0x00 0x03 <u64>).

import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { Prng } from './prng.js';

const GROUP = 0x01;
const ENTRY = 0x03;
const INDEX_BYTES = 8;

export interface CorruptedEntries {
  /** `<group>@<index>` of every entry changed. */
  readonly entries: readonly string[];
}

function isEntryKey(key: Buffer): boolean {
  const at = key.length - INDEX_BYTES;
  return key[0] === GROUP && at >= 3 && key[at - 1] === ENTRY && key[at - 2] === 0x00;
}

function describe(key: Buffer): string {
  const at = key.length - INDEX_BYTES;
  const index = key.readUInt32BE(at) * 0x1_0000_0000 + key.readUInt32BE(at + 4);
  return `${key.toString('utf8', 1, at - 2)}@${index}`;
}

/**
 * Flips one bit in each of up to `count` stored log entries of the member whose data directory
 * is `dataDir` (the member must be stopped: LevelDB is locked while it runs).
 */
export async function corruptStoredEntries(
  dataDir: string,
  prng: Prng,
  count: number,
): Promise<CorruptedEntries> {
  const db = new ClassicLevel<Buffer, Buffer>(join(dataDir, 'log'), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    createIfMissing: false,
  });
  await db.open();
  try {
    const keys: Buffer[] = [];
    for await (const key of db.keys({ gte: Buffer.from([GROUP]), lt: Buffer.from([GROUP + 1]) })) {
      if (isEntryKey(key)) keys.push(key);
    }
    const chosen = prng.shuffle(keys).slice(0, count);
    const batch = db.batch();
    for (const key of chosen) {
      const value = (await db.get(key))!;
      const bit = prng.int(value.length * 8);
      value[bit >> 3]! ^= 1 << (bit & 7);
      batch.put(key, value);
    }
    await batch.write({ sync: true });
    return { entries: chosen.map(describe) };
  } finally {
    await db.close();
  }
}
