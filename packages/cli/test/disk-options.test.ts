import { describe, expect, it } from 'vitest';
import { diskOf, parseSizeBytes } from '../src/disk-options.js';
import { UsageError } from '../src/usage-error.js';

describe('disk options', () => {
  it('parses bytes and binary units', () => {
    expect(parseSizeBytes('0', 'x')).toBe(0);
    expect(parseSizeBytes('1048576', 'x')).toBe(1_048_576);
    expect(parseSizeBytes('64KiB', 'x')).toBe(65_536);
    expect(parseSizeBytes('32MiB', 'x')).toBe(32 * 1024 ** 2);
    expect(parseSizeBytes('1GiB', 'x')).toBe(1024 ** 3);
    expect(parseSizeBytes('2TiB', 'x')).toBe(2 * 1024 ** 4);
  });

  it('refuses anything else with a usage error naming the source', () => {
    for (const bad of ['', '-1', '1.5GiB', '1 GiB', '1GB', '1gib', 'lots', '99999999999999TiB']) {
      expect(() => parseSizeBytes(bad, '--disk-reserve'), bad).toThrow(UsageError);
    }
    expect(() => parseSizeBytes('1GB', 'MQ_DISK_RESERVE')).toThrow(/MQ_DISK_RESERVE/);
  });

  it('takes the flag over the environment, and gives nothing for the default', () => {
    expect(diskOf({}, {})).toEqual({});
    expect(diskOf({}, { MQ_DISK_RESERVE: '1MiB' })).toEqual({ diskReserveBytes: 1_048_576 });
    expect(diskOf({ 'disk-reserve': '2MiB' }, { MQ_DISK_RESERVE: '1MiB' })).toEqual({
      diskReserveBytes: 2 * 1_048_576,
    });
    expect(diskOf({ 'disk-ballast': '64MiB' }, { MQ_DISK_RESERVE: '1MiB' })).toEqual({
      diskReserveBytes: 1_048_576,
      diskBallastBytes: 64 * 1_048_576,
    });
    expect(diskOf({}, { MQ_DISK_BALLAST: '1KiB' })).toEqual({ diskBallastBytes: 1024 });
    expect(() => diskOf({ 'disk-ballast': 'big' }, {})).toThrow(/--disk-ballast/);
  });
});
