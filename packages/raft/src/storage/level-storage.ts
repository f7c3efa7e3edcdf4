// StorageEngine on one LevelDB per process, shared by every Raft group the process hosts (as
// RabbitMQ's Ra shares one WAL). Hard state, entries and snapshot records of all groups go
// through one group commit: one synced batch per event-loop turn (see group-commit.ts). Snapshot
// data lives in files (snapshot-files.ts). Every record carries a checksum: a torn or corrupted
// log tail is dropped on load and reported, never trusted.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ClassicLevel, type ChainedBatch } from 'classic-level';
import type {
  Entry,
  GroupId,
  GroupStorage,
  HardState,
  LoadOptions,
  RestoredState,
  Snapshot,
  SnapshotData,
  SnapshotSink,
  SnapshotMeta,
  StorageDamage,
  StorageEngine,
} from '../types.js';
import { GroupCommit } from './group-commit.js';
import { GroupKeys, REGISTRY_END, REGISTRY_START, groupOfRegistryKey } from './level-keys.js';
import { LogSpan, type IndexRange } from './log-span.js';
import { OpGate } from './op-gate.js';
import {
  decodeEntryValue,
  decodeHardStateOrNull,
  decodeSnapshotRecord,
  EntryValueScratch,
  encodeHardState,
  encodeSnapshotRecord,
  type SnapshotRecord,
} from './record-codec.js';
import { SnapshotFiles, type StoredSnapshotFile, syncDirectory } from './snapshot-files.js';
import { StorageError } from './storage-error.js';
import type { StorageStats } from './storage-stats.js';

type Db = ClassicLevel<Buffer, Buffer>;
type Batch = ChainedBatch<Db, Buffer, Buffer>;
/** Plans one call against the group's span and adds its writes to the batch. */
type Fill = (span: LogSpan, batch: Batch) => void;
/** Whether a call needs an fsync, or how to decide it when it is staged. */
type MustSync = boolean | (() => boolean);

/** Why load dropped the tail of a group's log, or refused to load it. */
export type TornTailReason =
  | 'checksum'
  | 'gap'
  | 'term'
  | 'snapshot'
  | 'snapshot-kept'
  | 'hard-state-lost';

export interface TornTailReport {
  readonly group: GroupId;
  /**
   * Index of the first dropped entry (the first one that failed); 1 for reason `snapshot` (a
   * snapshot file failed its checksum: the state it held and the entries after it are gone) and
   * for `snapshot-kept` (the same, in a load that may not drop it: nothing was dropped, and
   * the load fails `corrupt`); 0 for `hard-state-lost` (the hard state record and its copy
   * both fail their checksums: nothing is dropped, the load fails `corrupt`).
   */
  readonly firstDroppedIndex: number;
  readonly droppedEntries: number;
  readonly reason: TornTailReason;
}

export interface LevelStorageOptions {
  /**
   * Backpressure: bytes staged and not yet durable above which calls fail `busy`. Default 64 MiB.
   */
  readonly pendingBytesMax?: number;
  /** A batch stops taking calls once it holds this many bytes. Default 16 MiB. */
  readonly batchBytesMax?: number;
  /**
   * LevelDB memtable size in bytes. Default 4 MiB (LevelDB's own): every logged payload is
   * copied into the memtable, and a full one stays in memory beside its successor until it is
   * written out, so this costs up to twice its size in native memory (16 MiB held `mq serve`'s
   * peak RSS about 45 MiB higher in `npm run bench -- compare`).
   */
  readonly writeBufferBytes?: number;
  /** Told about every torn tail load drops (also counted in `stats().tornEntriesDropped`). */
  readonly onTornTail?: (report: TornTailReport) => void;
  /**
   * Told when load found a group's hard state record unreadable and restored it from its copy
   * (also counted in `stats().hardStatesRestored`).
   */
  readonly onHardStateRestored?: (group: GroupId) => void;
  /**
   * Test hook: asked before each batch write and each reopen. A fault fails the write as the
   * medium would (ENOSPC, EIO): before anything is written, or, when `written`, after the batch
   * was written and synced (a failure reported for a write that reached the disk). A reopen
   * fails before it closes anything (LevelDB's open writes a table, a log and a manifest).
   */
  readonly writeFault?: () => WriteFault | null;
}

/** A failure the `writeFault` hook injects into one batch write. */
export interface WriteFault {
  readonly error: Error;
  readonly written: boolean;
}

const EMPTY = Buffer.alloc(0);
const EMPTY_HARD_STATE: HardState = { term: 0, vote: null, commit: 0 };
const CALL_OVERHEAD_BYTES = 64;
const ENTRY_OVERHEAD_BYTES = 48;
const ITERATOR_CHUNK = 1024;

/**
 * Bytes of entries a group writes between two compactions of the log ranges its snapshots
 * dropped (see dropCovered). Each forced compaction flushes LevelDB's memtable, so it is not
 * run per snapshot; below this, LevelDB's own compactions keep up with the dead entries.
 */
const COMPACT_AFTER_BYTES = 16 * 1024 * 1024;

/**
 * Runs LevelDB range compactions one at a time: each holds a thread of libuv's pool while it
 * waits for LevelDB's single compaction thread, and that pool also runs every LevelDB write and
 * file call, so several groups compacting at once would stall the whole member.
 */
class Compactor {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db) {}

  /** Compacts keys in [gte, lt]; settles when done (never rejects: it only reclaims space). */
  compact(gte: Buffer, lt: Buffer): Promise<void> {
    this.chain = this.chain.then(() => this.db.compactRange(gte, lt)).then(noop, noop);
    return this.chain;
  }
}

/** What the engine shares with its group handles. */
interface EngineContext {
  readonly db: Db;
  readonly compactor: Compactor;
  readonly commit: GroupCommit<Batch>;
  readonly files: SnapshotFiles;
  /**
   * Entry values are encoded here: a batch's put copies each into the native batch at once
   * (classic-level's batch_put), and abstract-level keeps a put's value only for `write` event
   * listeners, which this database never has.
   */
  readonly values: EntryValueScratch;
  readonly onTornTail: ((report: TornTailReport) => void) | undefined;
  readonly onHardStateRestored: ((group: GroupId) => void) | undefined;
  /** Throws StorageError `closed` after close(). */
  check(): void;
}

export class LevelStorageEngine implements StorageEngine {
  private readonly handles = new Map<GroupId, LevelGroupStorage>();
  private readonly context: EngineContext;
  private readonly commit: GroupCommit<Batch>;
  private closed = false;

  private constructor(
    readonly directory: string,
    private readonly db: Db,
    private readonly options: LevelStorageOptions,
  ) {
    const pendingBytesMax = options.pendingBytesMax ?? 64 * 1024 * 1024;
    const batchBytesMax = Math.min(options.batchBytesMax ?? 16 * 1024 * 1024, pendingBytesMax);
    this.commit = new GroupCommit<Batch>(
      {
        create: () => db.batch(),
        write: async (batch, sync) => {
          const fault = options.writeFault?.() ?? null;
          if (fault !== null && !fault.written) throw fault.error;
          await batch.write({ sync });
          if (fault !== null) throw fault.error;
        },
        discard: (batch) => void batch.close().catch(() => undefined),
      },
      { pendingBytesMax, batchBytesMax, autoFlush: true, nowMs: () => performance.now() },
    );
    this.context = {
      db,
      compactor: new Compactor(db),
      commit: this.commit,
      files: new SnapshotFiles(join(directory, 'snapshots')),
      values: new EntryValueScratch(),
      onTornTail: options.onTornTail,
      onHardStateRestored: options.onHardStateRestored,
      check: () => {
        if (this.closed) throw new StorageError('closed', 'engine closed');
      },
    };
  }

  /**
   * Opens (creating if missing) the store in `directory`: LevelDB in `<directory>/log`, snapshot
   * files in `<directory>/snapshots/<group>/`. One per process; rejects if LevelDB is locked.
   */
  static async open(
    directory: string,
    options: LevelStorageOptions = {},
  ): Promise<LevelStorageEngine> {
    await mkdir(join(directory, 'snapshots'), { recursive: true });
    await syncDirectory(directory);
    const db: Db = new ClassicLevel<Buffer, Buffer>(join(directory, 'log'), {
      keyEncoding: 'buffer',
      valueEncoding: 'buffer',
      writeBufferSize: options.writeBufferBytes ?? 4 * 1024 * 1024,
    });
    await db.open();
    return new LevelStorageEngine(directory, db, options);
  }

  /** The storage of group `id` (1-512 UTF-8 bytes, no NUL); the same object for the same id. */
  group(id: GroupId): GroupStorage {
    let handle = this.handles.get(id);
    if (!handle) {
      handle = new LevelGroupStorage(id, this.context);
      this.handles.set(id, handle);
    }
    return handle;
  }

  /** Groups with state on disk, in byte order. */
  async groups(): Promise<GroupId[]> {
    this.context.check();
    const keys = await this.db.keys({ gte: REGISTRY_START, lt: REGISTRY_END }).all();
    return keys.map(groupOfRegistryKey);
  }

  /**
   * Waits for snapshot records in flight to be staged and for staged writes to be durable, then
   * closes LevelDB. Later calls fail `closed`.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.handles.values()].map((handle) => handle.recordsStaged()));
    await this.commit.barrier().catch(() => undefined);
    await Promise.all([...this.handles.values()].map((handle) => handle.coveredDropped()));
    this.closed = true;
    await this.db.close();
  }

  stats(): StorageStats {
    return this.commit.stats.snapshot(this.commit.pendingBytes, this.commit.pendingCalls);
  }

  /** The error every write is refused with since a write failed, else null. */
  failure(): StorageError | null {
    return this.commit.failed;
  }

  /**
   * Writable again after a failed write, by closing and reopening LevelDB (see
   * StorageEngine.reopen). Why reopen rather than retry: after a failed write or fsync nobody
   * knows what the log file holds (the batch may be whole, torn or absent; after a failed
   * fsync the kernel may have dropped the dirty pages while reads still return them), and
   * LevelDB itself refuses every write once a sync failed. Opening replays its log and writes
   * what it recovers into a new table and a new manifest, both fsynced (with the directory)
   * before open() resolves, so whatever load() reads afterwards is durable, whether or not the
   * failed batch is among it. Each group then plans its writes against that, never against
   * the in-memory plan made before the failure. Rejects while the disk still refuses (open
   * writes a table, a log and a manifest), leaving the engine refusing writes.
   */
  async reopen(): Promise<void> {
    this.context.check();
    const fault = this.options.writeFault?.() ?? null;
    if (fault !== null) throw fault.error;
    const handles = [...this.handles.values()];
    await Promise.all(handles.map((handle) => handle.recordsStaged()));
    await this.commit.barrier().catch(() => undefined);
    await Promise.all(handles.map((handle) => handle.coveredDropped()));
    await this.db.close();
    await this.db.open();
    this.commit.reset();
    for (const handle of handles) handle.forget();
  }
}

class LevelGroupStorage implements GroupStorage {
  private readonly keys: GroupKeys;
  private readonly gate = new OpGate();
  /** Null until load(): writes are planned against what is stored. */
  private span: LogSpan | null = null;
  private registered = false;
  /** File of the latest staged snapshot record. */
  private snapshotFile: string | null = null;
  /** The last hard state staged (or loaded): a commit-only change needs no fsync. */
  private lastHardState: HardState = EMPTY_HARD_STATE;
  /** The hard state the registry's copy holds (staged or loaded), compared without commit. */
  private lastCopy: HardState = EMPTY_HARD_STATE;
  /** Settles when every snapshot record asked for so far is staged (never rejects). */
  private recordChain: Promise<void> = Promise.resolve();
  /** Settles when the entries of every durable snapshot record so far are dropped (no reject). */
  private dropChain: Promise<void> = Promise.resolve();
  /** Entry bytes saved since the dropped log was last compacted, and where that log begins. */
  private bytesSinceCompaction = 0;
  private compactFrom: number | null = null;

  constructor(
    readonly group: GroupId,
    private readonly context: EngineContext,
  ) {
    this.keys = new GroupKeys(group);
  }

  /**
   * Reads the group once everything staged before is durable. Entries that fail their checksum,
   * leave a gap or lower the term are dropped from there on, deleted durably and reported; the
   * commit index is clamped to what remains. A hard state record that fails its checksum is
   * restored from its copy (see `readHardState`). Rejects `corrupt` when both the hard state and
   * its copy are bad, or the snapshot fails its checksum (dropping those would be unsafe). Call
   * it before writing.
   */
  load(options: LoadOptions = {}): Promise<RestoredState> {
    return this.held(async () => {
      await this.settled();
      const { db, files } = this.context;
      const [hardStateValue, snapshotValue, registryValue] = await db.getMany([
        this.keys.hardState,
        this.keys.snapshot,
        this.keys.registry,
      ]);
      const read = this.readHardState(hardStateValue, registryValue);
      let hardState = read.hardState;
      let snapshot: Snapshot | null = null;
      let snapshotFile: string | null = null;
      if (snapshotValue) {
        const record = this.decodeRecord(snapshotValue, options);
        const data = record === null ? null : await this.openSnapshotFile(record, options);
        if (data === null) return this.dropCorruptSnapshot(hardState, record?.meta ?? null);
        snapshot = { meta: record!.meta, data };
        snapshotFile = record!.file;
      }
      const scan = await this.scanLog(snapshot?.meta.index ?? 0, snapshot?.meta.term ?? 0);
      const lastEntry = scan.entries[scan.entries.length - 1];
      const lastIndex = lastEntry ? lastEntry.index : (snapshot?.meta.index ?? 0);
      if (hardState.commit > lastIndex) hardState = { ...hardState, commit: lastIndex };
      if (scan.lost !== null) {
        hardState = { ...hardState, damage: mergeDamage(hardState, scan.lost) };
      }
      // One batch: the mark must never be lost while the evidence for it is already gone, and
      // the record and its copy never disagree on term, vote or damage.
      const rewrite = scan.lost !== null || read.restored;
      const repair = {
        hardState: rewrite ? hardState : null,
        copy: rewrite || read.copyStale ? hardState : null,
      };
      if (scan.deleteKeys.length > 0 || repair.copy !== null) {
        await this.repairKeys(scan.deleteKeys, repair.hardState, repair.copy);
      }
      if (read.restored) this.reportRestored();
      await files.removeAllBut(this.group, snapshotFile);
      this.span = LogSpan.of(snapshot?.meta.index ?? 0, snapshot?.meta.term ?? 0, scan.entries);
      this.lastHardState = hardState;
      this.lastCopy = hardState;
      this.registered = registryValue !== undefined || repair.copy !== null;
      this.snapshotFile = snapshotFile;
      return { hardState, snapshot, entries: scan.entries };
    });
  }

  /** The snapshot record; null when it fails its checksum and `dropCorruptSnapshot` allows. */
  private decodeRecord(value: Buffer, options: LoadOptions): SnapshotRecord | null {
    try {
      return decodeSnapshotRecord(this.group, value);
    } catch (error) {
      return this.corruptSnapshot(error, options);
    }
  }

  /** Counts a corrupt snapshot; null to drop it, or rethrows `error` with a report. */
  private corruptSnapshot(error: unknown, options: LoadOptions): null {
    if (!(error instanceof StorageError) || error.kind !== 'corrupt') throw error;
    this.context.commit.stats.snapshotsCorrupt++;
    if (options.dropCorruptSnapshot === true) return null;
    const report = { firstDroppedIndex: 1, droppedEntries: 0 } as const;
    this.context.onTornTail?.({ group: this.group, ...report, reason: 'snapshot-kept' });
    throw error;
  }

  /**
   * The snapshot's data, checked whole and then read from its file when asked (format 1: read
   * into memory); null when it fails its checksum and `dropCorruptSnapshot` allows.
   */
  private async openSnapshotFile(
    record: SnapshotRecord,
    options: LoadOptions,
  ): Promise<SnapshotData | null> {
    try {
      return await this.context.files.open(this.group, { ...record, format: record.format ?? 1 });
    } catch (error) {
      return this.corruptSnapshot(error, options);
    }
  }

  /**
   * The snapshot (its file, or its record: `meta` null) failed its checksum: the state up to
   * its index is lost here, and the entries after it are useless without it. Deletes the
   * snapshot record and every entry, with a hard state whose `damage` covers the lost log's end
   * (never below the snapshot's index and term), in one durable batch, then the files; the
   * group starts empty and a peer sends it a snapshot. Commit goes to 0: nothing is applied.
   */
  private async dropCorruptSnapshot(
    stored: HardState,
    meta: SnapshotMeta | null,
  ): Promise<RestoredState> {
    const lost =
      meta === null ? await this.lostWithRecord(stored) : await this.lostAfter(stored, meta);
    const hardState: HardState = { ...stored, commit: 0, damage: lost.damage };
    // The record and its copy get the mark together (see readHardState).
    await this.repairKeys([this.keys.snapshot, ...lost.keys], hardState, hardState);
    this.lastCopy = hardState;
    await this.context.files.removeAllBut(this.group, null);
    this.context.onTornTail?.({
      group: this.group,
      firstDroppedIndex: 1,
      droppedEntries: lost.entries,
      reason: 'snapshot',
    });
    this.span = LogSpan.of(0, 0, []);
    this.lastHardState = hardState;
    this.registered = true; // the registry record is kept: the group still has state here
    this.snapshotFile = null;
    return { hardState, snapshot: null, entries: [] };
  }

  /** The entry keys to delete with a snapshot at `meta`, and the end of the log lost. */
  private async lostAfter(stored: HardState, meta: SnapshotMeta): Promise<LostLog> {
    const scan = await this.scanLog(meta.index, meta.term);
    const lastEntry = scan.entries[scan.entries.length - 1];
    let damage = mergeDamage(stored, { lastIndex: meta.index, lastTerm: meta.term });
    const withDamage = (): HardState => ({ ...stored, damage });
    if (lastEntry !== undefined) {
      damage = mergeDamage(withDamage(), { lastIndex: lastEntry.index, lastTerm: lastEntry.term });
    }
    if (scan.lost !== null) damage = mergeDamage(withDamage(), scan.lost);
    const keys = [...scan.deleteKeys];
    for (const entry of scan.entries) keys.push(this.keys.entry(entry.index));
    return { keys, entries: scan.entries.length, damage };
  }

  /**
   * Every entry key, when the snapshot record is unreadable: its index is unknown. No stored
   * entry has a term above the hard state's, so any log ending in a later term is at least as
   * up-to-date as the lost one; none ending in that term is (index bound: the largest).
   */
  private async lostWithRecord(stored: HardState): Promise<LostLog> {
    const keys: Buffer[] = [];
    const range = { gte: this.keys.entriesStart, lt: this.keys.entriesEnd, values: false };
    const iterator = this.context.db.iterator(range);
    try {
      for (;;) {
        const chunk = await iterator.nextv(ITERATOR_CHUNK);
        if (chunk.length === 0) break;
        for (const [key] of chunk) keys.push(key);
      }
    } finally {
      await iterator.close();
    }
    const end = { lastIndex: Number.MAX_SAFE_INTEGER, lastTerm: stored.term };
    return { keys, entries: keys.length, damage: mergeDamage(stored, end) };
  }

  /**
   * The group's hard state, from its record or, when that is unreadable, from the copy the
   * registry value holds. Why a copy and not a repair from peers: the term and the vote are
   * this replica's own promises, and no peer can say what they were. A replica that forgot its
   * vote could vote twice in a term, electing two leaders; one that forgot its term could take
   * part in a term it had already voted in. Peers cannot bound them either: the replica may
   * have started the election of its last term itself, and a term learned from a peer after the
   * restart may come from a message sent before that vote (a message delayed in the network).
   * So the safety-critical part (term, vote, damage mark) is written twice, atomically in one
   * batch, under keys far apart in the store (the registry range holds no log), whenever it
   * changes: rarely (elections, votes, bad bytes found, a repair ended), never per entry. Commit
   * is not copied each time it moves; the copy's older commit index is still a committed index
   * (commit never goes back), and the leader tells the rest again. A store written before the
   * copy existed has an empty registry value: load writes the copy from the good record.
   */
  private readHardState(
    value: Buffer | undefined,
    copyValue: Buffer | undefined,
  ): { hardState: HardState; restored: boolean; copyStale: boolean } {
    const hasCopy = copyValue !== undefined && copyValue.length > 0;
    const copy = hasCopy ? decodeHardStateOrNull(copyValue) : null;
    const record = value === undefined ? EMPTY_HARD_STATE : decodeHardStateOrNull(value);
    if (record !== null && !(value === undefined && copy !== null)) {
      const current = copy === null ? value === undefined : sameSafetyState(copy, record);
      return { hardState: record, restored: false, copyStale: !current };
    }
    if (copy === null) {
      // Reported at every load attempt (the member retries); the listener logs it once.
      this.context.commit.stats.hardStatesLost++;
      this.reportTorn(0, 'hard-state-lost', 0);
      throw new StorageError(
        'corrupt',
        `group ${this.group}: hard state fails its checksum and has no good copy; its vote ` +
          'is unknown, and voting again could elect two leaders in one term, so the group ' +
          'stays stopped (move its replica to another member to rebuild it from peers)',
      );
    }
    return { hardState: copy, restored: true, copyStale: false };
  }

  /**
   * Writes `hardState` and `entries` (see GroupStorage.save). A call with no entries whose hard
   * state differs from the last one only in `commit` is written without its own fsync (etcd's
   * MustSync): losing a commit index is harmless, it is learned again from the leader.
   */
  save(hardState: HardState | null, entries: readonly Entry[]): Promise<void> {
    let bytes = CALL_OVERHEAD_BYTES;
    for (const entry of entries) bytes += entry.data.length + ENTRY_OVERHEAD_BYTES;
    this.bytesSinceCompaction += bytes - CALL_OVERHEAD_BYTES;
    // Decided when staged, in staging order: a refused call must not count as the last state.
    const mustSync = (): boolean =>
      entries.length > 0 || (hardState !== null && !this.sameTermAndVote(hardState));
    return this.stage(bytes, entries.length, mustSync, (span, batch) => {
      const truncated = span.append(entries);
      if (hardState) {
        const encoded = encodeHardState(hardState);
        batch.put(this.keys.hardState, encoded);
        this.lastHardState = hardState;
        if (!sameSafetyState(hardState, this.lastCopy)) this.putCopy(batch, encoded, hardState);
      }
      for (const entry of entries) {
        batch.put(this.keys.entry(entry.index), this.context.values.encode(entry));
      }
      for (let index = truncated.from; index <= truncated.to; index++) {
        batch.del(this.keys.entry(index));
      }
    });
  }

  /**
   * Stores a snapshot without holding up the group's later writes: the snapshot file is written
   * and fsynced in the background, then its record and the deletion of the entries it covers
   * go into a group-commit batch (records of one group in call order). The promise resolves
   * once the record is durable. When the stored entry at the snapshot's index has another term
   * (Raft figure 13), the conflicting tail is deleted at once, in call order, so later entries
   * never sit durably next to it.
   */
  saveSnapshot(snapshot: Snapshot): Promise<SnapshotData> {
    const { index, term } = snapshot.meta;
    return this.recordSnapshot(snapshot.meta, () => {
      return this.context.files.write(this.group, index, term, snapshot.data);
    });
  }

  /**
   * Writes the chunks to a new snapshot file as they come (frames, synced as it grows); `finish`
   * ends the file and records it as saveSnapshot does; `abort` removes it. A finish refused
   * before the file was ended (the engine failed: a full disk) removes it too: it would hold its
   * descriptor and its space until the process exits.
   */
  beginSnapshot(meta: SnapshotMeta): SnapshotSink {
    const writer = this.context.files.begin(this.group, meta.index, meta.term);
    writer.catch(noop); // seen by the first append or finish
    const abort = (): Promise<void> => writer.then((file) => file.abort(), noop);
    return {
      append: (chunk) => writer.then((file) => file.append(chunk)),
      // abort removes only the temporary file and is idempotent: after the file was ended
      // (renamed into place) it does nothing.
      finish: () =>
        this.recordSnapshot(meta, () => writer.then((file) => file.finish())).catch(
          async (error: unknown) => {
            await abort();
            throw error;
          },
        ),
      abort,
    };
  }

  /** Plans the snapshot in call order, writes its file (`write`), then stages its record. */
  private recordSnapshot(
    meta: SnapshotMeta,
    write: () => Promise<StoredSnapshotFile>,
  ): Promise<SnapshotData> {
    let recorded: Promise<SnapshotData> | null = null;
    const conflictDeleted = this.stage(CALL_OVERHEAD_BYTES, 0, true, (span, batch) => {
      const late = this.planSnapshot(span, batch, meta.index, meta.term);
      recorded = this.chainRecord(meta, write(), late);
    });
    return conflictDeleted.then(() => recorded!);
  }

  /** Drops entries up to `index`, which must not pass the snapshot (so nothing is left to drop). */
  compact(index: number): Promise<void> {
    return this.stage(CALL_OVERHEAD_BYTES, 0, false, (span) => span.checkCompact(index));
  }

  /** Deletes every record and snapshot file of the group, durably. The handle stays usable. */
  destroy(): Promise<void> {
    return this.held(async () => {
      await this.settled();
      const range = { gte: this.keys.groupStart, lt: this.keys.groupEnd };
      const keys = await this.context.db.keys(range).all();
      keys.push(this.keys.registry);
      await this.repairKeys(keys, null, null);
      this.span = new LogSpan();
      this.lastHardState = EMPTY_HARD_STATE;
      this.lastCopy = EMPTY_HARD_STATE;
      this.registered = false;
      this.snapshotFile = null;
      await this.context.files.removeGroup(this.group);
    });
  }

  /**
   * Forgets what the group planned against (the engine was reopened): the next call must be
   * load(), which reads the group again; a write before it fails an assertion.
   */
  forget(): void {
    assert(!this.gate.busy, `group ${this.group}: reopened while a call is running`);
    this.span = null;
    this.lastHardState = EMPTY_HARD_STATE;
    this.lastCopy = EMPTY_HARD_STATE;
    this.snapshotFile = null;
  }

  /** Settles once every snapshot record asked for so far is staged (or failed). */
  recordsStaged(): Promise<void> {
    return this.recordChain;
  }

  /** Settles once the entries covered by every staged snapshot record are dropped (or failed). */
  coveredDropped(): Promise<void> {
    return this.dropChain;
  }

  /** Waits until every write of the group asked for so far is durable and every drop is done. */
  private async settled(): Promise<void> {
    await this.recordChain;
    await this.context.commit.barrier();
    await this.dropChain;
  }

  /**
   * Applies a snapshot to the span. Deletes now (into `batch`) a stored tail that conflicts with
   * it: those entries are not in the committed log (Log Matching), so dropping them early is
   * safe, and it must happen before later entries are written. Returns the covered entries,
   * which are deleted only with the snapshot's record (they may be needed until then).
   */
  private planSnapshot(span: LogSpan, batch: Batch, index: number, term: number): IndexRange {
    const storedTerm = index >= span.firstIndex ? span.termAt(index) : undefined;
    const conflict = storedTerm !== undefined && storedTerm !== term;
    const lastIndex = span.lastIndex;
    const dropped = span.applySnapshot(index, term);
    if (!conflict) return dropped;
    for (let i = index; i <= lastIndex; i++) batch.del(this.keys.entry(i));
    return { from: dropped.from, to: index - 1 };
  }

  /** Stages the record once the file is durable and earlier records are staged. */
  private chainRecord(
    meta: SnapshotMeta,
    file: Promise<StoredSnapshotFile>,
    covered: IndexRange,
  ): Promise<SnapshotData> {
    const staged = Promise.all([this.recordChain, file]).then(([, written]) => ({
      durable: this.stageRecord(meta, written, covered),
    }));
    this.recordChain = staged.then(noop, noop);
    const done = staged.then(({ durable }) => durable);
    done.catch(noop); // the caller may never see it if the conflict deletion failed first
    return done;
  }

  private stageRecord(
    meta: SnapshotMeta,
    written: StoredSnapshotFile,
    covered: IndexRange,
  ): Promise<SnapshotData> {
    this.context.check();
    const failure = this.context.commit.failed;
    if (failure) return Promise.reject(failure);
    const record = encodeSnapshotRecord({
      meta,
      file: written.file,
      format: written.format,
      dataBytes: written.dataBytes,
      dataCrc: written.dataCrc,
    });
    const previousFile = this.snapshotFile;
    this.snapshotFile = written.file;
    this.context.commit.stats.snapshotsWritten++;
    const durable = this.context.commit.submit(CALL_OVERHEAD_BYTES + record.length, 0, (batch) => {
      batch.put(this.keys.snapshot, record);
      this.register(batch);
    });
    const dropped = durable.then(() => this.dropCovered(covered));
    this.dropChain = Promise.all([this.dropChain, dropped]).then(noop, noop);
    return durable.then(() => {
      if (previousFile !== null && previousFile !== written.file) {
        this.removeSuperseded(previousFile);
      }
      return this.context.files.dataOf(this.group, written);
    });
  }

  /**
   * Removes a superseded snapshot file on a later turn (close and destroy wait for it): whoever
   * reads the old one (a leader sending it, RaftCore holding its data) takes the new one's data
   * when the save resolves, in this turn, so nothing reads a file that is gone.
   */
  private removeSuperseded(file: string): void {
    const turn = new Promise<void>((resolve) => setImmediate(resolve));
    const removed = turn.then(() => this.context.files.remove(this.group, file));
    this.dropChain = Promise.all([this.dropChain, removed]).then(noop, noop);
  }

  /**
   * Deletes the entries a durable snapshot record covers, as one range in LevelDB's own thread:
   * deleting key by key from a batch costs about half a microsecond of this thread per entry and
   * lands in the commit path (a 150,000-entry log held up every append for 130 ms). Not synced
   * and not atomic: entries left behind by a crash are below the snapshot, and load() deletes
   * them. A failure leaves them for load() the same way, so it is not an error of the group.
   *
   * The dropped ranges are then compacted, every COMPACT_AFTER_BYTES of log: a delete in
   * LevelDB is only a tombstone, and the dead entries (payloads included) stay in its tables
   * until a compaction reaches the bottom level. Left to LevelDB's size triggers, a level holds
   * up to ten times the one above, so the store kept hundreds of MiB of dead log (about 40% of
   * what was ever written), compactions grew with it, and the tables they read were mapped
   * into the process (RSS). Compacting what snapshots freed keeps the store near one snapshot
   * interval of log.
   */
  private dropCovered(covered: IndexRange): Promise<void> {
    if (covered.from > covered.to) return Promise.resolve();
    const range = { gte: this.keys.entry(covered.from), lt: this.keys.entry(covered.to + 1) };
    const dropped = this.context.db.clear(range).then(noop, noop);
    this.compactFrom ??= covered.from;
    if (this.bytesSinceCompaction < COMPACT_AFTER_BYTES) return dropped;
    const from = this.keys.entry(this.compactFrom);
    this.compactFrom = null;
    this.bytesSinceCompaction = 0;
    return dropped.then(() => this.context.compactor.compact(from, range.lt));
  }

  /** Reads the stored log after the snapshot, keeping the valid contiguous prefix. */
  private async scanLog(
    snapshotIndex: number,
    snapshotTerm: number,
  ): Promise<LogScan> {
    const entries: Entry[] = [];
    const deleteKeys: Buffer[] = [];
    let last: { index: number; value: Buffer } | null = null;
    let previousIndex = snapshotIndex;
    let previousTerm = snapshotTerm;
    let torn: { index: number; reason: TornTailReason } | null = null;
    let droppedEntries = 0;
    const range = { gte: this.keys.entriesStart, lt: this.keys.entriesEnd };
    const iterator = this.context.db.iterator(range);
    try {
      for (;;) {
        const chunk = await iterator.nextv(ITERATOR_CHUNK);
        if (chunk.length === 0) break;
        for (const [key, value] of chunk) {
          const index = this.keys.entryIndex(key);
          if (index <= snapshotIndex) {
            deleteKeys.push(key); // covered by the snapshot: a leftover
            continue;
          }
          const entry = torn ? null : decodeEntryValue(index, value);
          if (!torn) {
            const reason = entryFault(entry, index, previousIndex, previousTerm);
            if (reason === null) {
              entries.push(entry!);
              previousIndex = index;
              previousTerm = entry!.term;
              continue;
            }
            torn = { index, reason };
          }
          // At or past the torn point: never trusted, deleted so it cannot resurface.
          deleteKeys.push(key);
          droppedEntries++;
          last = { index, value };
        }
      }
    } finally {
      await iterator.close();
    }
    if (torn) this.reportTorn(torn.index, torn.reason, droppedEntries);
    // Bad bytes (not a stale tail left by a snapshot): what was dropped may have been
    // acknowledged. The lost log ended at the last key; its term is read off that record when
    // it is intact, else bounded by the hard state's term (no entry is stored above it).
    const lost =
      torn?.reason === 'checksum' && last !== null
        ? {
            lastIndex: last.index,
            lastTerm: decodeEntryValue(last.index, last.value)?.term ?? Number.NaN,
          }
        : null;
    return { entries, deleteKeys, lost };
  }

  private reportTorn(
    firstDroppedIndex: number,
    reason: TornTailReason,
    droppedEntries: number,
  ): void {
    this.context.commit.stats.tornEntriesDropped += droppedEntries;
    this.context.onTornTail?.({ group: this.group, firstDroppedIndex, droppedEntries, reason });
  }

  private reportRestored(): void {
    this.context.commit.stats.hardStatesRestored++;
    this.context.onHardStateRestored?.(this.group);
  }

  /**
   * Deletes keys in one durable batch (maintenance: not subject to the backpressure bound),
   * with `hardState` and the registry's `copy` of it when given.
   */
  private repairKeys(
    keys: readonly Buffer[],
    hardState: HardState | null,
    copy: HardState | null,
  ): Promise<void> {
    const failure = this.context.commit.failed;
    if (failure) return Promise.reject(failure);
    return this.context.commit.submit(CALL_OVERHEAD_BYTES + keys.length * 32, 0, (batch) => {
      for (const key of keys) batch.del(key);
      if (hardState !== null) batch.put(this.keys.hardState, encodeHardState(hardState));
      if (copy !== null) batch.put(this.keys.registry, encodeHardState(copy));
    });
  }

  /** Stages the copy of a hard state; it also registers the group. */
  private putCopy(batch: Batch, encoded: Buffer, hardState: HardState): void {
    batch.put(this.keys.registry, encoded);
    this.lastCopy = hardState;
    this.registered = true;
  }

  private stage(bytes: number, entries: number, mustSync: MustSync, fill: Fill): Promise<void> {
    try {
      this.context.check();
      this.context.commit.admit(bytes);
    } catch (error) {
      return Promise.reject(error);
    }
    if (!this.gate.busy) return this.submit(bytes, entries, mustSync, fill);
    return new Promise<void>((resolve, reject) => {
      this.gate.run(() => this.submit(bytes, entries, mustSync, fill).then(resolve, reject));
    });
  }

  private submit(bytes: number, entries: number, mustSync: MustSync, fill: Fill): Promise<void> {
    const span = this.requireSpan();
    const failure = this.context.commit.failed;
    if (failure) return Promise.reject(failure);
    const sync = typeof mustSync === 'function' ? mustSync() : mustSync;
    return this.context.commit.submit(
      bytes,
      entries,
      (batch) => {
        fill(span, batch);
        this.register(batch);
      },
      sync,
    );
  }

  /** The first write of a group also records it in the registry, atomically with the write. */
  private register(batch: Batch): void {
    if (this.registered) return;
    batch.put(this.keys.registry, EMPTY);
    this.registered = true;
  }

  private sameTermAndVote(hardState: HardState): boolean {
    return hardState.term === this.lastHardState.term && hardState.vote === this.lastHardState.vote;
  }

  private requireSpan(): LogSpan {
    assert(this.span !== null, `group ${this.group}: load() before writing`);
    return this.span;
  }

  /** Runs `op` holding the group's later calls until it settles. */
  private held<T>(op: () => Promise<T>): Promise<T> {
    try {
      this.context.check();
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<T>((resolve, reject) => {
      this.gate.runHeld((release) => {
        op().then(
          (value) => {
            release();
            resolve(value);
          },
          (error: unknown) => {
            release();
            reject(error);
          },
        );
      });
    });
  }
}

/** What a dropped snapshot takes along: entry keys to delete, and the damage to record. */
interface LostLog {
  readonly keys: Buffer[];
  readonly entries: number;
  readonly damage: StorageDamage;
}

/** Why the entry stored at `index` cannot follow the kept log, or null when it can. */
interface LogScan {
  readonly entries: Entry[];
  readonly deleteKeys: Buffer[];
  /** The end of the log bad bytes took (lastTerm NaN when unreadable), or null. */
  readonly lost: { readonly lastIndex: number; readonly lastTerm: number } | null;
}

/**
 * The damage to record: the lost log's end (its term bounded by the hard state's when the last
 * record was unreadable), or an earlier damage not yet repaired where that ends higher.
 */
function mergeDamage(hardState: HardState, lost: LogScan['lost'] & object): StorageDamage {
  const lastTerm = Number.isNaN(lost.lastTerm) ? hardState.term : lost.lastTerm;
  const found = { lastIndex: lost.lastIndex, lastTerm };
  const earlier = hardState.damage ?? null;
  if (earlier === null || earlier.lastTerm < found.lastTerm) return found;
  if (earlier.lastTerm === found.lastTerm && earlier.lastIndex < found.lastIndex) return found;
  return earlier;
}

/** Whether two hard states agree on what must never be lost: term, vote and damage mark. */
function sameSafetyState(a: HardState, b: HardState): boolean {
  const x = a.damage ?? null;
  const y = b.damage ?? null;
  const sameDamage =
    x === y ||
    (x !== null && y !== null && x.lastIndex === y.lastIndex && x.lastTerm === y.lastTerm);
  return a.term === b.term && a.vote === b.vote && sameDamage;
}

function entryFault(
  entry: Entry | null,
  index: number,
  previousIndex: number,
  previousTerm: number,
): TornTailReason | null {
  if (entry === null) return 'checksum';
  if (index !== previousIndex + 1) return 'gap';
  if (entry.term < previousTerm) return 'term';
  return null;
}

function noop(): void {}
