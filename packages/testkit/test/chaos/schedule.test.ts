// The seeded fault schedule: deterministic per seed, every kind at least once, no overlap, at
// most one member down, pauses longer than the election timeout, options it cannot honour refused.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FAULT_KINDS,
  PRIMARY,
  type ScheduleOptions,
  makeSchedule,
  scheduleDurationMsMin,
} from '../../src/chaos/schedule.js';

const members = ['m1', 'm2', 'm3'];
const shape = { members, electionTimeoutMs: 300 };
const durationMs = scheduleDurationMsMin(shape) + 30_000;

describe('makeSchedule', () => {
  it('gives the same schedule for the same seed and another for another seed', () => {
    const a = makeSchedule({ ...shape, seed: 42, durationMs });
    const b = makeSchedule({ ...shape, seed: 42, durationMs });
    expect(b).toEqual(a);
    const text = (seed: number): string =>
      JSON.stringify(makeSchedule({ ...shape, seed, durationMs }));
    const others = [1, 2, 3].map(text);
    expect(others.some((text) => text !== JSON.stringify(a))).toBe(true);
  });

  it('holds its shape for every seed', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 120_000 }), (seed, extraMs) => {
        const minMs = scheduleDurationMsMin(shape);
        const options: ScheduleOptions = { ...shape, seed, durationMs: minMs + extraMs };
        const { episodes } = makeSchedule(options);
        // Every kind at least once, in the first round.
        const firstRound = new Set(episodes.slice(0, FAULT_KINDS.length).map((e) => e.kind));
        expect(firstRound).toEqual(new Set(FAULT_KINDS));
        expect(episodes.some((e) => e.kind === 'killMajority')).toBe(false);
        let previousEndMs = 0;
        for (const episode of episodes) {
          // Sequential with a quiet gap, so never two members down or wiped at once.
          const quietMs = 2 * shape.electionTimeoutMs;
          expect(episode.startMs).toBeGreaterThanOrEqual(previousEndMs + quietMs);
          expect(episode.endMs).toBeGreaterThan(episode.startMs);
          expect(episode.endMs).toBeLessThanOrEqual(options.durationMs);
          expect(episode.windowEndMs).toBeGreaterThanOrEqual(episode.endMs);
          if (episode.kind === 'pause') {
            expect(episode.endMs - episode.startMs).toBeGreaterThan(shape.electionTimeoutMs);
          }
          if (episode.kind === 'partition') {
            expect(episode.minority.length).toBe(1);
          }
          if (episode.kind === 'cutOneWay' && episode.to !== 'others') {
            expect(episode.to).not.toContain(episode.from);
          }
          previousEndMs = episode.endMs;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('targets the primary sometimes and named members sometimes', () => {
    const targets = new Set<string>();
    for (let seed = 0; seed < 20; seed += 1) {
      for (const episode of makeSchedule({ ...shape, seed, durationMs }).episodes) {
        if ('member' in episode) targets.add(episode.member);
      }
    }
    expect(targets.has(PRIMARY)).toBe(true);
    expect(members.some((m) => targets.has(m))).toBe(true);
  });

  it('kills a majority only when asked', () => {
    const options = { ...shape, kinds: ['killMajority', 'kill'] as const, seed: 5 };
    const { episodes } = makeSchedule({ ...options, durationMs: scheduleDurationMsMin(options) });
    const majority = episodes.find((e) => e.kind === 'killMajority');
    expect(majority !== undefined && 'members' in majority && majority.members.length).toBe(2);
  });

  it('refuses options it cannot honour', () => {
    const short = { ...shape, seed: 1, durationMs: 1_000 };
    expect(() => makeSchedule(short)).toThrow(/cannot fit every kind/);
    const twice = { ...shape, members: ['a', 'a'], seed: 1, durationMs };
    expect(() => makeSchedule(twice)).toThrow(/unique/);
    const two = { members: ['a', 'b'], electionTimeoutMs: 300, kinds: ['kill'] as const };
    const lost = { ...two, seed: 1, durationMs: 60_000 };
    expect(() => makeSchedule(lost)).toThrow(/quorumLossAllowed/);
    const allowed = makeSchedule({ ...two, quorumLossAllowed: true, seed: 1, durationMs: 60_000 });
    expect(allowed.episodes.length).toBeGreaterThan(0);
    const one = { members: ['a'], electionTimeoutMs: 300, kinds: ['partition'] as const };
    expect(() => makeSchedule({ ...one, seed: 1, durationMs: 60_000 })).toThrow(/2\+ members/);
  });
});
