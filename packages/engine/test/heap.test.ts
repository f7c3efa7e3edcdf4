import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MinHeap } from '../src/heap.js';

function drain(heap: MinHeap): [number, number, number][] {
  const out: [number, number, number][] = [];
  while (heap.size > 0) {
    out.push([heap.topKey(), heap.topSeq(), heap.topStamp()]);
    heap.pop();
  }
  return out;
}

describe('MinHeap', () => {
  it('pops by key, ties broken by seq', () => {
    const heap = new MinHeap();
    heap.push(5, 2, 20);
    heap.push(5, 1, 10);
    heap.push(3, 9, 90);
    heap.push(7, 0, 0);
    expect(drain(heap)).toEqual([
      [3, 9, 90],
      [5, 1, 10],
      [5, 2, 20],
      [7, 0, 0],
    ]);
  });

  it('pop on an empty heap is a no-op', () => {
    const heap = new MinHeap();
    heap.pop();
    expect(heap.size).toBe(0);
  });

  it('orders any sequence of pushes like a sort (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1000 }))), (entries) => {
        const heap = new MinHeap();
        entries.forEach(([k, seq], i) => heap.push(k, seq, i));
        const popped = drain(heap).map(([k, seq]) => [k, seq]);
        const sorted = entries.map(([k, seq]) => [k, seq]).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
        expect(popped).toEqual(sorted);
      }),
    );
  });

  it('retain keeps exactly the accepted entries and restores heap order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 200 }), (keys) => {
        const heap = new MinHeap();
        keys.forEach((k, i) => heap.push(k, i, i));
        heap.retain((_k, _seq, stamp) => stamp % 3 !== 0);
        const popped = drain(heap);
        const expected = keys
          .map((k, i) => [k, i, i] as [number, number, number])
          .filter(([, , stamp]) => stamp % 3 !== 0)
          .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        expect(popped).toEqual(expected);
      }),
    );
  });

  it('clear empties it', () => {
    const heap = new MinHeap();
    heap.push(1, 1, 1);
    heap.clear();
    expect(heap.size).toBe(0);
  });
});
