// The per-turn frame batcher: one onTurn per turn however many pushes, frames cut at the bound in
// order (an oversized piece alone), dropped items left out and their bytes forgotten.

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
});
