// Snapshot data as files in `<root>/<group>/`: written to a temporary name, fsynced, renamed,
// and the directory fsynced, so a crash leaves either no file or a whole one. LevelDB records
// which file is current (with its format, length and checksum); other files are leftovers.
//
// Format 2 (snapshot-file-format.ts) is a header, then frames `u32 length | u32 crc32c | bytes`
// of at most SNAPSHOT_FRAME_BYTES_MAX each, then a trailer with the length and CRC of all the
// data. It is written as the state machine produces it and read a frame at a time, each frame
// checked before it is handed on: no side ever holds the whole snapshot in one buffer (Node
// refuses to read a file over 2 GiB whole, and a typed array has a length limit). Format 1 (the
// data alone, its CRC in the record) is still read, in pieces, after a checking pass.
//
// Frames are fdatasynced as they are written (RocksDB's bytes_per_sync). Written at once, tens
// of megabytes of dirty pages pile up, and the log's next fsync on the same file system can
// have to wait for all of them (one journal commit flushes them): every append of the member
// stalls.

import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, rename, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ChunkedSnapshotData, type GroupId, type SnapshotData } from '../types.js';
import { crc32cUpdate } from './crc32c.js';
import {
  decodeHeader,
  decodeTrailer,
  encodeFrameHead,
  encodeHeader,
  encodeTrailer,
  FRAME_HEAD_BYTES,
  HEADER_BYTES,
  SNAPSHOT_FILE_FORMAT,
  SNAPSHOT_FRAME_BYTES_MAX,
  TRAILER_BYTES,
} from './snapshot-file-format.js';
import { StorageError } from './storage-error.js';

export { SNAPSHOT_FILE_FORMAT, SNAPSHOT_FRAME_BYTES_MAX } from './snapshot-file-format.js';

const TEMP_SUFFIX = '.tmp';
/** Bytes written between fdatasyncs, and read at a time from a format 1 file. */
export const SNAPSHOT_SYNC_CHUNK_BYTES = 1024 * 1024;

/** What a snapshot file holds, as its LevelDB record says. */
export interface SnapshotFileInfo {
  readonly file: string;
  /** 1: the data alone (records without a format); 2: framed (snapshot-file-format.ts). */
  readonly format: number;
  readonly dataBytes: number;
  /** CRC-32C of all the data. */
  readonly dataCrc: number;
}

/** Where one frame of a format 2 file lies, and its checksum. */
export interface FrameRef {
  /** Offset of its first byte in the snapshot data. */
  readonly dataStart: number;
  /** Position of its bytes (after its head) in the file. */
  readonly position: number;
  readonly length: number;
  readonly crc: number;
}

/** A stored snapshot file and where its frames lie: enough to read any part of it. */
export interface StoredSnapshotFile extends SnapshotFileInfo {
  readonly frames: readonly FrameRef[];
}

/** Opens a directory and fsyncs it, making renames and creations inside it durable. */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes all of `data` at file position `at`, however many calls it takes. */
async function writeAll(handle: FileHandle, data: Uint8Array, at: number): Promise<void> {
  let done = 0;
  while (done < data.length) {
    const { bytesWritten } = await handle.write(data, done, data.length - done, at + done);
    done += bytesWritten;
  }
}

/** Reads exactly `length` bytes at `at` into a new buffer; null at a short read (end of file). */
async function readExactly(
  handle: FileHandle,
  at: number,
  length: number,
): Promise<Uint8Array | null> {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(out, done, length - done, at + done);
    if (bytesRead === 0) return null;
    done += bytesRead;
  }
  return out;
}

/**
 * A snapshot file being written (format 2): chunks are appended as frames as they come, synced
 * every SNAPSHOT_SYNC_CHUNK_BYTES; `finish` writes the trailer, syncs, renames the file into
 * place and syncs the directory. Anything that fails removes the temporary file: a partial file
 * on a full disk holds the very space the storage needs to come back (LevelDB's reopen writes a
 * table and a manifest). Calls must not overlap (await each).
 */
export class SnapshotFileWriter {
  private position = HEADER_BYTES;
  private readonly frames: FrameRef[] = [];
  private crc = 0;
  private dataBytes = 0;
  private unsyncedBytes = 0;
  private ended = false;

  private constructor(
    private readonly handle: FileHandle,
    private readonly directory: string,
    readonly file: string,
  ) {}

  static async create(directory: string, file: string): Promise<SnapshotFileWriter> {
    const handle = await open(join(directory, file + TEMP_SUFFIX), 'w');
    const writer = new SnapshotFileWriter(handle, directory, file);
    await writer.guard(() => writeAll(handle, encodeHeader(), 0));
    return writer;
  }

  /** Appends `chunk` (any length; split into frames of at most SNAPSHOT_FRAME_BYTES_MAX). */
  async append(chunk: Uint8Array): Promise<void> {
    if (this.ended) throw new Error('snapshot file writer: append after the end');
    for (let start = 0; start < chunk.length; start += SNAPSHOT_FRAME_BYTES_MAX) {
      const end = Math.min(chunk.length, start + SNAPSHOT_FRAME_BYTES_MAX);
      const frame = chunk.subarray(start, end);
      await this.guard(() => this.writeFrame(frame));
    }
  }

  /** Ends the file durably under its final name; returns its length and CRC of its data. */
  async finish(): Promise<StoredSnapshotFile> {
    if (this.ended) throw new Error('snapshot file writer: finished twice');
    await this.guard(async () => {
      await writeAll(this.handle, encodeTrailer(this.dataBytes, this.crc), this.position);
      await this.handle.sync();
      this.ended = true;
      await this.handle.close();
      await rename(join(this.directory, this.file + TEMP_SUFFIX), join(this.directory, this.file));
    });
    await syncDirectory(this.directory);
    const { file, dataBytes, crc: dataCrc, frames } = this;
    return { file, format: SNAPSHOT_FILE_FORMAT, dataBytes, dataCrc, frames };
  }

  /** Abandons the file: closes and removes it (never throws). */
  async abort(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      await this.handle.close().catch(() => undefined);
    }
    await unlink(join(this.directory, this.file + TEMP_SUFFIX)).catch(() => undefined);
  }

  private async writeFrame(frame: Uint8Array): Promise<void> {
    if (frame.length === 0) return; // a zero length marks the trailer
    const frameCrc = crc32cUpdate(0, frame);
    await writeAll(this.handle, encodeFrameHead(frame.length, frameCrc), this.position);
    await writeAll(this.handle, frame, this.position + FRAME_HEAD_BYTES);
    const ref = { dataStart: this.dataBytes, position: this.position + FRAME_HEAD_BYTES };
    this.frames.push({ ...ref, length: frame.length, crc: frameCrc });
    this.position += FRAME_HEAD_BYTES + frame.length;
    this.crc = crc32cUpdate(this.crc, frame);
    this.dataBytes += frame.length;
    this.unsyncedBytes += frame.length;
    if (this.unsyncedBytes >= SNAPSHOT_SYNC_CHUNK_BYTES) {
      await this.handle.datasync();
      this.unsyncedBytes = 0;
    }
  }

  private async guard(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      await this.abort();
      throw error;
    }
  }
}

export class SnapshotFiles {
  constructor(readonly root: string) {}

  /** Directory of one group's snapshots; the id is percent-encoded to be a safe file name. */
  directoryOf(group: GroupId): string {
    return join(this.root, encodeURIComponent(group));
  }

  /**
   * Starts a new snapshot file of `group` (format 2). The name is fresh each time, so the file a
   * record points at is never overwritten.
   */
  async begin(group: GroupId, index: number, term: number): Promise<SnapshotFileWriter> {
    const directory = this.directoryOf(group);
    const created = await mkdir(directory, { recursive: true });
    if (created !== undefined) await syncDirectory(this.root);
    const file = `${index}-${term}-${randomBytes(4).toString('hex')}.snap`;
    return SnapshotFileWriter.create(directory, file);
  }

  /** Writes `chunks` durably as a new file of `group`; returns what its record must say. */
  async write(
    group: GroupId,
    index: number,
    term: number,
    chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>,
  ): Promise<StoredSnapshotFile> {
    const writer = await this.begin(group, index, term);
    try {
      for await (const chunk of chunks) await writer.append(chunk);
    } catch (error) {
      await writer.abort();
      throw error;
    }
    return writer.finish();
  }

  /**
   * The data of a stored snapshot file, checked whole first (rejects as `chunks` does), to be
   * read later a frame at a time (FileSnapshotData). A format 1 file is read into memory in
   * pieces instead (it has no frames to check apart); the next snapshot is of format 2.
   */
  async open(group: GroupId, info: SnapshotFileInfo): Promise<SnapshotData> {
    if (info.format === 1) return new ChunkedSnapshotData(await this.read(group, info));
    const frames: FrameRef[] = [];
    for await (const chunk of this.chunks(group, info, frames)) void chunk;
    return this.dataOf(group, { ...info, frames });
  }

  /** The data of a file just written (its frames known), read a frame at a time. */
  dataOf(group: GroupId, stored: StoredSnapshotFile): SnapshotData {
    const path = join(this.directoryOf(group), stored.file);
    return new FileSnapshotData(path, `group ${group}: snapshot file ${stored.file}`, stored);
  }

  /**
   * The data of a snapshot file in order, a frame (format 2) or SNAPSHOT_SYNC_CHUNK_BYTES
   * (format 1) at a time; each frame is checked before it is yielded, and the whole length and
   * CRC at the end (a format 1 file is only checked at the end: read it through `verify` first).
   * Rejects StorageError `corrupt` when a check fails or the file is missing (a group with peers
   * drops a corrupt snapshot to be repaired), `format` for a format it does not know, `io` for
   * any other failure to read (EIO, EISDIR): that says nothing about the bytes, and they must
   * never be dropped for it.
   */
  async *chunks(
    group: GroupId,
    info: SnapshotFileInfo,
    frames: FrameRef[] = [],
  ): AsyncGenerator<Uint8Array> {
    const what = `group ${group}: snapshot file ${info.file}`;
    if (info.format !== 1 && info.format !== SNAPSHOT_FILE_FORMAT) {
      throw new StorageError(
        'format',
        `${what} is of format ${info.format}, which this version cannot read (it knows 1 and ` +
          `${SNAPSHOT_FILE_FORMAT}): run a version that knows it`,
      );
    }
    const handle = await this.openFile(group, info.file);
    try {
      const read = info.format === 1 ? readRaw(handle) : readFramed(handle, what, frames);
      let crc = 0;
      let bytes = 0;
      for await (const chunk of guardRead(read, what)) {
        crc = crc32cUpdate(crc, chunk);
        bytes += chunk.length;
        if (bytes > info.dataBytes) break;
        if (bytes < info.dataBytes || crc === info.dataCrc) yield chunk;
      }
      if (bytes !== info.dataBytes || crc !== info.dataCrc) {
        throw new StorageError('corrupt', `${what} fails its checksum`);
      }
    } finally {
      await handle.close();
    }
  }

  /** Reads the whole file through `chunks`, keeping nothing: rejects as `chunks` would. */
  async verify(group: GroupId, info: SnapshotFileInfo): Promise<void> {
    for await (const chunk of this.chunks(group, info)) void chunk;
  }

  /** The data of a snapshot file as a list of its checked chunks (see `chunks`). */
  async read(group: GroupId, info: SnapshotFileInfo): Promise<Uint8Array[]> {
    if (info.format === 1) await this.verify(group, info); // only checked at its end
    const out: Uint8Array[] = [];
    for await (const chunk of this.chunks(group, info)) out.push(chunk);
    return out;
  }

  private async openFile(group: GroupId, file: string): Promise<FileHandle> {
    try {
      return await open(join(this.directoryOf(group), file), 'r');
    } catch (cause) {
      throw readFailure(`group ${group}: snapshot file ${file}`, cause);
    }
  }

  /** Deletes every file of `group` but `keep` (temporaries and superseded snapshots). */
  async removeAllBut(group: GroupId, keep: string | null): Promise<void> {
    const directory = this.directoryOf(group);
    let names: string[];
    try {
      names = await readdir(directory);
    } catch {
      return;
    }
    for (const name of names) {
      if (name !== keep) await rm(join(directory, name), { force: true });
    }
  }

  /** Deletes one file, ignoring a missing one (best effort: leftovers are removed on load). */
  async remove(group: GroupId, file: string): Promise<void> {
    await unlink(join(this.directoryOf(group), file)).catch(() => undefined);
  }

  /** Deletes the group's directory and makes that durable. */
  async removeGroup(group: GroupId): Promise<void> {
    await rm(this.directoryOf(group), { recursive: true, force: true });
    await syncDirectory(this.root);
  }
}

/** A file system failure reading `what`: `corrupt` when it is missing, `io` otherwise. */
function readFailure(what: string, cause: unknown): StorageError {
  if ((cause as NodeJS.ErrnoException).code === 'ENOENT') {
    return new StorageError('corrupt', `${what} is missing`, { cause });
  }
  return new StorageError('io', `${what} unreadable: ${(cause as Error).message}`, { cause });
}

/** Passes `read` on, turning file system errors into StorageErrors about `what`. */
async function* guardRead(
  read: AsyncGenerator<Uint8Array>,
  what: string,
): AsyncGenerator<Uint8Array> {
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    try {
      next = await read.next();
    } catch (cause) {
      throw cause instanceof StorageError ? cause : readFailure(what, cause);
    }
    if (next.done === true) return;
    yield next.value;
  }
}

/** A format 1 file: the data alone, in pieces. */
async function* readRaw(handle: FileHandle): AsyncGenerator<Uint8Array> {
  for (let at = 0; ; ) {
    const piece = new Uint8Array(SNAPSHOT_SYNC_CHUNK_BYTES);
    const { bytesRead } = await handle.read(piece, 0, piece.length, at);
    if (bytesRead === 0) return;
    at += bytesRead;
    yield piece.subarray(0, bytesRead);
  }
}

/** A format 2 file: checks the header, yields each frame once its CRC matches, then the end. */
async function* readFramed(
  handle: FileHandle,
  what: string,
  frames: FrameRef[],
): AsyncGenerator<Uint8Array> {
  const corrupt = (why: string) => new StorageError('corrupt', `${what} ${why}`);
  const header = await readExactly(handle, 0, HEADER_BYTES);
  if (header === null) throw corrupt('is cut short in its header');
  const problem = decodeHeader(header);
  if (problem === 'format') {
    throw new StorageError('format', `${what} is of a snapshot format this version cannot read`);
  }
  if (problem !== null) throw corrupt(`has a bad header (${problem})`);
  let at = HEADER_BYTES;
  let crc = 0;
  let bytes = 0;
  for (;;) {
    const head = await readExactly(handle, at, FRAME_HEAD_BYTES);
    if (head === null) throw corrupt(`is cut short at byte ${at}`);
    const view = new DataView(head.buffer);
    const length = view.getUint32(0);
    if (length === 0) {
      const body = await readExactly(handle, at + FRAME_HEAD_BYTES, TRAILER_BYTES);
      const trailer = body === null ? null : decodeTrailer(body, view.getUint32(4));
      if (trailer === null || trailer.dataBytes !== bytes || trailer.dataCrc !== crc) {
        throw corrupt('has a bad trailer');
      }
      at += FRAME_HEAD_BYTES + TRAILER_BYTES;
      break;
    }
    if (length > SNAPSHOT_FRAME_BYTES_MAX) throw corrupt(`has a ${length}-byte frame at ${at}`);
    const frame = await readExactly(handle, at + FRAME_HEAD_BYTES, length);
    if (frame === null) throw corrupt(`is cut short in the frame at byte ${at}`);
    if (crc32cUpdate(0, frame) !== view.getUint32(4)) throw corrupt(`fails the checksum at ${at}`);
    const position = at + FRAME_HEAD_BYTES;
    frames.push({ dataStart: bytes, position, length, crc: view.getUint32(4) });
    at += FRAME_HEAD_BYTES + length;
    crc = crc32cUpdate(crc, frame);
    bytes += length;
    yield frame;
  }
  if ((await readExactly(handle, at, 1)) !== null) throw corrupt('has bytes after its trailer');
}

/**
 * The data of a stored format 2 file, read when asked a frame at a time with synchronous reads
 * (restore and InstallSnapshot chunks are synchronous, and a frame is at most 1 MiB), each
 * frame checked against its CRC: memory holds at most two frames, whatever the snapshot's size.
 * The file is opened per read: one superseded meanwhile (deleted) fails `corrupt`.
 */
export class FileSnapshotData implements SnapshotData {
  readonly dataBytes: number;
  private readonly frames: readonly FrameRef[];

  constructor(
    private readonly path: string,
    private readonly what: string,
    stored: StoredSnapshotFile,
  ) {
    this.dataBytes = stored.dataBytes;
    this.frames = stored.frames;
  }

  *[Symbol.iterator](): Iterator<Uint8Array> {
    const fd = this.openSync();
    try {
      for (const frame of this.frames) yield this.readFrame(fd, frame);
    } finally {
      closeSync(fd);
    }
  }

  slice(start: number, end: number): Uint8Array {
    end = Math.min(end, this.dataBytes);
    if (end <= start) return new Uint8Array(0);
    let i = this.frameAt(start);
    const fd = this.openSync();
    try {
      const first = this.frames[i]!;
      const firstBytes = this.readFrame(fd, first);
      const from = start - first.dataStart;
      const firstEnd = first.dataStart + first.length;
      if (end <= firstEnd) return firstBytes.subarray(from, end - first.dataStart);
      const out = new Uint8Array(end - start);
      out.set(firstBytes.subarray(from), 0);
      for (let at = first.length - from; at < out.length; at += this.frames[i]!.length) {
        const bytes = this.readFrame(fd, this.frames[++i]!);
        out.set(bytes.subarray(0, Math.min(bytes.length, out.length - at)), at);
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  /** Index of the frame holding data byte `offset` (binary search). */
  private frameAt(offset: number): number {
    let low = 0;
    let high = this.frames.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.frames[middle]!.dataStart <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  private openSync(): number {
    try {
      return openSync(this.path, 'r');
    } catch (cause) {
      throw readFailure(this.what, cause);
    }
  }

  private readFrame(fd: number, frame: FrameRef): Uint8Array {
    const out = new Uint8Array(frame.length);
    try {
      for (let done = 0; done < out.length; ) {
        const read = readSync(fd, out, done, out.length - done, frame.position + done);
        if (read === 0) throw new StorageError('corrupt', `${this.what} is cut short`);
        done += read;
      }
    } catch (cause) {
      throw cause instanceof StorageError ? cause : readFailure(this.what, cause);
    }
    if (crc32cUpdate(0, out) !== frame.crc) {
      throw new StorageError('corrupt', `${this.what} fails the checksum at ${frame.position}`);
    }
    return out;
  }
}
