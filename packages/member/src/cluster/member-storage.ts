// A member's storage: the one StorageEngine every Raft group here shares (LevelDB in the data
// directory, or one passed in the options), the spool replicas' payload stores with their shared
// cache, and the watermarks that refuse growth before the volume or the heap runs out.

import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LevelStorageEngine, type StorageEngine, type StorageStats } from '@spoolmq/raft';
import type { Clock } from '@spoolmq/protocol';
import { DISK_BALLAST_FILE, DiskBallast } from '../host/disk-ballast.js';
import { DiskMonitor, statfsProbe } from '../host/disk-monitor.js';
import { MemoryMonitor } from '../host/memory-monitor.js';
import { MemberPayloads } from '../store/member-payloads.js';
import type { MemberOptions } from './member-options.js';

export class MemberStorage {
  private constructor(
    /** The engine every group's storage comes from. */
    readonly engine: StorageEngine,
    /** The spool replicas' payload stores and their shared cache. */
    readonly payloads: MemberPayloads,
    /** Opened here (closed here), not passed in the options. */
    private readonly owned: boolean,
    private readonly disk: DiskMonitor | null,
  ) {}

  /**
   * Opens the storage the options name: `options.storage`, else LevelDB in `options.dataDir`
   * (made this user's alone, the disk's ballast released first so a full volume can open).
   * Throws what LevelDB throws (locked by another process, unreadable).
   */
  static async open(options: MemberOptions, disk: DiskMonitor | null): Promise<MemberStorage> {
    const payloadsOf = (engine: StorageEngine, dataDir: string | null): MemberPayloads =>
      new MemberPayloads({
        dataDir,
        storage: engine,
        ...(options.payloadCacheBytes === undefined
          ? {}
          : { cacheBytes: options.payloadCacheBytes }),
        ...(options.payloadWritev === undefined ? {} : { writev: options.payloadWritev }),
      });
    if (options.storage !== undefined) {
      return new MemberStorage(options.storage, payloadsOf(options.storage, null), false, disk);
    }
    const dataDir = options.dataDir!;
    // Payloads, key hashes and the cluster secret live here: this user's alone.
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    await chmod(dataDir, 0o700);
    // On a volume filled to the last byte LevelDB cannot even open: the ballast makes room.
    await disk?.releaseBallast();
    const engine = await LevelStorageEngine.open(dataDir, {
      onTornTail: options.onTornTail,
      onHardStateRestored: options.onHardStateRestored,
    });
    return new MemberStorage(engine, payloadsOf(engine, dataDir), true, disk);
  }

  /** Whether the engine can reopen after a failure (a storage recovery is possible). */
  get canReopen(): boolean {
    return this.engine.reopen !== undefined;
  }

  /** Reopens the engine after a failure, the ballast released first (see `open`). */
  async reopen(): Promise<void> {
    await this.disk?.releaseBallast();
    await this.engine.reopen!();
  }

  /** Drops the stored log and payloads of group `group` (its replica closed). */
  async drop(group: string): Promise<void> {
    await this.engine.group(group).destroy();
    await this.payloads.destroy(group);
  }

  /**
   * The engine's counters (fsyncs, entries and bytes written, fsync latencies), shared by every
   * group; null when an engine passed in the options keeps none (those of @spoolmq/raft all do).
   */
  stats(): StorageStats | null {
    type WithStats = StorageEngine & { stats?: () => StorageStats };
    const engine = this.engine as WithStats;
    return typeof engine.stats === 'function' ? engine.stats() : null;
  }

  /** Closes the engine when it was opened here. */
  async close(): Promise<void> {
    if (this.owned) await this.engine.close();
  }
}

/** The watermark of the data volume: of `dataDir`, or of an injected probe; else none. */
export function diskMonitorOf(options: MemberOptions, clock: Clock): DiskMonitor | null {
  const probe =
    options.diskProbe ?? (options.dataDir === undefined ? undefined : statfsProbe(options.dataDir));
  if (probe === undefined) return null;
  const ballastBytes = options.diskBallastBytes ?? 0;
  const path = options.dataDir === undefined ? null : join(options.dataDir, DISK_BALLAST_FILE);
  const ballast =
    path === null || ballastBytes === 0
      ? undefined
      : new DiskBallast(path, ballastBytes, probe, options.onDiskBallast);
  return new DiskMonitor({
    probe,
    clock,
    ...(ballast === undefined ? {} : { ballast }),
    ...(options.diskPollMs === undefined ? {} : { pollMs: options.diskPollMs }),
    ...(options.diskReserveBytes === undefined ? {} : { reserveBytes: options.diskReserveBytes }),
  });
}

/** The watermark of this process's heap (or of an injected sampler). */
export function memoryMonitorOf(options: MemberOptions, clock: Clock): MemoryMonitor {
  return new MemoryMonitor({
    clock,
    ...(options.memorySampler === undefined ? {} : { sampler: options.memorySampler }),
    ...(options.memoryPollMs === undefined ? {} : { pollMs: options.memoryPollMs }),
    ...(options.memoryHighPercent === undefined ? {} : { highPercent: options.memoryHighPercent }),
  });
}
