import { describe, expect, it } from 'vitest';
import { Inflights, Progress } from '../../src/core/progress.js';

describe('Inflights', () => {
  it('is a bounded FIFO freed by acknowledged index', () => {
    const inflights = new Inflights(3);
    inflights.add(5);
    inflights.add(8);
    inflights.add(12);
    expect(inflights.full()).toBe(true);
    expect(() => inflights.add(13)).toThrow(/overflow/);
    inflights.freeLE(8);
    expect(inflights.size()).toBe(1);
    inflights.add(15);
    inflights.add(20); // wraps around the ring
    inflights.freeLE(19);
    expect(inflights.size()).toBe(1);
  });
});

describe('Progress', () => {
  it('probe sends one at a time; replicate pipelines up to the inflight bound', () => {
    const pr = new Progress(10, 2, 0);
    expect(pr.isPaused()).toBe(false);
    pr.probeSent = true;
    expect(pr.isPaused()).toBe(true);
    expect(pr.maybeUpdate(9)).toBe(true);
    expect(pr.isPaused()).toBe(false);
    pr.becomeReplicate();
    expect(pr.next).toBe(10);
    pr.inflights.add(11);
    pr.inflights.add(12);
    expect(pr.isPaused()).toBe(true);
  });

  it('ignores stale rejections and never backs up below match + 1', () => {
    const pr = new Progress(20, 4, 0);
    pr.maybeUpdate(10);
    pr.becomeReplicate();
    pr.next = 20;
    expect(pr.maybeDecrTo(8, 11)).toBe(false); // rejected <= match, hint above it: stale
    expect(pr.maybeDecrTo(15, 3)).toBe(true);
    expect(pr.next).toBe(11);
    pr.becomeProbe(pr.next);
    expect(pr.maybeDecrTo(14, 12)).toBe(false); // probe: not the outstanding probe
    expect(pr.maybeDecrTo(10, 12)).toBe(true);
    expect(pr.next).toBe(11);
  });

  it('lowers match when the follower shows it lacks entries it acknowledged (storage lost)', () => {
    const pr = new Progress(20, 4, 0);
    pr.maybeUpdate(10);
    pr.becomeReplicate();
    // A wiped follower holding only entries 1..3 rejects a heartbeat at 10: next is 4.
    expect(pr.maybeDecrTo(10, 4)).toBe(true);
    expect(pr.match).toBe(3);
    expect(pr.next).toBe(4);
    pr.becomeProbe(pr.next);
    expect(pr.next).toBe(4);
  });

  it('match never decreases through acknowledgements', () => {
    const pr = new Progress(1, 1, 0);
    pr.maybeUpdate(7);
    expect(pr.maybeUpdate(3)).toBe(false);
    expect(pr.match).toBe(7);
    expect(pr.next).toBe(8);
  });
});
