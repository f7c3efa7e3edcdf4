import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN } from '../src/plan.js';
import { Queue } from '../src/queue.js';
import { defaultSettings } from '../src/settings.js';
import { SpoolState, lowerBoundName } from '../src/spool-state.js';

describe('SpoolState', () => {
  it('keeps queue names in byte order through adds and removes', () => {
    const state = new SpoolState(DEFAULT_PLAN);
    const queues = ['m', 'A', 'z', 'a:b', 'a-b', '0'].map((name, i) => new Queue(name, i + 1, 0, defaultSettings(DEFAULT_PLAN)));
    for (const q of queues) state.addQueue(q);
    expect(state.names).toEqual(['0', 'A', 'a-b', 'a:b', 'm', 'z']);
    state.removeQueue(queues[3]!);
    expect(state.names).toEqual(['0', 'A', 'a-b', 'm', 'z']);
    expect(state.queuesByGen.has(4)).toBe(false);
    expect(() => state.addQueue(queues[0]!)).toThrow(/taken/);
    expect(() => state.removeQueue(queues[3]!)).toThrow(/unknown/);
    expect(lowerBoundName(state.names, 'b')).toBe(3);
  });

  it('apply times never go backwards; reads never see a time before the last apply', () => {
    const state = new SpoolState(DEFAULT_PLAN);
    expect(state.advanceTime(100)).toBe(100);
    expect(state.advanceTime(50)).toBe(100);
    expect(state.readTime(70)).toBe(100);
    expect(state.readTime(170)).toBe(170);
    expect(() => state.advanceTime(Number.NaN)).toThrow();
  });

  it('the deadline hint only moves down until recomputed', () => {
    const state = new SpoolState(DEFAULT_PLAN);
    state.noteDeadline(500);
    state.noteDeadline(900);
    expect(state.deadlineHintMs).toBe(500);
  });
});
