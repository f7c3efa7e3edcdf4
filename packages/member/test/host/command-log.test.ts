import { SpoolEngine, resolveSettings, DEFAULT_PLAN, type Settings } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '@spoolmq/protocol';
import { LocalCommandLog } from '../../src/host/command-log.js';

describe('LocalCommandLog', () => {
  it('applies at once with the clock time made monotonic, term 1', async () => {
    const clock = new ManualClock(5000);
    const engine = new SpoolEngine();
    const log = new LocalCommandLog(engine, clock);
    expect(log.term).toBe(1);
    const settings = resolveSettings({}, DEFAULT_PLAN) as Settings;
    const pending = log.append({ type: 'createQueue', name: 'a', settings });
    expect(engine.queue('a')).toBeDefined(); // applied before append returned
    expect(await pending).toEqual({ kind: 'queue', queueGen: 1 });
    expect(engine.queue('a')!.createdAtMs).toBe(5000);
    // A clock stepping back does not move entry times back.
    clock.set(4000);
    log.applyNow({ type: 'createQueue', name: 'b', settings });
    expect(engine.queue('b')!.createdAtMs).toBe(5000);
  });
});
