// `--hand-off-seconds` and the hand-off step of a member's graceful stop.

import type { HandOffReport, Member } from '@spoolmq/member';
import { describe, expect, it } from 'vitest';
import { HAND_OFF_SECONDS_DEFAULT, handOffBeforeStop, handOffOf } from '../src/hand-off.js';
import type { Logger } from '../src/logger.js';
import { captureIo } from './io.js';
import { UsageError } from '../src/usage-error.js';

describe('handOffOf', () => {
  it('defaults to 10 s; reads the flag, then MQ_HAND_OFF_SECONDS; 0 is allowed', () => {
    expect(handOffOf({}, {})).toEqual({ handOffSeconds: HAND_OFF_SECONDS_DEFAULT });
    expect(HAND_OFF_SECONDS_DEFAULT).toBe(10);
    expect(handOffOf({}, { MQ_HAND_OFF_SECONDS: '30' })).toEqual({ handOffSeconds: 30 });
    expect(handOffOf({ 'hand-off-seconds': '0' }, { MQ_HAND_OFF_SECONDS: '30' })).toEqual({ handOffSeconds: 0 });
  });

  it('refuses anything but 0-600 whole seconds', () => {
    for (const bad of ['-1', '601', '1.5', '10s', '', ' 5', '1e2']) {
      expect(() => handOffOf({ 'hand-off-seconds': bad }, {}), bad).toThrow(UsageError);
    }
    expect(() => handOffOf({}, { MQ_HAND_OFF_SECONDS: 'x' })).toThrow(/MQ_HAND_OFF_SECONDS must be 0-600/);
  });
});

/** A member whose hand-off answers `report` (or throws), recording the bound it was given. */
function memberAnswering(report: HandOffReport | Error, bounds: number[]): Member {
  const handOff = (timeoutMs: number) => {
    bounds.push(timeoutMs);
    return report instanceof Error ? Promise.reject(report) : Promise.resolve(report);
  };
  return { id: 'n1', handOff } as unknown as Member;
}

function capture(): { logger: Logger; records: Record<string, unknown>[] } {
  const io = captureIo();
  return { logger: io.io.logger, records: io.logs };
}

describe('handOffBeforeStop', () => {
  it('hands off within the bound and logs where each group went; a stuck group is a warning', async () => {
    const bounds: number[] = [];
    const { logger, records } = capture();
    const report: HandOffReport = {
      groups: [{ group: 'meta', to: 'n2', moved: true }, { group: 'spool:a#1', to: null, moved: false, error: 'no up-to-date peer to hand over to' }],
      complete: false,
      elapsedMs: 12.4,
    };
    await handOffBeforeStop(memberAnswering(report, bounds), 7, logger);
    expect(bounds).toEqual([7_000]);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      level: 40,
      handedTo: { meta: 'n2' },
      failed: { 'spool:a#1': 'no up-to-date peer to hand over to' },
      msg: 'member n1 handed 1 of 2 led groups to its peers in 12 ms',
    });
  });

  it('skips the hand-off at 0 s and never rejects', async () => {
    const bounds: number[] = [];
    const { logger, records } = capture();
    await handOffBeforeStop(memberAnswering({ groups: [], complete: true, elapsedMs: 0 }, bounds), 0, logger);
    expect(bounds).toEqual([]);
    await handOffBeforeStop(memberAnswering(new Error('boom'), bounds), 1, logger);
    expect(records.map((r) => [r['level'], r['msg']])).toEqual([[40, 'member n1: hand-off failed']]);
  });
});
