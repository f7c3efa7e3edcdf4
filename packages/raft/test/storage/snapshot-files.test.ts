import { Buffer } from 'node:buffer';
import { randomFillSync } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crc32c } from '../../src/storage/crc32c.js';
import {
  SNAPSHOT_FILE_FORMAT,
  SNAPSHOT_FRAME_BYTES_MAX,
  SNAPSHOT_SYNC_CHUNK_BYTES,
  type SnapshotFileInfo,
  SnapshotFiles,
} from '../../src/storage/snapshot-files.js';
import { isStorageError, type StorageErrorKind } from '../../src/storage/storage-error.js';
import { joinChunks } from '../chunks.js';

function failsWith(kind: StorageErrorKind, text?: RegExp) {
  return (error: unknown) =>
    isStorageError(error) && error.kind === kind && (text === undefined || text.test(error.message));
}

/** `data` in chunks of `chunkBytes` (views of it). */
function split(data: Uint8Array, chunkBytes: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < data.length; at += chunkBytes) out.push(data.subarray(at, at + chunkBytes));
  return out;
}

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

  async function readAll(snapshots: SnapshotFiles, group: string, info: SnapshotFileInfo) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of snapshots.chunks(group, info)) chunks.push(chunk);
    return chunks;
  }

  it('removes its temporary file when a write fails halfway (a full disk keeps no partial file)', async () => {
    const snapshots = await files();
    function* failing(): Generator<Uint8Array> {
      yield randomFillSync(new Uint8Array(SNAPSHOT_SYNC_CHUNK_BYTES + 10));
      throw new Error('ENOSPC: no space left on device');
    }
    await expect(snapshots.write('spool:a', 7, 1, failing())).rejects.toThrow(/ENOSPC/);
    expect(await readdir(snapshots.directoryOf('spool:a'))).toEqual([]);
  });

  it('writes chunks as they come as checked frames; reads them back a frame at a time', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(2 * SNAPSHOT_FRAME_BYTES_MAX + 4_000_017));
    // Chunks of uneven sizes, one larger than a frame (split), some empty (skipped).
    const chunks = [data.subarray(0, 5), new Uint8Array(0), ...split(data.subarray(5), 3 << 20)];
    const info = await snapshots.write('spool:a', 42, 3, chunks);
    expect(info).toMatchObject({ format: SNAPSHOT_FILE_FORMAT, dataBytes: data.length });
    expect(info.dataCrc).toBe(crc32c(data));
    const read = await readAll(snapshots, 'spool:a', info);
    for (const chunk of read) expect(chunk.byteLength).toBeLessThanOrEqual(SNAPSHOT_FRAME_BYTES_MAX);
    expect(Buffer.from(joinChunks(read)).equals(data)).toBe(true);
    expect(await readdir(snapshots.directoryOf('spool:a'))).toEqual([info.file]); // no temporary
  });

  it('writes an empty snapshot', async () => {
    const snapshots = await files();
    const info = await snapshots.write('g', 1, 1, []);
    expect(info.dataCrc).toBe(crc32c(new Uint8Array(0)));
    expect(await snapshots.read('g', info)).toEqual([]);
  });

  it('refuses a frame whose bytes changed, before handing it on', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(SNAPSHOT_FRAME_BYTES_MAX + 5));
    const info = await snapshots.write('g', 7, 2, [data]);
    const path = join(snapshots.directoryOf('g'), info.file);
    const bytes = await readFile(path);
    bytes[bytes.length - 21]! ^= 0x40; // the last byte of the second frame, before the trailer
    await writeFile(path, bytes);
    const handed: Uint8Array[] = [];
    const reading = (async () => {
      for await (const chunk of snapshots.chunks('g', info)) handed.push(chunk);
    })();
    await expect(reading).rejects.toSatisfy(failsWith('corrupt', /checksum/));
    expect(handed.length).toBe(1); // the good first frame only
    await expect(snapshots.verify('g', info)).rejects.toSatisfy(failsWith('corrupt'));
  });

  it('refuses a cut file, a bad length, a bad trailer and bytes after it as corrupt', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(3000));
    const info = await snapshots.write('g', 7, 2, [data]);
    const path = join(snapshots.directoryOf('g'), info.file);
    const good = await readFile(path);
    const variants: Buffer[] = [good.subarray(0, good.length - 3), good.subarray(0, 10)];
    const hugeLength = Buffer.from(good);
    hugeLength.writeUInt32BE(0xffff_fff0, 16); // the first frame's length
    variants.push(hugeLength, Buffer.concat([good, Buffer.from([0])]));
    const badTrailer = Buffer.from(good);
    badTrailer[badTrailer.length - 1]! ^= 1;
    variants.push(badTrailer);
    for (const variant of variants) {
      await writeFile(path, variant);
      await expect(snapshots.verify('g', info)).rejects.toSatisfy(failsWith('corrupt'));
    }
  });

  it('refuses a file of an unknown format with one sentence, never as corrupt', async () => {
    const snapshots = await files();
    const info = await snapshots.write('g', 7, 2, [new Uint8Array([1, 2, 3])]);
    // A record that names a newer format: the file is not even opened.
    await expect(snapshots.verify('g', { ...info, format: 3 })).rejects.toSatisfy(
      failsWith('format', /^raft storage: group g: snapshot file \S+ is of format 3, which this version cannot read \(it knows 1 and 2\): run a version that knows it$/),
    );
    // A header that names a newer format (its checksum right): refused the same way.
    const path = join(snapshots.directoryOf('g'), info.file);
    const bytes = await readFile(path);
    bytes.writeUInt32BE(3, 8);
    bytes.writeUInt32BE(crc32c(bytes, 0, 12), 12);
    await writeFile(path, bytes);
    await expect(snapshots.verify('g', info)).rejects.toSatisfy(failsWith('format', /format/));
  });

  it('still reads a format 1 file (the data alone), in pieces, checked against the record', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(2 * SNAPSHOT_SYNC_CHUNK_BYTES + 77));
    await mkdir(snapshots.directoryOf('g'), { recursive: true });
    await writeFile(join(snapshots.directoryOf('g'), 'old.snap'), data);
    const info = { file: 'old.snap', format: 1, dataBytes: data.length, dataCrc: crc32c(data) };
    const chunks = await snapshots.read('g', info);
    expect(chunks.length).toBe(3);
    expect(Buffer.from(joinChunks(chunks)).equals(data)).toBe(true);
    await expect(snapshots.read('g', { ...info, dataCrc: info.dataCrc ^ 1 })).rejects.toSatisfy(
      failsWith('corrupt', /checksum/),
    );
    await expect(snapshots.read('g', { ...info, dataBytes: 10 })).rejects.toSatisfy(failsWith('corrupt'));
  });

  it('a missing file is corrupt (lost); a file it cannot read is io, never corrupt', async () => {
    const snapshots = await files();
    const info = await snapshots.write('g', 7, 2, [randomFillSync(new Uint8Array(100))]);
    await expect(snapshots.read('g', { ...info, file: 'gone.snap' })).rejects.toSatisfy(
      failsWith('corrupt', /missing/),
    );
    // A directory in the file's place: reading fails (EISDIR) without saying anything of bytes.
    await rm(join(snapshots.directoryOf('g'), info.file));
    await mkdir(join(snapshots.directoryOf('g'), info.file));
    await expect(snapshots.read('g', info)).rejects.toSatisfy(failsWith('io'));
  });

  it('writes and reads 256 MiB a frame at a time, never holding more than a frame', async () => {
    // A generator hands out one reused 1 MiB chunk, so the test holds a few MiB whatever the
    // size; the reader's buffers are each at most a frame.
    const snapshots = await files();
    const chunk = randomFillSync(new Uint8Array(SNAPSHOT_FRAME_BYTES_MAX));
    const frames = 256;
    function* generate(): Generator<Uint8Array> {
      for (let i = 0; i < frames; i++) yield chunk;
    }
    const info = await snapshots.write('big', 1, 1, generate());
    expect(info.dataBytes).toBe(frames * SNAPSHOT_FRAME_BYTES_MAX);
    expect((await stat(join(snapshots.directoryOf('big'), info.file))).size).toBeGreaterThan(256 << 20);
    let count = 0;
    let largest = 0;
    for await (const read of snapshots.chunks('big', info)) {
      count++;
      largest = Math.max(largest, read.buffer.byteLength);
    }
    expect(count).toBe(frames);
    expect(largest).toBeLessThanOrEqual(SNAPSHOT_FRAME_BYTES_MAX);
  }, 120_000);

  it('reads a stored file back from any offset, a frame or two at a time, each checked', async () => {
    const snapshots = await files();
    const data = randomFillSync(new Uint8Array(3 * SNAPSHOT_FRAME_BYTES_MAX + 1234));
    const stored = await snapshots.write('g', 9, 2, split(data, 700_000));
    const opened = await snapshots.open('g', stored);
    for (const read of [snapshots.dataOf('g', stored), opened]) {
      expect(read.dataBytes).toBe(data.length);
      const chunks = [...read];
      for (const chunk of chunks) expect(chunk.buffer.byteLength).toBeLessThanOrEqual(SNAPSHOT_FRAME_BYTES_MAX);
      expect(Buffer.from(joinChunks(chunks)).equals(data)).toBe(true);
      // Ranges inside one frame, across two and three frames, at the end and past it.
      const F = SNAPSHOT_FRAME_BYTES_MAX;
      for (const [start, end] of [[5, 900], [F - 10, F + 10], [700_000 - 1, 2 * F + 5], [data.length - 3, data.length + 50]]) {
        expect(Buffer.from(read.slice(start!, end!)).equals(data.subarray(start!, end!))).toBe(true);
      }
    }
    // A flipped bit in the file is found when that frame is read, never handed on.
    const path = join(snapshots.directoryOf('g'), stored.file);
    const bytes = await readFile(path);
    bytes[bytes.length - 100]! ^= 1;
    await writeFile(path, bytes);
    const read = snapshots.dataOf('g', stored);
    expect(read.slice(0, 100).length).toBe(100); // the first frame is fine
    expect(() => read.slice(data.length - 200, data.length)).toThrow(/fails the checksum/);
    let failure: unknown = null;
    try {
      for (const chunk of read) void chunk;
    } catch (error) {
      failure = error;
    }
    expect(failsWith('corrupt')(failure)).toBe(true);
    await expect(snapshots.open('g', stored)).rejects.toSatisfy(failsWith('corrupt'));
    // Removed (superseded): corrupt, as a missing file is on load.
    await rm(path);
    expect(() => read.slice(0, 10)).toThrow(/missing/);
  });
});
