// An emergency ballast on the data volume (CockroachDB keeps one, EMERGENCY_BALLAST): a file of
// `bytes` written while the volume has room and deleted when it has next to none. A member on a
// volume filled to the last byte cannot even open its storage (LevelDB's open writes a table of
// what its log holds, a new log and a manifest), nor append a lease or an ack. Deleting the
// ballast first gives that room back: the member starts, and while the watermark refuses growth
// (507 storage_full) receives, acks and deletes go on in the room the ballast held. The disk
// monitor counts a missing ballast as used space, so the alarm stays raised until the volume
// has room for the ballast too (above where the alarm clears); then it is written again.

import { open, rm, stat } from 'node:fs/promises';
import type { DiskSpace } from './disk-watermark.js';

/** The ballast's file name inside the data directory. */
export const DISK_BALLAST_FILE = 'disk-ballast';
const CHUNK_BYTES = 1024 * 1024;

/** What happened to the ballast. */
export type BallastEvent =
  | { readonly kind: 'released'; readonly bytes: number; readonly freeBytes: number }
  | { readonly kind: 'restored'; readonly bytes: number }
  | { readonly kind: 'restore_failed'; readonly error: Error };

export class DiskBallast {
  /** A write of the ballast is under way (one at a time). */
  private writing: Promise<boolean> | null = null;

  /**
   * `path`: the ballast file; `bytes` (> 0): its size; `probe`: the volume's free space;
   * `onEvent`: told of each release and restore.
   */
  constructor(
    readonly path: string,
    readonly bytes: number,
    private readonly probe: () => Promise<DiskSpace>,
    private readonly onEvent: (event: BallastEvent) => void = () => undefined,
  ) {
    if (!Number.isSafeInteger(bytes) || bytes < 1) {
      throw new Error('disk ballast: bytes must be a positive integer');
    }
  }

  /**
   * Deletes the ballast when the volume has less free space than the ballast holds (the room
   * storage may need to open or recover). Returns the bytes released (0: none, or not needed).
   * Never rejects: a volume that cannot be probed keeps its ballast.
   */
  async releaseIfLow(): Promise<number> {
    await this.writing;
    let space: DiskSpace;
    let size: number;
    try {
      space = await this.probe();
      size = (await stat(this.path)).size;
    } catch {
      return 0; // no ballast, or no sample: nothing to decide on
    }
    if (space.freeBytes >= this.bytes) return 0;
    await rm(this.path, { force: true });
    this.onEvent({ kind: 'released', bytes: size, freeBytes: space.freeBytes });
    return size;
  }

  /** Bytes the ballast lacks now (all of them when its file is missing). Never rejects. */
  async missingBytes(): Promise<number> {
    const size = await stat(this.path).then((s) => s.size, () => 0);
    return Math.max(0, this.bytes - size);
  }

  /**
   * Writes the ballast when it is missing or short and `space` leaves `keepFreeBytes` free
   * after it. A write that fails (the volume filled meanwhile) removes what it wrote. Resolves
   * true when the ballast was written now.
   */
  restoreIfRoom(space: DiskSpace, keepFreeBytes: number): Promise<boolean> {
    if (this.writing !== null || space.freeBytes < keepFreeBytes + this.bytes) {
      return Promise.resolve(false);
    }
    this.writing = this.restore().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  private async restore(): Promise<boolean> {
    const size = await stat(this.path).then((s) => s.size, () => 0);
    if (size >= this.bytes) return false;
    try {
      await writeZeros(this.path, this.bytes);
    } catch (error) {
      await rm(this.path, { force: true }).catch(() => undefined);
      const cause = error instanceof Error ? error : new Error(String(error));
      this.onEvent({ kind: 'restore_failed', error: cause });
      return false;
    }
    this.onEvent({ kind: 'restored', bytes: this.bytes });
    return true;
  }
}

/** Writes `bytes` zero bytes to `path` (real blocks, not a sparse file) and fsyncs them. */
async function writeZeros(path: string, bytes: number): Promise<void> {
  const handle = await open(path, 'w', 0o600);
  try {
    const chunk = Buffer.alloc(Math.min(CHUNK_BYTES, bytes));
    for (let written = 0; written < bytes; ) {
      const length = Math.min(chunk.length, bytes - written);
      const { bytesWritten } = await handle.write(chunk, 0, length, written);
      written += bytesWritten;
    }
    await handle.sync();
  } finally {
    await handle.close();
  }
}
