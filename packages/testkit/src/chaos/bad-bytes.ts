// The chaos harness's `corrupt` fault: bad bytes in a stopped member's stored Raft log and in its
// payload segment files. One bit flips in each of a few log entries chosen at random across its
// groups, under LevelDB (whose own block checksums stay intact, as with a bit that flipped before
// LevelDB wrote it, or in a buggy layer above it), so only the entry checksums of the member's
// storage can notice. The member must drop them on start, be repaired from its peers, and lose
// nothing acknowledged. Key layout: packages/raft/src/storage/level-keys.ts (entry keys end in
// 0x00 0x03 <u64>).
// One bit also flips in each of a few payload records (packages/member/src/store/segment-record.ts:
// `u32 length | u32 crc | f64 seq | payload`): a read of one fails its checksum, the message reads
// `unavailable` (receive skips it) until a good copy is fetched from a peer, then it is delivered
// with the right bytes.

import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import type { Prng } from '@spoolmq/raft';

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

const RECORD_HEADER_BYTES = 16;
const SEGMENT_FILE = /^[0-9a-f]{8}\.seg$/;

export interface CorruptedPayloads {
  /** `<store>/<segment>@<seq>` of every payload record changed. */
  readonly records: readonly string[];
}

interface RecordRef {
  readonly path: string;
  readonly name: string;
  readonly offset: number;
  readonly bytes: number;
  readonly seq: number;
}

/** The whole records of one segment file, in order (a torn tail ends the walk). */
async function recordsOf(path: string, name: string): Promise<RecordRef[]> {
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    const header = Buffer.alloc(RECORD_HEADER_BYTES);
    const out: RecordRef[] = [];
    let offset = 0;
    while (offset + RECORD_HEADER_BYTES <= size) {
      await file.read(header, 0, RECORD_HEADER_BYTES, offset);
      const bytes = RECORD_HEADER_BYTES + header.readUInt32BE(0);
      if (offset + bytes > size) break;
      out.push({ path, name, offset, bytes, seq: header.readDoubleBE(8) });
      offset += bytes;
    }
    return out;
  } finally {
    await file.close();
  }
}

/**
 * Flips one bit in each of up to `count` payload records (header or payload) of the member whose
 * data directory is `dataDir`, chosen at random across its spools' segment files. The member
 * must be stopped (its payload cache would otherwise serve the good bytes it holds in memory).
 */
export async function corruptPayloadRecords(
  dataDir: string,
  prng: Prng,
  count: number,
): Promise<CorruptedPayloads> {
  const root = join(dataDir, 'payloads');
  let stores: string[];
  try {
    stores = (await readdir(root)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [] };
    throw error;
  }
  const records: RecordRef[] = [];
  for (const store of stores) {
    const segments = (await readdir(join(root, store))).filter((n) => SEGMENT_FILE.test(n)).sort();
    for (const segment of segments) {
      const name = `${decodeURIComponent(store)}/${segment}`;
      records.push(...(await recordsOf(join(root, store, segment), name)));
    }
  }
  const chosen = prng.shuffle(records).slice(0, count);
  for (const record of chosen) {
    const bit = prng.int(record.bytes * 8);
    const at = record.offset + (bit >> 3);
    const file = await open(record.path, 'r+');
    try {
      const byte = Buffer.alloc(1);
      await file.read(byte, 0, 1, at);
      byte[0]! ^= 1 << (bit & 7);
      await file.write(byte, 0, 1, at);
      await file.sync();
    } finally {
      await file.close();
    }
  }
  return { records: chosen.map((r) => `${r.name}@${r.seq}`) };
}
