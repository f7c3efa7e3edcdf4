import { describe, expect, it } from 'vitest';
import { SnapshotReceiver } from '../../src/core/snapshot-receiver.js';
import { ChunkedSnapshotData } from '../../src/types.js';

const meta = { index: 10, term: 2, config: { voters: ['a'], learners: [] } };

describe('SnapshotReceiver', () => {
  it('accepts chunks strictly in offset order and keeps them as they came', () => {
    const r = new SnapshotReceiver(meta);
    const first = new Uint8Array([1, 2]);
    expect(r.accept(0, first)).toBe(true);
    expect(r.accept(0, new Uint8Array([1, 2]))).toBe(false); // duplicate
    expect(r.accept(5, new Uint8Array([9]))).toBe(false); // gap
    expect(r.accept(2, new Uint8Array([3]))).toBe(true);
    expect(r.received()).toBe(3);
    const chunks = r.take();
    expect(chunks.map((chunk) => [...chunk])).toEqual([[1, 2], [3]]);
    expect(chunks[0]).toBe(first); // never copied or joined
    expect(r.isFor(meta)).toBe(true);
    expect(r.isFor({ ...meta, term: 3 })).toBe(false);
  });
});

describe('ChunkedSnapshotData', () => {
  const chunks = [new Uint8Array([0, 1, 2]), new Uint8Array([3]), new Uint8Array([4, 5, 6, 7])];
  const data = new ChunkedSnapshotData([new Uint8Array(0), ...chunks]);
  const all = [0, 1, 2, 3, 4, 5, 6, 7];

  it('returns every range of the data, a view when it lies in one chunk', () => {
    for (let start = 0; start <= all.length; start++) {
      for (let end = start; end <= all.length + 2; end++) {
        expect([...data.slice(start, end)]).toEqual(all.slice(start, end));
      }
    }
    const view = data.slice(5, 7);
    expect(view.buffer).toBe(chunks[2]!.buffer);
  });

  it('copies only the range when it straddles chunks', () => {
    const copy = data.slice(2, 5);
    expect([...copy]).toEqual([2, 3, 4]);
    expect(copy.buffer.byteLength).toBe(3);
  });

  it('keeps the chunks as given (empty ones dropped) and iterates them', () => {
    expect(data.dataBytes).toBe(8);
    expect([...data]).toEqual(chunks);
    expect([...data][0]).toBe(chunks[0]);
  });
});
