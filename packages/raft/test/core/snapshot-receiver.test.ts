import { describe, expect, it } from 'vitest';
import { SnapshotReceiver } from '../../src/core/snapshot-receiver.js';

const meta = { index: 10, term: 2, config: { voters: ['a'], learners: [] } };

describe('SnapshotReceiver', () => {
  it('accepts chunks strictly in offset order and assembles them', () => {
    const r = new SnapshotReceiver(meta);
    expect(r.accept(0, new Uint8Array([1, 2]))).toBe(true);
    expect(r.accept(0, new Uint8Array([1, 2]))).toBe(false); // duplicate
    expect(r.accept(5, new Uint8Array([9]))).toBe(false); // gap
    expect(r.accept(2, new Uint8Array([3]))).toBe(true);
    expect(r.received()).toBe(3);
    expect([...r.assemble()]).toEqual([1, 2, 3]);
    expect(r.isFor(meta)).toBe(true);
    expect(r.isFor({ ...meta, term: 3 })).toBe(false);
  });
});
