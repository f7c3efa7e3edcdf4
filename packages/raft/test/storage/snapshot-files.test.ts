import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crc32c } from '../../src/storage/crc32c.js';
import { SNAPSHOT_SYNC_CHUNK_BYTES, SnapshotFiles } from '../../src/storage/snapshot-files.js';
import { isStorageError } from '../../src/storage/storage-error.js';

describe('SnapshotFiles', () => {
  const roots: string[] = [];
  afterEach(async () => {
    for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
  });

  async function files(): Promise<SnapshotFiles> {
    const root = await mkdtemp(join(tmpdir(), 'mq-snapshot-files-'));
    roots.push(root);
    return new SnapshotFiles(root);
  }

  it('removes its temporary file when a write fails halfway (a full disk keeps no partial file)', async () => {
    const snapshots = await files();
    // Claims two chunks but holds one and a half: the second chunk's write throws, as a write
    // on a full disk would, after the first chunk reached the file.
    const real = randomFillSync(new Uint8Array(SNAPSHOT_SYNC_CHUNK_BYTES + SNAPSHOT_SYNC_CHUNK_BYTES / 2));
    const short = new Proxy(real, {
      get: (target, key) => (key === 'length' ? 2 * SNAPSHOT_SYNC_CHUNK_BYTES : Reflect.get(target, key)),
    });
    await expect(snapshots.write('spool:a', 7, 1, short)).rejects.toThrow();
    expect(await readdir(snapshots.directoryOf('spool:a'))).toEqual([]);
  });

  it('writes a snapshot of several chunks whole, with the checksum of all of it', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(2 * SNAPSHOT_SYNC_CHUNK_BYTES + SNAPSHOT_SYNC_CHUNK_BYTES / 2 + 17));
    const { file, crc } = await snapshots.write('spool:a', 42, 3, data);
    expect(crc).toBe(crc32c(data));
    const read = await snapshots.read('spool:a', file, data.length, crc);
    expect(Buffer.from(read.buffer, read.byteOffset, read.byteLength).equals(data)).toBe(true);
    expect(await readdir(snapshots.directoryOf('spool:a'))).toEqual([file]); // no temporary left
  });

  it('writes an empty snapshot', async () => {
    const snapshots = await files();
    const { file, crc } = await snapshots.write('g', 1, 1, new Uint8Array(0));
    expect(crc).toBe(crc32c(new Uint8Array(0)));
    expect((await snapshots.read('g', file, 0, crc)).length).toBe(0);
  });

  it('refuses a file whose bytes changed after it was written', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(SNAPSHOT_SYNC_CHUNK_BYTES + 5));
    const { file, crc } = await snapshots.write('g', 7, 2, data);
    const changed = data.slice();
    changed[SNAPSHOT_SYNC_CHUNK_BYTES + 1]! ^= 0x40;
    await writeFile(join(snapshots.directoryOf('g'), file), changed);
    await expect(snapshots.read('g', file, data.length, crc)).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'corrupt',
    );
  });

  it('a missing file is corrupt (lost); a file it cannot read is io, never corrupt', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(100));
    const { file, crc } = await snapshots.write('g', 7, 2, data);
    await expect(snapshots.read('g', 'gone.snap', data.length, crc)).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'corrupt',
    );
    // A directory in the file's place: reading fails (EISDIR) without saying anything of bytes.
    await rm(join(snapshots.directoryOf('g'), file));
    await mkdir(join(snapshots.directoryOf('g'), file));
    await expect(snapshots.read('g', file, data.length, crc)).rejects.toSatisfy(
      (error: unknown) => isStorageError(error) && error.kind === 'io',
    );
  });
});
