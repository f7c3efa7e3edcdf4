// The hand-off record: a spool log entry in which a primary about to hand its leadership over on
// purpose lists the leases it holds, so that the next primary takes them over instead of voiding
// them (see spool-replica.ts, `handOff`, and engine/hand-off.ts).
//
//   f64 entryTimeMs | u8 0xF0 | u8 version | u32 writer's term | u32 failure leases' first term
//   | u16 part | u16 parts | u32 count
//   | count x (u32 queueGen | f64 seq | u32 gen | u32 delivery | u32 token term | f64 deadlineMs)
//
// Version 1 had no first term (read as the writer's term: its own failure leases only).
//
// After the entry time, a command entry starts with the command codec's version byte (1 today);
// 0xF0 is far from it. A record too large for one entry is split into consecutive parts.
//
// When a record applies (HandOffTracker): only when the committed log holds, between the record
// and the barrier with which the next primary opens, no other barrier and no command. The writer
// stopped serving before proposing it, and every primary opens only once its own barrier is
// applied, so nobody served the spool between the two: the record is exactly the leases that
// exist. Anything else (a command, a primary that opened and served in between, a snapshot that
// swallowed the record) voids the leases, as an unplanned failover does. Replicas apply the
// record as nothing: the engine's replicated state never depends on it. The writer's term goes
// with the leases (`take`): the next primary also accepts the failure leases minted in it, which
// the record does not list (they are stateless), and those of the terms its writer accepted
// (the failure leases' first term: see host/adopted-leases.ts).
//
// The same reasoning keeps the leases of a primary that lost its leadership (a quorum late to
// answer on a busy machine) and wins it back with nobody serving in between: it remembers its
// leases when it steps down (`rememberOwn`), and takes them back when the first barrier applied
// after that is its own. A barrier of anyone else in between (they opened, and may have served)
// voids them. Commands applied in between are its own earlier proposals committing late; a lease
// they settled is skipped by its generation like any other.

import type { HandOff, TermedLease } from '../host/adopted-leases.js';
import { ENTRY_TIME_BYTES } from './entry-codec.js';

const MARKER = 0xf0;
const VERSION = 2;
const HEADER_BYTES = ENTRY_TIME_BYTES + 1 + 1 + 4 + 4 + 2 + 2 + 4;
/** Version 1: no failure leases' first term. */
const HEADER_BYTES_V1 = HEADER_BYTES - 4;
const LEASE_BYTES = 4 + 8 + 4 + 4 + 4 + 8;
/** Leases per entry: 8,192 x 32 bytes keeps an entry near 256 KiB. */
export const HAND_OFF_LEASES_PER_ENTRY = 8_192;
const PARTS_MAX = 0xffff;

export interface HandOffRecord extends HandOff {
  readonly part: number;
  readonly parts: number;
  readonly leases: readonly TermedLease[];
}

export function isHandOffRecord(data: Uint8Array): boolean {
  return data.byteLength > ENTRY_TIME_BYTES && data[ENTRY_TIME_BYTES] === MARKER;
}

/**
 * The entries recording `handOff`, written at entry time `atMs` by its primary: at least one (an
 * empty record says "no leases", which still tells the next primary nothing was lost). Throws
 * RangeError for a field that does not fit the format (a bug: every field is a u32 or a safe
 * integer), a first term after the writer's, or more parts than a u16 counts.
 */
export function encodeHandOff(atMs: number, handOff: HandOff): Uint8Array[] {
  const { term, failureFromTerm, leases } = handOff;
  if (failureFromTerm > term) throw new RangeError('hand-off record: first term after the term');
  const parts = Math.max(1, Math.ceil(leases.length / HAND_OFF_LEASES_PER_ENTRY));
  if (parts > PARTS_MAX) throw new RangeError(`hand-off record: ${leases.length} leases`);
  const out: Uint8Array[] = [];
  for (let part = 0; part < parts; part++) {
    const from = part * HAND_OFF_LEASES_PER_ENTRY;
    const slice = leases.slice(from, from + HAND_OFF_LEASES_PER_ENTRY);
    out.push(encodePart(atMs, { term, failureFromTerm, leases: slice }, part, parts));
  }
  return out;
}

function encodePart(atMs: number, handOff: HandOff, part: number, parts: number): Uint8Array {
  const { term, failureFromTerm, leases } = handOff;
  const bytes = new Uint8Array(HEADER_BYTES + LEASE_BYTES * leases.length);
  const view = new DataView(bytes.buffer);
  view.setFloat64(0, atMs);
  let at = ENTRY_TIME_BYTES;
  view.setUint8(at++, MARKER);
  view.setUint8(at++, VERSION);
  at = u32(view, at, term);
  at = u32(view, at, failureFromTerm);
  view.setUint16(at, part);
  view.setUint16(at + 2, parts);
  at = u32(view, at + 4, leases.length);
  for (const lease of leases) {
    if (!Number.isSafeInteger(lease.seq) || lease.seq < 1) throw new RangeError('hand-off: seq');
    at = u32(view, at, lease.queueGen);
    view.setFloat64(at, lease.seq);
    at = u32(view, at + 8, lease.gen);
    at = u32(view, at, lease.delivery);
    at = u32(view, at, lease.term);
    view.setFloat64(at, lease.deadlineMs);
    at += 8;
  }
  return bytes;
}

function u32(view: DataView, at: number, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) {
    throw new RangeError(`hand-off record: ${value} is not a u32`);
  }
  view.setUint32(at, value);
  return at + 4;
}

/** Decodes a hand-off entry; null when it is not a well-formed record of a known version. */
export function decodeHandOff(data: Uint8Array): HandOffRecord | null {
  if (!isHandOffRecord(data) || data.byteLength < HEADER_BYTES_V1) return null;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const version = view.getUint8(ENTRY_TIME_BYTES + 1);
  if (version !== VERSION && version !== 1) return null;
  const header = version === VERSION ? HEADER_BYTES : HEADER_BYTES_V1;
  if (data.byteLength < header) return null;
  let at = ENTRY_TIME_BYTES + 2;
  const term = view.getUint32(at);
  at += 4;
  const failureFromTerm = version === VERSION ? view.getUint32(at) : term;
  if (version === VERSION) at += 4;
  const part = view.getUint16(at);
  const parts = view.getUint16(at + 2);
  const count = view.getUint32(at + 4);
  at += 8;
  if (part >= parts || failureFromTerm > term) return null;
  if (data.byteLength !== header + count * LEASE_BYTES) return null;
  const leases: TermedLease[] = [];
  for (let i = 0; i < count; i++, at += LEASE_BYTES) {
    const seq = view.getFloat64(at + 4);
    const deadlineMs = view.getFloat64(at + 24);
    if (!Number.isSafeInteger(seq) || seq < 1 || Number.isNaN(deadlineMs)) return null;
    leases.push({
      queueGen: view.getUint32(at),
      seq,
      gen: view.getUint32(at + 12),
      delivery: view.getUint32(at + 16),
      term: view.getUint32(at + 20),
      deadlineMs,
    });
  }
  return { term, failureFromTerm, part, parts, leases };
}

/**
 * Follows a spool group's applied entries and says which hand-off record, if any, a primary
 * opening at a given barrier takes over (see the file comment for the rule).
 */
export class HandOffTracker {
  /** Parts of the record being applied, while nothing but its parts followed it. */
  private pending: (HandOff & { parts: number; leases: TermedLease[]; next: number }) | null =
    null;
  /** What the last applied barrier would adopt, by its index. */
  private atBarrier: { index: number; handOff: HandOff } | null = null;
  /** This replica's term and leases when it last stepped down as primary, until a barrier. */
  private own: HandOff | null = null;
  /** What the last applied barrier would give back, if it is this replica's own. */
  private ownAtBarrier: { index: number; handOff: HandOff } | null = null;

  /** This replica stopped being primary (leadership lost), holding `handOff`. */
  rememberOwn(handOff: HandOff): void {
    this.own = handOff;
    this.ownAtBarrier = null;
  }

  /** A hand-off entry was applied (a malformed one voids what was pending). */
  recordApplied(data: Uint8Array): void {
    const record = decodeHandOff(data);
    if (record === null) {
      this.pending = null;
      return;
    }
    const pending = this.pending;
    if (record.part === 0) {
      const { term, failureFromTerm, parts } = record;
      this.pending = { term, failureFromTerm, parts, leases: [...record.leases], next: 1 };
    } else if (pending !== null && sameWriter(pending, record) && pending.next === record.part) {
      pending.leases.push(...record.leases);
      pending.next++;
    } else {
      this.pending = null;
    }
  }

  /** A barrier was applied at `index`: a complete record just before it goes with it. */
  barrierApplied(index: number): void {
    const pending = this.pending;
    const complete = pending !== null && pending.next === pending.parts;
    const handOff = complete ? handOffOf(pending) : null;
    this.atBarrier = handOff === null ? null : { index, handOff };
    this.pending = null;
    this.ownAtBarrier = this.own === null ? null : { index, handOff: this.own };
    this.own = null;
  }

  /**
   * A command was applied: nothing recorded before it still describes the leases. (Remembered
   * own leases stay: before a barrier, only this replica's late proposals can commit.)
   */
  commandApplied(): void {
    this.pending = null;
    this.atBarrier = null;
    this.ownAtBarrier = null;
  }

  /** A snapshot replaced the state: what was recorded may be gone with the log. */
  reset(): void {
    this.pending = null;
    this.atBarrier = null;
    this.own = null;
    this.ownAtBarrier = null;
  }

  /**
   * This replica did not open at its barrier of `barrierIndex` after all (it lost the leadership
   * first): it served nothing, so what that barrier would have taken over waits for the next
   * barrier applied here, whoever's it is (only this replica's own then takes it).
   */
  carry(barrierIndex: number): void {
    const record = this.atBarrier;
    const own = this.ownAtBarrier;
    this.atBarrier = null;
    this.ownAtBarrier = null;
    if (record !== null && record.index === barrierIndex) {
      const { term, failureFromTerm, leases } = record.handOff;
      this.pending = { term, failureFromTerm, parts: 1, leases: [...leases], next: 1 };
    }
    if (own !== null && own.index === barrierIndex) this.own = own.handOff;
  }

  /**
   * What a primary opening at the barrier of `barrierIndex` takes over (once): a hand-off
   * record's, else its own from before it lost the leadership, else null (an unplanned change:
   * every earlier lease is void).
   */
  take(barrierIndex: number): HandOff | null {
    const record = this.atBarrier;
    const own = this.ownAtBarrier;
    this.atBarrier = null;
    this.ownAtBarrier = null;
    if (record !== null && record.index === barrierIndex) return record.handOff;
    return own !== null && own.index === barrierIndex ? own.handOff : null;
  }
}

function sameWriter(a: HandOff, b: HandOff): boolean {
  return a.term === b.term && a.failureFromTerm === b.failureFromTerm;
}

function handOffOf(record: HandOff): HandOff {
  return { term: record.term, failureFromTerm: record.failureFromTerm, leases: record.leases };
}
