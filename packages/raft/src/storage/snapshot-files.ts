// Snapshot data as files in `<root>/<group>/`: written to a temporary name, fsynced, renamed,
// and the directory fsynced, so a crash leaves either no file or a whole one. LevelDB records
// which file is current (with its length and checksum); other files are leftovers.
//
// A snapshot is written and checksummed a chunk at a time, with an fdatasync after each chunk
// (RocksDB's bytes_per_sync). Written at once, tens of megabytes of dirty pages pile up, and
// the log's next fsync on the same file system can have to wait for all of them (one journal
// commit flushes them): every append of the member stalls. Checksummed at once, a large
// snapshot holds the event loop for tens of milliseconds.

import { randomBytes } from 'node:crypto';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  unlink,
} from 'node:fs/promises';
import { join } from 'node:path';
import type { GroupId } from '../types.js';
import { crc32c, crc32cUpdate } from './crc32c.js';
import { StorageError } from './storage-error.js';

const TEMP_SUFFIX = '.tmp';
/** Bytes of a snapshot file written, checksummed and fdatasynced at a time. */
export const SNAPSHOT_SYNC_CHUNK_BYTES = 1024 * 1024;

/** Opens a directory and fsyncs it, making renames and creations inside it durable. */
export async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `data[start, end)` at file position `start`, however many calls it takes. */
async function writeRange(
  handle: FileHandle,
  data: Uint8Array,
  start: number,
  end: number,
): Promise<void> {
  let at = start;
  while (at < end) {
    const { bytesWritten } = await handle.write(data, at, end - at, at);
    at += bytesWritten;
  }
}

/** Writes `data` to a new file at `path` a chunk at a time, then syncs it; returns its CRC-32C. */
async function writeSynced(path: string, data: Uint8Array): Promise<number> {
  const handle = await open(path, 'w');
  let crc = 0;
  try {
    for (let start = 0; start < data.length; start += SNAPSHOT_SYNC_CHUNK_BYTES) {
      const end = Math.min(data.length, start + SNAPSHOT_SYNC_CHUNK_BYTES);
      crc = crc32cUpdate(crc, data, start, end);
      await writeRange(handle, data, start, end);
      if (end < data.length) await handle.datasync(); // the last chunk goes with the sync
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
  return crc;
}

export class SnapshotFiles {
  constructor(readonly root: string) {}

  /** Directory of one group's snapshots; the id is percent-encoded to be a safe file name. */
  directoryOf(group: GroupId): string {
    return join(this.root, encodeURIComponent(group));
  }

  /**
   * Writes `data` durably as a new file of `group` and returns its name and CRC-32C. The name is
   * fresh each time, so the file a record points at is never overwritten.
   */
  async write(
    group: GroupId,
    index: number,
    term: number,
    data: Uint8Array,
  ): Promise<{ file: string; crc: number }> {
    const directory = this.directoryOf(group);
    const created = await mkdir(directory, { recursive: true });
    if (created !== undefined) await syncDirectory(this.root);
    const file = `${index}-${term}-${randomBytes(4).toString('hex')}.snap`;
    const temp = join(directory, file + TEMP_SUFFIX);
    let crc = 0;
    try {
      crc = await writeSynced(temp, data);
    } catch (error) {
      // A partial file on a full disk holds the very space the storage needs to come back
      // (LevelDB's reopen writes a table and a manifest): remove it now, not at the next load.
      await unlink(temp).catch(() => undefined);
      throw error;
    }
    await rename(temp, join(directory, file));
    await syncDirectory(directory);
    return { file, crc };
  }

  /**
   * Reads a snapshot file and checks its length and checksum; StorageError `corrupt` if not, or
   * if the file is missing (a group with peers drops a corrupt snapshot to be repaired). Any
   * other failure to read (EIO, a file too large to read whole) says nothing about its bytes
   * and is never a reason to drop it: StorageError `io`.
   */
  async read(group: GroupId, file: string, dataBytes: number, dataCrc: number): Promise<Uint8Array> {
    let data: Uint8Array;
    try {
      data = await readFile(join(this.directoryOf(group), file));
    } catch (cause) {
      const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
      const what = `group ${group}: snapshot file ${file}`;
      if (missing) throw new StorageError('corrupt', `${what} is missing`, { cause });
      throw new StorageError('io', `${what} unreadable: ${(cause as Error).message}`, { cause });
    }
    if (data.length !== dataBytes || crc32c(data) !== dataCrc) {
      throw new StorageError('corrupt', `group ${group}: snapshot file ${file} fails its checksum`);
    }
    return data;
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
