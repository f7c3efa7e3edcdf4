// The hand-off record: its binary form (parts, bounds, refusals) and the rule saying which
// record, if any, a primary opening at a barrier takes over.

import { describe, expect, it } from 'vitest';
import type { HandOff, TermedLease } from '../../src/host/adopted-leases.js';
import { encodeBarrier, entryTimeMs, isBarrier } from '../../src/cluster/entry-codec.js';
import {
  HAND_OFF_LEASES_PER_ENTRY,
  HandOffTracker,
  decodeHandOff,
  encodeHandOff,
  isHandOffRecord,
} from '../../src/cluster/hand-off-record.js';

const T0 = 1_800_000_000_000;

/** What a primary of `term` holds, accepting failure leases from `failureFromTerm`. */
function held(term: number, leases: TermedLease[], failureFromTerm = term): HandOff {
  return { term, failureFromTerm, leases };
}

function encode(term: number, leases: TermedLease[], failureFromTerm = term): Uint8Array[] {
  return encodeHandOff(T0, held(term, leases, failureFromTerm));
}

function lease(seq: number, extra: Partial<TermedLease> = {}): TermedLease {
  return { queueGen: 2, seq, gen: 1, delivery: 3, term: 7, deadlineMs: T0 + seq, ...extra };
}

describe('hand-off record codec', () => {
  it('round-trips leases, an unbounded deadline and the largest seq; carries the entry time', () => {
    const leases = [lease(1), lease(2 ** 53 - 1, { deadlineMs: Infinity, term: 0xffff_ffff })];
    const [entry, ...more] = encode(9, leases);
    expect(more).toEqual([]);
    expect(isHandOffRecord(entry!)).toBe(true);
    expect(isBarrier(entry!)).toBe(false);
    expect(entryTimeMs(entry!)).toBe(T0);
    expect(decodeHandOff(entry!)).toEqual({ term: 9, failureFromTerm: 9, part: 0, parts: 1, leases });
    // An empty record still says something: no leases.
    const [empty] = encode(9, []);
    expect(decodeHandOff(empty!)).toEqual({ term: 9, failureFromTerm: 9, part: 0, parts: 1, leases: [] });
    // After hand-offs, the first term whose failure leases the writer accepted is earlier.
    const [chained] = encode(9, [], 4);
    expect(decodeHandOff(chained!)).toMatchObject({ term: 9, failureFromTerm: 4 });
  });

  it('reads a version 1 record (no first term) as accepting the writer\'s own failure leases', () => {
    const [entry] = encode(9, [lease(1)], 4);
    // Version 1: the same entry without the 4 bytes of the first term (after the writer's term).
    const v1 = new Uint8Array(entry!.byteLength - 4);
    v1.set(entry!.subarray(0, 14));
    v1.set(entry!.subarray(18), 14);
    v1[9] = 1;
    expect(decodeHandOff(v1)).toEqual({ term: 9, failureFromTerm: 9, part: 0, parts: 1, leases: [lease(1)] });
    expect(decodeHandOff(v1.subarray(0, 20))).toBeNull(); // shorter than a version 1 header
  });

  it('splits a large record into parts of at most HAND_OFF_LEASES_PER_ENTRY leases', () => {
    const leases = Array.from({ length: HAND_OFF_LEASES_PER_ENTRY + 5 }, (_, i) => lease(i + 1));
    const entries = encode(4, leases);
    expect(entries).toHaveLength(2);
    const decoded = entries.map((entry) => decodeHandOff(entry)!);
    expect(decoded.map((r) => [r.part, r.parts, r.leases.length])).toEqual([
      [0, 2, HAND_OFF_LEASES_PER_ENTRY],
      [1, 2, 5],
    ]);
  });

  it('refuses to encode what does not fit, and decodes nothing malformed', () => {
    expect(() => encode(1, [lease(0)])).toThrow(RangeError);
    expect(() => encode(1, [lease(1, { delivery: -1 })])).toThrow(RangeError);
    expect(() => encode(2 ** 32, [])).toThrow(RangeError);
    expect(() => encode(3, [], 4)).toThrow(RangeError); // a first term after the writer's
    const [entry] = encode(1, [lease(1)]);
    expect(decodeHandOff(entry!.subarray(0, entry!.byteLength - 1))).toBeNull(); // truncated
    const version = entry!.slice();
    version[9] = 3;
    expect(decodeHandOff(version)).toBeNull();
    const later = entry!.slice();
    later[17] = 2; // a first term (2) after the writer's (1)
    expect(decodeHandOff(later)).toBeNull();
    expect(decodeHandOff(encodeBarrier(T0))).toBeNull();
    const command = new Uint8Array(12);
    command[8] = 1; // a command entry: the command codec's version byte
    expect(isHandOffRecord(command)).toBe(false);
  });
});

describe('HandOffTracker', () => {
  const record = (leases: TermedLease[], term = 5) => encode(term, leases);

  it('a record right before a barrier goes to the primary opening at that barrier, once', () => {
    const tracker = new HandOffTracker();
    tracker.recordApplied(record([lease(1), lease(2)])[0]!);
    tracker.barrierApplied(12);
    expect(tracker.take(11)).toBeNull(); // another barrier's opening
    tracker.recordApplied(record([lease(1)])[0]!);
    tracker.barrierApplied(12);
    expect(tracker.take(12)).toEqual({ term: 5, failureFromTerm: 5, leases: [lease(1)] });
    expect(tracker.take(12)).toBeNull();
  });

  it("carries the handed-off primary's terms, even when it held no leases", () => {
    const tracker = new HandOffTracker();
    tracker.recordApplied(record([], 8)[0]!);
    tracker.barrierApplied(4);
    expect(tracker.take(4)).toEqual({ term: 8, failureFromTerm: 8, leases: [] });
    tracker.rememberOwn(held(9, []));
    tracker.barrierApplied(6);
    expect(tracker.take(6)).toEqual({ term: 9, failureFromTerm: 9, leases: [] });
    // Passed on past a barrier at which this replica did not open: the term goes with it.
    tracker.recordApplied(record([], 10)[0]!);
    tracker.barrierApplied(8);
    tracker.carry(8);
    tracker.barrierApplied(9);
    expect(tracker.take(9)).toEqual({ term: 10, failureFromTerm: 10, leases: [] });
    tracker.rememberOwn(held(11, [lease(1)], 7));
    tracker.barrierApplied(12);
    tracker.carry(12);
    tracker.barrierApplied(13);
    expect(tracker.take(13)).toEqual({ term: 11, failureFromTerm: 7, leases: [lease(1)] });
    // A record's first term goes with it too; its parts must all agree on it.
    const [p0, p1] = encode(12, Array.from({ length: HAND_OFF_LEASES_PER_ENTRY + 1 }, (_, i) => lease(i + 1)), 6);
    tracker.recordApplied(p0!);
    tracker.recordApplied(p1!);
    tracker.barrierApplied(15);
    expect(tracker.take(15)).toMatchObject({ term: 12, failureFromTerm: 6 });
    tracker.recordApplied(p0!);
    tracker.recordApplied(encode(12, Array.from({ length: HAND_OFF_LEASES_PER_ENTRY + 1 }, (_, i) => lease(i + 1)), 5)[1]!);
    tracker.barrierApplied(17);
    expect(tracker.take(17)).toBeNull();
  });

  it('a command, a second barrier or a snapshot in between voids the record', () => {
    const tracker = new HandOffTracker();
    const [entry] = record([lease(1)]);
    tracker.recordApplied(entry!);
    tracker.commandApplied();
    tracker.barrierApplied(3);
    expect(tracker.take(3)).toBeNull();

    tracker.recordApplied(entry!);
    tracker.barrierApplied(4); // a primary opened (and may have served) here
    tracker.barrierApplied(6);
    expect(tracker.take(6)).toBeNull();

    tracker.recordApplied(entry!);
    tracker.reset();
    tracker.barrierApplied(8);
    expect(tracker.take(8)).toBeNull();

    tracker.recordApplied(entry!);
    tracker.barrierApplied(9);
    tracker.commandApplied(); // applied after the barrier, before the opening looked
    expect(tracker.take(9)).toBeNull();
  });

  it('takes a record in parts only when every part arrived in order', () => {
    const leases = Array.from({ length: HAND_OFF_LEASES_PER_ENTRY + 1 }, (_, i) => lease(i + 1));
    const [p0, p1] = record(leases);
    const tracker = new HandOffTracker();
    tracker.recordApplied(p0!);
    tracker.recordApplied(p1!);
    tracker.barrierApplied(5);
    expect(tracker.take(5)).toEqual({ term: 5, failureFromTerm: 5, leases });

    tracker.recordApplied(p0!);
    tracker.barrierApplied(7); // the second part never came
    expect(tracker.take(7)).toBeNull();

    tracker.recordApplied(p1!); // a part without its first
    tracker.barrierApplied(9);
    expect(tracker.take(9)).toBeNull();

    const [other] = record([lease(1)], 6);
    tracker.recordApplied(p0!);
    tracker.recordApplied(record(leases, 6)[1]!); // a part of another writer's record
    tracker.barrierApplied(11);
    expect(tracker.take(11)).toBeNull();
    tracker.recordApplied(p0!);
    tracker.recordApplied(other!); // a newer record replaces an unfinished one
    tracker.barrierApplied(13);
    expect(tracker.take(13)).toEqual({ term: 6, failureFromTerm: 6, leases: [lease(1)] });
  });

  it('a malformed record voids what was pending', () => {
    const tracker = new HandOffTracker();
    tracker.recordApplied(record([lease(1)])[0]!);
    const bad = record([lease(2)])[0]!.slice(0, 20);
    tracker.recordApplied(bad);
    tracker.barrierApplied(2);
    expect(tracker.take(2)).toBeNull();
  });

  it('gives a primary back its own leases when the first barrier after it stepped down is its own', () => {
    const tracker = new HandOffTracker();
    tracker.rememberOwn(held(3, [lease(1)]));
    tracker.commandApplied(); // its own proposal, committed late
    tracker.barrierApplied(20);
    expect(tracker.take(20)).toEqual({ term: 3, failureFromTerm: 3, leases: [lease(1)] });

    tracker.rememberOwn(held(3, [lease(2)]));
    tracker.barrierApplied(30); // someone else opened here
    tracker.barrierApplied(33);
    expect(tracker.take(33)).toBeNull();

    tracker.rememberOwn(held(3, [lease(3)]));
    tracker.reset(); // a snapshot: the log in between is unknown
    tracker.barrierApplied(40);
    expect(tracker.take(40)).toBeNull();

    // A hand-off record before the barrier wins over remembered leases.
    tracker.rememberOwn(held(3, [lease(4)]));
    tracker.recordApplied(record([lease(5)])[0]!);
    tracker.barrierApplied(50);
    expect(tracker.take(50)).toEqual({ term: 5, failureFromTerm: 5, leases: [lease(5)] });
  });

  it('a barrier at which this replica did not open passes its record or own leases on', () => {
    const tracker = new HandOffTracker();
    tracker.recordApplied(record([lease(1)])[0]!);
    tracker.barrierApplied(10); // its own barrier; leadership lost before it opened
    tracker.carry(10);
    tracker.barrierApplied(12); // its next barrier
    expect(tracker.take(12)).toEqual({ term: 5, failureFromTerm: 5, leases: [lease(1)] });

    tracker.rememberOwn(held(3, [lease(2)]));
    tracker.barrierApplied(20);
    tracker.carry(20);
    tracker.barrierApplied(22);
    expect(tracker.take(22)).toEqual({ term: 3, failureFromTerm: 3, leases: [lease(2)] });

    // Carried only to the next barrier: someone else's there (they served) ends it.
    tracker.recordApplied(record([lease(3)])[0]!);
    tracker.barrierApplied(30);
    tracker.carry(30);
    tracker.barrierApplied(31);
    tracker.barrierApplied(35);
    expect(tracker.take(35)).toBeNull();
    tracker.carry(99); // a barrier it never noted: nothing
    tracker.barrierApplied(40);
    expect(tracker.take(40)).toBeNull();
  });
});
