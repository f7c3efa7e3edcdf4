// A spool replica's payloads on disk: an append-only store of segment files (NATS JetStream's
// message blocks, Kafka's log segments). The engine keeps a payload's location (segment number
// and offset in one safe integer) and its length; every read is checked against the record's
// checksum and seq (segment-record.ts) and goes through the member's payload cache.
//
// Writes: appends are buffered and written by `flush` as one gathered write, which the replica
// calls after each run of applied entries (a write per message cost a system call each on every
// replica, 2.6 us against 0.24 in runs of 64). A read or verify of a record not yet written
// flushes first.
//
// Durability: appends are not fsynced one by one. The Raft log holds every payload until a
// snapshot that no longer needs those entries is saved, and `sync` runs before such a snapshot is
// saved (spool-replica.ts). After a crash the log's entries past the snapshot are applied again
// and append their payloads anew, so a record past the last sync is never needed: a store opens
// a fresh head segment and never reads or repairs a torn tail.
//
// Reclaim: the store counts, per segment, the records the state references. A segment whose
// count falls to zero is retired, and deleted once a snapshot begun after that moment is saved:
// until then the saved snapshot may still point into it. No record is rewritten in place.
//
// Recovery by seq: a snapshot from another replica carries locations that mean nothing here, so
// after installing one the replica asks `recoverHeld` for the payloads its messages need. The
// store scans its segment files (retired ones too: they are deleted only once the next snapshot
// is saved), checks each wanted record, and the append that follows reuses the record in place.
// The seq index exists only during that scan: the store keeps no per-message state.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PAYLOAD_MISSING, PayloadError, assert } from '@spoolmq/engine';
import { StorageError } from '@spoolmq/raft';
import type { PayloadCache } from './payload-cache.js';
import type { HeldPayloadTaker, HeldScan, ReplicaPayloadStore } from './replica-payloads.js';
import { RECORD_HEADER_BYTES, checkRecord, encodeRecordHeader } from './segment-record.js';

export const SEGMENT_BYTES_DEFAULT = 64 * 1024 * 1024;
/** Offsets stay below this, so a location is `segment * LOCATION_SPAN + offset`. */
const LOCATION_SPAN = 2 ** 32;
/** Read descriptors kept open per store (older segments are reopened on demand). */
const READ_FDS_MAX = 8;
/** Bytes a recovery scan reads at a time (headers of small records come many to a read). */
const SCAN_BLOCK_BYTES = 1024 * 1024;
/** Appended records held for one write at most (two buffers each: IOV_MAX is 1,024). */
const PENDING_RECORDS_MAX = 256;
/** Appended bytes held for one write at most. */
const PENDING_BYTES_MAX = 1024 * 1024;
const ID_FILE = 'store-id';
const FORMAT_LINE = 'mq-payload-segments 1';
const SEGMENT_FILE = /^([0-9a-f]{8})\.seg$/;
const fdatasync = promisify(fs.fdatasync);

export interface SegmentStoreOptions {
  readonly dir: string;
  readonly cache: PayloadCache;
  /** A segment is closed once a record would take it past this many bytes (default 64 MiB). */
  readonly segmentBytesMax?: number;
  /** The file system's gathered write (default fs.writevSync): tests inject ENOSPC with it. */
  readonly writev?: (fd: number, buffers: Uint8Array[], position: number) => number;
}

interface Segment {
  readonly no: number;
  /** Bytes appended (for the head, the records not yet written included). */
  bytes: number;
  /** Records the state references, and their payload bytes. */
  live: number;
  liveBytes: number;
  /** Checkpoint count when it was retired; -1 while it may still gain references. */
  retiredAt: number;
}

/** Where a held-payload scan (recoverHeld) goes on: segment `no`, at `offset`. */
interface ScanPosition {
  readonly no: number;
  offset: number;
}

/** The block of a segment a held-payload scan has read: file offsets `start` to `end`. */
interface ScanBlock {
  readonly fd: number;
  /** The file's size when the step began. */
  readonly size: number;
  readonly bytes: Buffer;
  start: number;
  end: number;
}

/** Sizes of a store, bytes. */
export interface SegmentStoreStats {
  readonly segments: number;
  readonly diskBytes: number;
  readonly liveBytes: number;
  readonly liveRecords: number;
}

export class SegmentStore implements ReplicaPayloadStore {
  readonly id: string;
  private readonly dir: string;
  private readonly cache: PayloadCache;
  private readonly segmentBytesMax: number;
  private readonly writev: NonNullable<SegmentStoreOptions['writev']>;
  private readonly segments = new Map<number, Segment>();
  private head: Segment;
  private headFd: number;
  /** Closed segments' write descriptors, kept open until a sync has flushed them. */
  private rolledFds: number[] = [];
  /** Read descriptors of closed segments, oldest use first. */
  private readonly readFds = new Map<number, number>();
  private checkpoints = 0;
  /** Appends and reads go through the cache (setCaching). */
  private caching = true;
  private failure: Error | null = null;
  private closed = false;
  /** Header and payload of each record appended to the head since the last flush. */
  private pending: Uint8Array[] = [];
  /** Their bytes: the head's file ends at `head.bytes - pendingBytes`. */
  private pendingBytes = 0;
  /**
   * The held-payload scan under way (recoverHeld; a newer one ends an older one): until it is
   * done, saved snapshots delete no segment, so it reads every record it was started over.
   */
  private scanning: HeldScan | null = null;
  /** During recoverHeld: the record the next append of its seq reuses instead of writing. */
  private reusing: { readonly seq: number; readonly location: number } | null = null;

  private constructor(options: SegmentStoreOptions, id: string, nos: readonly number[]) {
    this.dir = options.dir;
    this.cache = options.cache;
    this.segmentBytesMax = options.segmentBytesMax ?? SEGMENT_BYTES_DEFAULT;
    this.writev = options.writev ?? fs.writevSync;
    assert(this.segmentBytesMax > RECORD_HEADER_BYTES, 'segment size too small');
    assert(this.segmentBytesMax < LOCATION_SPAN, 'segment size must stay below 4 GiB');
    this.id = id;
    for (const no of nos) {
      const bytes = fs.statSync(this.segmentPath(no)).size;
      this.segments.set(no, { no, bytes, live: 0, liveBytes: 0, retiredAt: -1 });
    }
    const headNo = nos.length === 0 ? 1 : Math.max(...nos) + 1;
    this.head = { no: headNo, bytes: 0, live: 0, liveBytes: 0, retiredAt: -1 };
    this.headFd = fs.openSync(this.segmentPath(headNo), 'wx+', 0o600);
    this.segments.set(headNo, this.head);
  }

  /**
   * Opens the store in `dir` (created when absent) with a fresh head segment. Throws Error with
   * one sentence when the directory holds another format, and what the file system throws.
   */
  static open(options: SegmentStoreOptions): SegmentStore {
    fs.mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    const id = readOrCreateId(options.dir);
    const nos: number[] = [];
    for (const name of fs.readdirSync(options.dir)) {
      const match = SEGMENT_FILE.exec(name);
      if (match !== null) nos.push(Number.parseInt(match[1]!, 16));
    }
    return new SegmentStore(options, id, nos);
  }

  /**
   * Appends `payload` as record `seq`; returns its location. The record is written by the next
   * flush (at once past PENDING_RECORDS_MAX or PENDING_BYTES_MAX); until then `payload` is held.
   * A write that fails (ENOSPC, EIO, a short write on a volume just filled) throws StorageError
   * `io` from the flush, and so does every later append and flush: the member recovers such a
   * failure in process (it restarts the spool's group, whose store then opens with a fresh head
   * segment and whose log applies those entries again), as it does LevelDB's.
   */
  append(seq: number, payload: Uint8Array): number {
    const reuse = this.reusing;
    if (reuse !== null && reuse.seq === seq) {
      // recoverHeld checked this record: it holds exactly these bytes. Not cached: `payload`
      // is a view into the scan's block.
      this.reusing = null;
      this.adopt(reuse.location, payload.byteLength);
      return reuse.location;
    }
    this.checkWritable();
    const recordBytes = RECORD_HEADER_BYTES + payload.byteLength;
    if (this.head.bytes > 0 && this.head.bytes + recordBytes > this.segmentBytesMax) this.roll();
    const head = this.head;
    const location = head.no * LOCATION_SPAN + head.bytes;
    this.pending.push(encodeRecordHeader(seq, payload), payload);
    this.pendingBytes += recordBytes;
    head.bytes += recordBytes;
    head.live++;
    head.liveBytes += payload.byteLength;
    if (this.caching) this.cache.put(this, location, payload);
    const full = this.pending.length >= 2 * PENDING_RECORDS_MAX;
    if (full || this.pendingBytes >= PENDING_BYTES_MAX) this.flush();
    return location;
  }

  /**
   * Writes the records appended since the last flush, in one gathered write at the head's end.
   * Throws StorageError `io` when the write fails or falls short (see append).
   */
  flush(): void {
    if (this.pendingBytes === 0 && this.failure === null) return;
    this.checkWritable();
    const buffers = this.pending;
    const bytes = this.pendingBytes;
    const position = this.head.bytes - bytes;
    this.pending = [];
    this.pendingBytes = 0;
    let written: number;
    try {
      written = this.writev(this.headFd, buffers, position);
    } catch (error) {
      throw this.failedBy(error);
    }
    if (written !== bytes) {
      // A short write leaves the head's end unknown: no later append may trust it.
      throw this.failed(`short write (${written} of ${bytes} bytes; is the volume full?)`);
    }
  }

  read(seq: number, location: number, byteLength: number): Uint8Array {
    if (location === PAYLOAD_MISSING) throw new PayloadError(seq, 'not fetched yet');
    const cached = this.cache.get(this, location);
    if (cached !== undefined && cached.byteLength === byteLength) return cached;
    const no = Math.floor(location / LOCATION_SPAN);
    const offset = location - no * LOCATION_SPAN;
    if (!this.segments.has(no)) throw new PayloadError(seq, `segment ${no} is gone`);
    const unwritten = this.unwrittenProblem(no, offset, byteLength);
    if (unwritten !== null) throw new PayloadError(seq, unwritten);
    // Its own buffer, not a slice of Node's shared pool: the cache keeps what it reads, and a
    // pooled slice would keep an 8 KiB slab alive (the cache would copy it out again).
    const record = Buffer.allocUnsafeSlow(RECORD_HEADER_BYTES + byteLength);
    let filled: number;
    try {
      filled = readFully(this.readFd(no), record, offset);
    } catch (error) {
      throw new PayloadError(seq, `read failed (${(error as Error).message})`);
    }
    const problem = checkRecord(record.subarray(0, filled), seq, byteLength);
    if (problem !== null) throw new PayloadError(seq, `${problem} at ${no}:${offset}`);
    // A plain Uint8Array view: callers compare and copy it as any payload.
    const start = record.byteOffset + RECORD_HEADER_BYTES;
    const payload = new Uint8Array(record.buffer, start, byteLength);
    if (this.caching) this.cache.put(this, location, payload);
    return payload;
  }

  recoverHeld(wanted: ReadonlyMap<number, number>, take: HeldPayloadTaker): HeldScan {
    const open = new Map(wanted);
    // Newest first: live records gather in newer segments (compaction moves them forward).
    const nos = [...this.segments.keys()].sort((a, b) => b - a);
    let at: ScanPosition | null = null;
    const scan: HeldScan = {
      step: (bytesMax) => {
        let budget = bytesMax;
        while (budget > 0) {
          if (this.scanning !== scan || this.closed || open.size === 0) {
            if (this.scanning === scan) this.scanning = null;
            return true;
          }
          if (at === null) {
            const no = nos.shift();
            if (no === undefined) return true;
            at = { no, offset: 0 };
          }
          // A segment deleted between steps (a snapshot was saved) is not read any more.
          const read = this.segments.has(at.no) ? this.scanSegment(at, open, take, budget) : null;
          if (read === null) at = null;
          else budget -= read;
        }
        return false;
      },
    };
    this.scanning = scan;
    return scan;
  }

  verify(seq: number, location: number, byteLength: number): string | null {
    if (location === PAYLOAD_MISSING) return 'no location';
    const no = Math.floor(location / LOCATION_SPAN);
    const offset = location - no * LOCATION_SPAN;
    if (!this.segments.has(no)) return `segment ${no} is gone`;
    const unwritten = this.unwrittenProblem(no, offset, byteLength);
    if (unwritten !== null) return unwritten;
    // Its own buffer, not a slice of Node's shared pool: the cache keeps what it reads, and a
    // pooled slice would keep an 8 KiB slab alive (the cache would copy it out again).
    const record = Buffer.allocUnsafeSlow(RECORD_HEADER_BYTES + byteLength);
    let filled: number;
    try {
      filled = readFully(this.readFd(no), record, offset);
    } catch (error) {
      return `read failed (${(error as Error).message})`;
    }
    const problem = checkRecord(record.subarray(0, filled), seq, byteLength);
    return problem === null ? null : `${problem} at ${no}:${offset}`;
  }

  /**
   * Walks the records of segment `at.no` from `at.offset` (moved on), reading about `budget`
   * bytes, handing each intact record of a seq in `open` (with the wanted length) to `take`;
   * taken seqs leave `open`. Returns the bytes read, or null once the segment is done: at its
   * end, at a record that runs past the file's end (a torn tail, or a length bit flipped: what
   * follows cannot be framed), and on a read error (those payloads are fetched from peers).
   */
  private scanSegment(
    at: ScanPosition,
    open: Map<number, number>,
    take: HeldPayloadTaker,
    budget: number,
  ): number | null {
    let fd: number;
    try {
      fd = fs.openSync(this.segmentPath(at.no), 'r');
    } catch {
      return null;
    }
    try {
      const size = fs.fstatSync(fd).size;
      const bytes = Buffer.allocUnsafe(Math.max(0, Math.min(SCAN_BLOCK_BYTES, size - at.offset)));
      const block: ScanBlock = { fd, size, bytes, start: 0, end: 0 };
      let read = 0;
      while (at.offset + RECORD_HEADER_BYTES <= size && open.size > 0) {
        if (at.offset + RECORD_HEADER_BYTES > block.end) {
          // Only at a block's end: the next step goes on from here without reading twice.
          if (read >= budget) return read;
          block.start = at.offset;
          block.end = at.offset + readFully(fd, bytes, at.offset);
          read += block.end - block.start;
          if (block.end - at.offset < RECORD_HEADER_BYTES) return null;
        }
        const extra = this.scanRecord(at, block, open, take);
        if (extra === null) return null;
        read += extra;
      }
      return null;
    } catch (error) {
      // A read error ends this segment's scan: what it held is fetched from peers instead.
      // Anything else (the engine's assertions in `take`) is a bug: it goes on up.
      if (typeof (error as NodeJS.ErrnoException).code !== 'string') throw error;
      return null;
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * The record at `at.offset` (moved past it), whose header is in `block`: handed to `take` when
   * wanted and intact. Returns the bytes read beside the block (a wanted record that does not
   * fit in it), or null when the record runs past the file's end.
   */
  private scanRecord(
    at: ScanPosition,
    block: ScanBlock,
    open: Map<number, number>,
    take: HeldPayloadTaker,
  ): number | null {
    const offset = at.offset;
    const inBlock = offset - block.start;
    const byteLength = block.bytes.readUInt32BE(inBlock);
    const seq = block.bytes.readDoubleBE(inBlock + 8);
    const end = offset + RECORD_HEADER_BYTES + byteLength;
    if (end > block.size) return null;
    at.offset = end;
    if (open.get(seq) !== byteLength) return 0;
    let record: Buffer;
    if (end <= block.end) {
      record = block.bytes.subarray(inBlock, inBlock + RECORD_HEADER_BYTES + byteLength);
    } else {
      record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + byteLength);
      record = record.subarray(0, readFully(block.fd, record, offset));
    }
    if (checkRecord(record, seq, byteLength) === null) {
      this.reusing = { seq, location: at.no * LOCATION_SPAN + offset };
      try {
        take(seq, record.subarray(RECORD_HEADER_BYTES));
      } finally {
        this.reusing = null;
      }
      open.delete(seq);
    }
    return end <= block.end ? 0 : record.byteLength;
  }

  adopt(location: number, byteLength: number): void {
    if (location === PAYLOAD_MISSING) return;
    const segment = this.segments.get(Math.floor(location / LOCATION_SPAN));
    // A segment already gone holds only records the log's later entries remove again.
    if (segment === undefined) return;
    segment.live++;
    segment.liveBytes += byteLength;
    segment.retiredAt = -1;
  }

  release(location: number, byteLength: number): void {
    if (location === PAYLOAD_MISSING) return;
    this.cache.drop(this, location);
    const segment = this.segments.get(Math.floor(location / LOCATION_SPAN));
    if (segment === undefined) return;
    assert(segment.live > 0, 'released a record of a segment with none live');
    segment.live--;
    segment.liveBytes -= byteLength;
    if (segment.live === 0 && segment !== this.head) segment.retiredAt = this.checkpoints;
  }

  /**
   * The closed segment with the most dead bytes, if at least half of it is dead and it is at
   * least a quarter of a segment: moving its few live records to the head lets it be deleted.
   */
  compactionTarget(): ((location: number) => boolean) | null {
    let best: Segment | null = null;
    for (const segment of this.segments.values()) {
      if (segment === this.head || segment.live === 0) continue;
      const dead = segment.bytes - segment.liveBytes;
      if (dead * 2 < segment.bytes || segment.bytes * 4 < this.segmentBytesMax) continue;
      if (best === null || dead > best.bytes - best.liveBytes) best = segment;
    }
    if (best === null) return null;
    const no = best.no;
    return (location) => Math.floor(location / LOCATION_SPAN) === no;
  }

  checkpoint(): number {
    return ++this.checkpoints;
  }

  saved(checkpoint: number): void {
    // Deleted by a later save instead (reclaiming later is safe; see `scanning`).
    if (this.scanning !== null) return;
    for (const segment of [...this.segments.values()]) {
      if (segment.retiredAt >= 0 && segment.retiredAt < checkpoint) this.remove(segment);
    }
  }

  retireAll(): void {
    if (this.head.bytes > 0) this.roll();
    for (const segment of this.segments.values()) {
      segment.live = 0;
      segment.liveBytes = 0;
      if (segment !== this.head) segment.retiredAt = this.checkpoints;
    }
    this.cache.dropOwner(this);
  }

  sweep(): void {
    for (const segment of [...this.segments.values()]) {
      if (segment !== this.head && segment.live === 0) this.remove(segment);
    }
  }

  setCaching(on: boolean): void {
    this.caching = on;
    if (!on) this.cache.dropOwner(this);
  }

  /** Writes what is pending, then flushes the head and every segment closed since the last sync. */
  async sync(): Promise<void> {
    this.checkWritable();
    this.flush();
    const rolled = this.rolledFds;
    this.rolledFds = [];
    try {
      for (const fd of rolled) await fdatasync(fd);
      await fdatasync(this.headFd);
    } finally {
      for (const fd of rolled) fs.closeSync(fd);
    }
  }

  stats(): SegmentStoreStats {
    let diskBytes = 0;
    let liveBytes = 0;
    let liveRecords = 0;
    for (const segment of this.segments.values()) {
      diskBytes += segment.bytes;
      liveBytes += segment.liveBytes;
      liveRecords += segment.live;
    }
    return { segments: this.segments.size, diskBytes, liveBytes, liveRecords };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Records never written are past the last sync: no saved snapshot points to them, and the
    // log applies their entries again at the next open.
    this.pending = [];
    this.pendingBytes = 0;
    this.cache.dropOwner(this);
    for (const fd of this.readFds.values()) fs.closeSync(fd);
    this.readFds.clear();
    for (const fd of this.rolledFds) fs.closeSync(fd);
    this.rolledFds = [];
    fs.closeSync(this.headFd);
  }

  async destroy(): Promise<void> {
    await this.close();
    await fs.promises.rm(this.dir, { recursive: true, force: true });
  }

  private checkWritable(): void {
    if (this.closed) throw new Error(`payload store ${this.dir}: closed`);
    if (this.failure !== null) {
      const why = `payload store ${this.dir}: failed earlier (${this.failure.message})`;
      throw new StorageError('io', why);
    }
  }

  /** `failed` for what the file system threw. */
  private failedBy(error: unknown): StorageError {
    return this.failed(error instanceof Error ? error.message : String(error), error);
  }

  /** Remembers a write failure; the StorageError to throw for it. */
  private failed(why: string, cause?: unknown): StorageError {
    const error = new StorageError('io', `payload store ${this.dir}: ${why}`, { cause });
    this.failure = error;
    return error;
  }

  /**
   * Null when the record at `offset` of segment `no` is in its file; else it is pending, and is
   * written now: why it cannot be read when that write fails.
   */
  private unwrittenProblem(no: number, offset: number, byteLength: number): string | null {
    const end = offset + RECORD_HEADER_BYTES + byteLength;
    if (no !== this.head.no || end <= this.head.bytes - this.pendingBytes) return null;
    try {
      this.flush();
      return null;
    } catch (error) {
      return `not written (${(error as Error).message})`;
    }
  }

  /**
   * Writes what is pending and starts a new head segment; the old head's descriptor waits for
   * the next sync. Throws StorageError `io` when either fails.
   */
  private roll(): void {
    this.flush();
    const old = this.head;
    const no = old.no + 1;
    let fd: number;
    try {
      fd = fs.openSync(this.segmentPath(no), 'wx+', 0o600);
    } catch (error) {
      throw this.failedBy(error);
    }
    this.rolledFds.push(this.headFd);
    this.headFd = fd;
    this.head = { no, bytes: 0, live: 0, liveBytes: 0, retiredAt: -1 };
    this.segments.set(no, this.head);
    if (old.live === 0) old.retiredAt = this.checkpoints;
  }

  private readFd(no: number): number {
    if (no === this.head.no) return this.headFd;
    let fd = this.readFds.get(no);
    if (fd !== undefined) {
      this.readFds.delete(no);
      this.readFds.set(no, fd);
      return fd;
    }
    fd = fs.openSync(this.segmentPath(no), 'r');
    this.readFds.set(no, fd);
    if (this.readFds.size > READ_FDS_MAX) {
      const [oldestNo, oldestFd] = this.readFds.entries().next().value as [number, number];
      this.readFds.delete(oldestNo);
      fs.closeSync(oldestFd);
    }
    return fd;
  }

  private remove(segment: Segment): void {
    assert(segment !== this.head, 'removing the head segment');
    this.segments.delete(segment.no);
    const fd = this.readFds.get(segment.no);
    if (fd !== undefined) fs.closeSync(fd);
    this.readFds.delete(segment.no);
    // An unlinked file's open write descriptor (waiting for a sync) stays valid until closed.
    fs.rmSync(this.segmentPath(segment.no), { force: true });
  }

  private segmentPath(no: number): string {
    return join(this.dir, `${no.toString(16).padStart(8, '0')}.seg`);
  }
}

/** Reads into `buffer` from `position` until it is full or the file ends; the bytes read. */
function readFully(fd: number, buffer: Buffer, position: number): number {
  let filled = 0;
  while (filled < buffer.byteLength) {
    const count = fs.readSync(fd, buffer, filled, buffer.byteLength - filled, position + filled);
    if (count === 0) break;
    filled += count;
  }
  return filled;
}

/** The store's id, from its id file, or a new one written atomically. */
function readOrCreateId(dir: string): string {
  const path = join(dir, ID_FILE);
  let text: string | null = null;
  try {
    text = fs.readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== null) {
    const [format, id] = text.trim().split('\n');
    if (format !== FORMAT_LINE || id === undefined || !/^[0-9a-f]{32}$/.test(id)) {
      throw new Error(
        `payload store ${dir} holds a format this version does not read ` +
          `(${JSON.stringify(format)}, expected ${JSON.stringify(FORMAT_LINE)})`,
      );
    }
    return id;
  }
  const id = randomBytes(16).toString('hex');
  const temporary = `${path}.tmp`;
  fs.writeFileSync(temporary, `${FORMAT_LINE}\n${id}\n`, { mode: 0o600 });
  const fd = fs.openSync(temporary, 'r');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(temporary, path);
  return id;
}
