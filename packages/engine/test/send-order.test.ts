import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Message, Where } from '../src/message.js';
import { SendOrder } from '../src/send-order.js';

function message(seq: number): Message {
  return new Message(seq, 0, seq, 0, 0);
}

function remove(order: SendOrder, m: Message): void {
  m.where = Where.Removed;
  order.noteRemoved();
}

describe('SendOrder', () => {
  it('finds live messages by seq and not removed ones', () => {
    const order = new SendOrder();
    const ms = [1, 3, 5, 9].map(message);
    ms.forEach((m) => order.append(m));
    expect(order.find(5)).toBe(ms[2]);
    expect(order.find(4)).toBeUndefined();
    expect(order.find(10)).toBeUndefined();
    remove(order, ms[2]!);
    expect(order.find(5)).toBeUndefined();
    expect(order.liveCount).toBe(3);
  });

  it('refuses a seq that does not increase', () => {
    const order = new SendOrder();
    order.append(message(2));
    expect(() => order.append(message(2))).toThrow(/seq not increasing/);
  });

  it('firstFresh skips messages that are no longer fresh and keeps its place', () => {
    const order = new SendOrder();
    const ms = [1, 2, 3, 4].map(message);
    ms.forEach((m) => order.append(m));
    ms[0]!.where = Where.Leased;
    ms[1]!.where = Where.Delayed;
    expect(order.firstFresh()).toBe(ms[2]);
    ms[2]!.where = Where.Leased;
    expect(order.firstFresh()).toBe(ms[3]);
    ms[3]!.where = Where.Leased;
    expect(order.firstFresh()).toBeUndefined();
    // A rebuild marks messages fresh again and rewinds.
    ms[1]!.where = Where.Fresh;
    order.rewindCursor();
    expect(order.firstFresh()).toBe(ms[1]);
  });

  it('scanAfter visits live messages after a seq in order and stops when asked', () => {
    const order = new SendOrder();
    const ms = [2, 4, 6, 8, 10].map(message);
    ms.forEach((m) => order.append(m));
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
          const ms = removals.map((_, i) => message(i + 1));
          ms.forEach((m) => order.append(m));
          // Mark everything before cursorAt as leased so the cursor moves there.
          ms.forEach((m, i) => {
            if (i < cursorAt) m.where = Where.Leased;
          });
          order.firstFresh();
          removals.forEach((r, i) => {
            if (r) remove(order, ms[i]!);
          });
          const live = ms.filter((m) => m.where !== Where.Removed);
          expect(order.liveMessages()).toEqual(live);
          expect(order.liveCount).toBe(live.length);
          for (const m of ms) expect(order.find(m.seq)).toBe(m.where === Where.Removed ? undefined : m);
          const firstFresh = live.find((m) => m.where === Where.Fresh);
          expect(order.firstFresh()).toBe(firstFresh);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('shifts its head after many removals at the front (FIFO use)', () => {
    const order = new SendOrder();
    for (let seq = 1; seq <= 10_000; seq++) {
      const m = message(seq);
      order.append(m);
      m.where = Where.Leased;
      if (order.firstFresh() !== undefined) throw new Error('a leased message read as fresh');
      remove(order, m);
    }
    expect(order.liveCount).toBe(0);
    expect(order.liveMessages()).toEqual([]);
    const m = message(10_001);
    order.append(m);
    expect(order.firstFresh()).toBe(m);
  });
});
