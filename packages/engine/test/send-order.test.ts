import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Message, Where } from '../src/message.js';
import { PAYLOAD_MISSING } from '../src/payload-store.js';
import { SendOrder } from '../src/send-order.js';

function append(order: SendOrder, seq: number): Message {
  return order.append(seq, 0, seq, 0, 0);
}

function remove(order: SendOrder, m: Message): void {
  m.where = Where.Removed;
  order.noteRemoved(m);
}

function seqOf(m: Message | undefined): number | undefined {
  return m?.seq;
}

describe('SendOrder', () => {
  it('finds live messages by seq and not removed ones', () => {
    const order = new SendOrder();
    const ms = [1, 3, 5, 9].map((seq) => append(order, seq));
    expect(seqOf(order.find(5))).toBe(5);
    expect(order.find(5)!.location).toBe(5);
    expect(order.find(4)).toBeUndefined();
    expect(order.find(10)).toBeUndefined();
    remove(order, ms[2]!);
    expect(order.find(5)).toBeUndefined();
    expect(order.liveCount).toBe(3);
  });

  it('refuses a seq that does not increase', () => {
    const order = new SendOrder();
    append(order, 2);
    expect(() => append(order, 2)).toThrow(/seq not increasing/);
  });

  it('firstFresh skips messages that are no longer fresh and keeps its place', () => {
    const order = new SendOrder();
    const ms = [1, 2, 3, 4].map((seq) => append(order, seq));
    ms[0]!.where = Where.Leased;
    ms[1]!.where = Where.Delayed;
    expect(seqOf(order.firstFresh())).toBe(3);
    ms[2]!.where = Where.Leased;
    expect(seqOf(order.firstFresh())).toBe(4);
    ms[3]!.where = Where.Leased;
    expect(order.firstFresh()).toBeUndefined();
    // A rebuild marks messages fresh again and rewinds.
    ms[1]!.where = Where.Fresh;
    order.rewindCursor();
    expect(seqOf(order.firstFresh())).toBe(2);
  });

  it('scanAfter visits live messages after a seq in order and stops when asked', () => {
    const order = new SendOrder();
    const ms = [2, 4, 6, 8, 10].map((seq) => append(order, seq));
    remove(order, ms[2]!);
    const seen: number[] = [];
    order.scanAfter(3, (m) => {
      seen.push(m.seq);
      return seen.length < 2;
    });
    expect(seen).toEqual([4, 8]);
    const all: number[] = [];
    order.scanAfter(0, (m) => (all.push(m.seq), true));
    expect(all).toEqual([2, 4, 8, 10]);
  });

  it('stays consistent through heavy removal (head shifts and middle compaction)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5000 }),
        fc.integer({ min: 0, max: 4999 }),
        (removals, cursorAt) => {
          const order = new SendOrder();
          const ms = removals.map((_, i) => append(order, i + 1));
          // Mark everything before cursorAt as leased so the cursor moves there.
          ms.forEach((m, i) => {
            if (i < cursorAt) m.where = Where.Leased;
          });
          order.firstFresh();
          removals.forEach((r, i) => {
            if (r) remove(order, ms[i]!);
          });
          const live = removals.flatMap((r, i) => (r ? [] : [i + 1]));
          expect(order.liveMessages().map((m) => m.seq)).toEqual(live);
          expect(Array.from(order.liveSeqs())).toEqual(live);
          expect(order.liveCount).toBe(live.length);
          for (const m of ms) {
            expect(seqOf(order.find(m.seq))).toBe(m.where === Where.Removed ? undefined : m.seq);
            // A handle made before the compaction still reads its message's columns.
            if (m.where !== Where.Removed) expect(m.location).toBe(m.seq);
          }
          const firstFresh = live.find((seq) => seq > cursorAt);
          expect(seqOf(order.firstFresh())).toBe(firstFresh);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('shifts its head after many removals at the front (FIFO use)', () => {
    const order = new SendOrder();
    const first = append(order, 1);
    first.where = Where.Leased;
    remove(order, first);
    for (let seq = 2; seq <= 10_000; seq++) {
      const m = append(order, seq);
      m.where = Where.Leased;
      if (order.firstFresh() !== undefined) throw new Error('a leased message read as fresh');
      remove(order, m);
    }
    expect(order.liveCount).toBe(0);
    expect(order.liveMessages()).toEqual([]);
    // A handle kept past its message's removal and its chunk's drop reads it as removed.
    expect(first.where).toBe(Where.Removed);
    expect(first.location).toBe(PAYLOAD_MISSING);
    expect(() => (first.gen = 1)).toThrow(/removed message/);
    const m = append(order, 10_001);
    expect(seqOf(order.firstFresh())).toBe(m.seq);
    expect(m.location).toBe(10_001);
  });
});
