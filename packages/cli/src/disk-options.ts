// `--disk-reserve` (MQ_DISK_RESERVE) of `mq serve` and `mq member`: free space on the data volume
// below which the member refuses sends and queue creation with 507 storage_full, while receive,
// ack and delete go on (see packages/member/src/host/disk-watermark.ts).

import type { Member } from '@spoolmq/member';
import { type Env, flagOrEnv } from './cluster-options.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const DISK_FLAGS = {
  'disk-reserve': { type: 'string' },
  'disk-ballast': { type: 'string' },
} as const;

export const DISK_USAGE = `\
  --disk-reserve SIZE Free space kept on the data volume: below it sends and queue creation
                      answer 507 storage_full (receive, ack, delete go on); cleared 10% above.
                      Bytes, or with KiB, MiB, GiB, TiB. Default the larger of 1GiB and 5% of
                      the volume. Env MQ_DISK_RESERVE.
  --disk-ballast SIZE Emergency ballast file kept in the data directory, deleted when the
                      volume has less room than it holds, so a member on a full volume still
                      starts and drains; written again once there is room. Default 0 (none).
                      Env MQ_DISK_BALLAST.`;

const UNITS: Readonly<Record<string, number>> = {
  '': 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};

/** Parses a size: digits with an optional binary unit. UsageError naming `source` otherwise. */
export function parseSizeBytes(text: string, source: string): number {
  const match = /^(\d{1,16})(KiB|MiB|GiB|TiB)?$/.exec(text);
  const bytes = match === null ? NaN : Number(match[1]) * UNITS[match[2] ?? '']!;
  if (!Number.isSafeInteger(bytes)) {
    const expected = 'a size in bytes (as 1073741824 or 1GiB)';
    throw new UsageError(`${source} must be ${expected}, got '${text}'`);
  }
  return bytes;
}

/** The reserve and the ballast when given (flag over environment); {} for the defaults. */
export function diskOf(
  flags: Flags,
  env: Env,
): { readonly diskReserveBytes?: number; readonly diskBallastBytes?: number } {
  const reserve = flagOrEnv(flags, 'disk-reserve', env, 'MQ_DISK_RESERVE');
  const ballast = flagOrEnv(flags, 'disk-ballast', env, 'MQ_DISK_BALLAST');
  return {
    ...(reserve === undefined
      ? {}
      : { diskReserveBytes: parseSizeBytes(reserve.value, reserve.source) }),
    ...(ballast === undefined
      ? {}
      : { diskBallastBytes: parseSizeBytes(ballast.value, ballast.source) }),
  };
}

/**
 * What `/readyz` adds about the member's disk: the alarm and the latest sample. A member under
 * the alarm stays ready (consumers must reach it to drain it); the detail says why sends fail.
 * And the spools whose replica here lacks payloads (not ready while it fetches them: see
 * Member.isServiceReady).
 */
export function readyDetailOf(member: Member): Readonly<Record<string, unknown>> {
  const lacking = member.payloadsLacking();
  const payloads = lacking.length === 0 ? {} : { payloadsLacking: lacking };
  const disk = member.diskStatus();
  if (disk === null) return payloads;
  const { alarm, freeBytes, totalBytes, reserveBytes, clearBytes, probeError } = disk;
  const sample = { alarm, freeBytes, totalBytes, reserveBytes, clearBytes, probeError };
  return { ...payloads, disk: sample };
}
