// A snapshot far larger than any buffer the code allocates goes through save, restart, restore
// and InstallSnapshot reads while no buffer larger than a frame (or one sent chunk) is made: the
// test fails if any of these allocated in proportion to the snapshot. The snapshot is 320 MiB
// of one reused 1 MiB chunk in memory, so the test itself holds a few MiB.

import { randomFillSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { snapshotMessages, type SnapshotSend } from '../../src/core/ready.js';
import { crc32cUpdate } from '../../src/storage/crc32c.js';
import { LevelStorageEngine } from '../../src/storage/level-storage.js';
import { FileSnapshotData, SNAPSHOT_FRAME_BYTES_MAX } from '../../src/storage/snapshot-files.js';
import type { SnapshotData } from '../../src/types.js';

const CHUNKS = 320;
const CHUNK_BYTES = 1 << 20;
const SEND_BYTES = 256 * 1024;

describe('a snapshot of hundreds of MiB', () => {
  const directories: string[] = [];
  afterEach(async () => {
    for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
  });

  it('is stored as it is produced, restored after a restart and sent, a frame at a time', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'mq-snapshot-bounded-'));
    directories.push(directory);
    const chunk = randomFillSync(new Uint8Array(CHUNK_BYTES));
    let expectedCrc = 0;
    for (let i = 0; i < CHUNKS; i++) expectedCrc = crc32cUpdate(expectedCrc, chunk);
    const meta = { index: 1000, term: 2, config: { voters: ['n1', 'n2'], learners: [] } };

    let engine = await LevelStorageEngine.open(directory);
    const storage = engine.group('spool:big');
    await storage.load();
    // Stored as RaftNode stores a sliced snapshot: each chunk written as it comes.
    const sink = storage.beginSnapshot!(meta);
    for (let i = 0; i < CHUNKS; i++) await sink.append(chunk);
    const stored = await sink.finish();
    expect(stored).toBeInstanceOf(FileSnapshotData);
    expect(stored.dataBytes).toBe(CHUNKS * CHUNK_BYTES);
    checkSends(stored, meta);
    await engine.close();

    engine = await LevelStorageEngine.open(directory);
    const restored = await engine.group('spool:big').load();
    expect(restored.snapshot?.meta).toEqual(meta);
    const data = restored.snapshot!.data;
    expect(data).toBeInstanceOf(FileSnapshotData);
    // Restore reads it as a state machine would: chunk by chunk, each its own small buffer.
    let crc = 0;
    let bytes = 0;
    let largest = 0;
    for (const read of data) {
      largest = Math.max(largest, read.buffer.byteLength);
      crc = crc32cUpdate(crc, read);
      bytes += read.byteLength;
    }
    expect(largest).toBeLessThanOrEqual(SNAPSHOT_FRAME_BYTES_MAX);
    expect(bytes).toBe(CHUNKS * CHUNK_BYTES);
    expect(crc).toBe(expectedCrc);
    checkSends(data, meta);
    await engine.close();
  }, 120_000);
});

/** Every InstallSnapshot chunk a leader sends is read alone: a buffer of one chunk at most. */
function checkSends(data: SnapshotData, meta: SnapshotSend['meta']): void {
  // A sample across the snapshot (each offset inside a frame or straddling two), then the end.
  const offsets = [0, SEND_BYTES, CHUNK_BYTES - 100, 77 * CHUNK_BYTES + 5, data.dataBytes - 1000];
  const sends: SnapshotSend[] = offsets.map((offset) => {
    const end = Math.min(data.dataBytes, offset + SEND_BYTES);
    const done = end === data.dataBytes;
    return { from: 'n1', to: 'n2', term: 2, meta, offset, end, done, data };
  });
  for (const message of snapshotMessages(sends)) {
    expect(message.chunk.byteLength).toBe(Math.min(SEND_BYTES, data.dataBytes - message.offset));
    expect(message.chunk.buffer.byteLength).toBeLessThanOrEqual(Math.max(SEND_BYTES, SNAPSHOT_FRAME_BYTES_MAX));
  }
}
