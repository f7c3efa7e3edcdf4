import { describe, expect, it } from 'vitest';
import { OpGate } from '../../src/storage/op-gate.js';

describe('OpGate', () => {
  it('runs calls at once while nothing is held', () => {
    const gate = new OpGate();
    const order: string[] = [];
    gate.run(() => order.push('a'));
    gate.run(() => order.push('b'));
    expect(order).toEqual(['a', 'b']);
  });

  it('holds later calls until release, then runs them in order, re-holding as needed', () => {
    const gate = new OpGate();
    const order: string[] = [];
    const releases: Array<() => void> = [];
    gate.runHeld((release) => {
      order.push('held-1');
      releases.push(release);
    });
    gate.run(() => order.push('a'));
    gate.runHeld((release) => {
      order.push('held-2');
      releases.push(release);
    });
    gate.run(() => order.push('b'));
    expect(order).toEqual(['held-1']);
    expect(gate.busy).toBe(true);
    releases[0]!();
    expect(order).toEqual(['held-1', 'a', 'held-2']);
    releases[1]!();
    expect(order).toEqual(['held-1', 'a', 'held-2', 'b']);
    expect(gate.busy).toBe(false);
    expect(() => releases[1]!()).toThrow(/twice/);
  });
});
