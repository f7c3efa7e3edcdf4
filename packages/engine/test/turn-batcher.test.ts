// The per-turn frame batcher: one onTurn per turn however many pushes, frames cut at the bound in
// order (an oversized piece alone), dropped items left out and their bytes forgotten, the oldest
// dropped under an owner's bounds, and frames taken one at a time while a stream can take them.

import { describe, expect, it } from 'vitest';
import { TurnBatcher } from '../src/turn-batcher.js';

interface Item {
  readonly name: string;
  size: number;
}

function batcher(): { batcher: TurnBatcher<Item>; turns: () => number; runTurn: () => void } {
  const pending: Array<() => void> = [];
  let turns = 0;
  const made = new TurnBatcher<Item>({
    sizeOf: (item) => item.size,
    schedule: (callback) => pending.push(callback),
    onTurn: () => (turns += 1),
  });
  const runTurn = (): void => {
    for (const callback of pending.splice(0)) callback();
  };
  return { batcher: made, turns: () => turns, runTurn };
}

const item = (name: string, size: number): Item => ({ name, size });
const names = (frames: { items: readonly Item[] }[]): string[][] =>
  frames.map((frame) => frame.items.map((i) => i.name));

describe('TurnBatcher', () => {
  it('asks for one turn however many items a turn queues, and again after it ran', () => {
    const { batcher: b, turns, runTurn } = batcher();
    b.push(item('a', 1));
    b.push(item('b', 1));
    b.wake();
    runTurn();
    expect(turns()).toBe(1);
    b.push(item('c', 1));
    runTurn();
    expect(turns()).toBe(2);
  });

  it('cuts frames in order at the bound; a piece over it travels alone', () => {
    const { batcher: b } = batcher();
    for (const [name, size] of [['a', 4], ['b', 4], ['c', 3], ['d', 12], ['e', 1]] as const) {
      b.push(item(name, size));
    }
    expect(b.queuedBytes).toBe(24);
    const frames = b.takeFrames(10);
    expect(names(frames)).toEqual([['a', 'b'], ['c'], ['d'], ['e']]);
    expect(frames.map((frame) => frame.bytes)).toEqual([8, 3, 12, 1]);
    expect(b.length).toBe(0);
    expect(b.queuedBytes).toBe(0);
    expect(b.takeFrames(10)).toEqual([]);
  });

  it('leaves out items dropped after queueing, and forgets their bytes', () => {
    const { batcher: b } = batcher();
    const dropped = item('b', 5);
    b.push(item('a', 5));
    b.push(dropped);
    b.push(item('c', 5));
    b.forget(5);
    dropped.size = 0;
    expect(b.queuedBytes).toBe(10);
    expect(names(b.takeFrames(10))).toEqual([['a', 'c']]);
    expect(() => b.forget(1)).toThrow(/more bytes than queued/);
  });

  it('clear hands back what was queued, oldest first', () => {
    const { batcher: b } = batcher();
    b.push(item('a', 1));
    b.push(item('b', 2));
    expect(b.clear().map((i) => i.name)).toEqual(['a', 'b']);
    expect(b.length).toBe(0);
    expect(b.queuedBytes).toBe(0);
  });

  it('drops the oldest past bounds the owner keeps, always keeping the newest', () => {
    const { batcher: b } = batcher();
    const itemsMax = 3;
    const bytesMax = 10;
    let dropped = 0;
    const bounded = (next: Item): void => {
      b.push(next);
      dropped += b.dropOldestPast(itemsMax, bytesMax);
    };
    for (const name of ['a', 'b', 'c', 'd', 'e']) bounded(item(name, 2));
    expect([b.length, b.queuedBytes, dropped]).toEqual([3, 6, 2]);
    bounded(item('f', 7)); // 13 bytes: 'c' and 'd' go, then 'e' + 'f' are 9
    expect([b.length, b.queuedBytes, dropped]).toEqual([2, 9, 4]);
    bounded(item('g', 30)); // alone past the bytes bound, and kept
    expect([b.length, b.queuedBytes, dropped]).toEqual([1, 30, 6]);
    expect(names(b.takeFrames(100))).toEqual([['g']]);
    expect(() => b.dropOldest()).toThrow(/nothing queued/);
  });

  it('drops cheaply from a long queue and hands back exactly what is left', () => {
    const { batcher: b } = batcher();
    for (let i = 0; i < 10_000; i++) b.push(item(`m${i}`, 1));
    for (let i = 0; i < 9_990; i++) expect(b.dropOldest().name).toBe(`m${i}`);
    expect([b.length, b.queuedBytes]).toEqual([10, 10]);
    b.push(item('last', 1));
    const left = b.clear().map((i) => i.name);
    expect(left).toEqual([...Array.from({ length: 10 }, (_, i) => `m${9_990 + i}`), 'last']);
  });

  it('takes one frame at a time while the stream is writable, the rest held in order', () => {
    const { batcher: b } = batcher();
    let writable = true;
    const written: string[][] = [];
    const frame: Item[] = [];
    // The owner's loop: write frames while the stream takes them, then wait for 'drain'.
    const writeWhileWritable = (): void => {
      while (writable && b.takeFrame(4, frame) > 0) {
        written.push(frame.map((i) => i.name));
        writable = written.length % 2 !== 0; // the stream fills after every second frame
      }
    };
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) b.push(item(name, 2));
    writeWhileWritable();
    expect(written).toEqual([['a', 'b'], ['c', 'd']]);
    expect([b.length, b.queuedBytes]).toEqual([2, 4]);
    b.push(item('g', 3)); // queued behind what is held
    writeWhileWritable(); // not writable: nothing taken
    expect(written).toHaveLength(2);
    writable = true; // 'drain'
    writeWhileWritable();
    expect(written).toEqual([['a', 'b'], ['c', 'd'], ['e', 'f'], ['g']]);
    expect([b.length, b.queuedBytes]).toEqual([0, 0]);
    expect(b.takeFrame(4, frame)).toBe(0);
    expect(frame).toEqual([]);
  });
});
