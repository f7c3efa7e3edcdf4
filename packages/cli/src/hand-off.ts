// `--hand-off-seconds` (MQ_HAND_OFF_SECONDS) of `mq member`, and the step it bounds: on SIGTERM a
// member first hands every Raft group it leads to a peer (spools with their leases, see
// @spoolmq/member lame-duck.ts), while its API keeps answering through the embedded gateway and
// its /readyz says 503; then it stops. 0 skips the hand-off (a stop is then a failover).

import type { Member } from '@spoolmq/member';
import { type Env, flagOrEnv } from './cluster-options.js';
import type { Logger } from './logger.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const HAND_OFF_SECONDS_DEFAULT = 10;
const HAND_OFF_SECONDS_MAX = 600;

export const HAND_OFF_FLAGS = { 'hand-off-seconds': { type: 'string' } } as const;

export const HAND_OFF_USAGE = `\
  --hand-off-seconds N
                      On SIGTERM, first hand the primaries this member holds (with their
                      leases) to its peers, waiting at most N seconds
                      (0-${HAND_OFF_SECONDS_MAX}; 0 skips it; default ${HAND_OFF_SECONDS_DEFAULT}).
                      Env MQ_HAND_OFF_SECONDS.`;

/** The hand-off bound in seconds; UsageError outside 0..HAND_OFF_SECONDS_MAX. */
export function handOffOf(flags: Flags, env: Env): { readonly handOffSeconds: number } {
  const given = flagOrEnv(flags, 'hand-off-seconds', env, 'MQ_HAND_OFF_SECONDS');
  if (given === undefined) return { handOffSeconds: HAND_OFF_SECONDS_DEFAULT };
  const value = Number(given.value);
  if (!/^\d{1,3}$/.test(given.value) || value > HAND_OFF_SECONDS_MAX) {
    throw new UsageError(`${given.source} must be 0-${HAND_OFF_SECONDS_MAX}, got '${given.value}'`);
  }
  return { handOffSeconds: value };
}

/**
 * Hands the member's groups over within `seconds` and logs what moved (a warning for what did
 * not: those fail over by election once the member stops). Never rejects.
 */
export async function handOffBeforeStop(
  member: Member,
  seconds: number,
  logger: Logger | undefined,
): Promise<void> {
  if (seconds === 0) return;
  try {
    const report = await member.handOff(seconds * 1000);
    const moved = report.groups.filter((group) => group.moved);
    const stuck = report.groups.filter((group) => !group.moved);
    const elapsedMs = Math.round(report.elapsedMs);
    const handedTo = Object.fromEntries(moved.map((group) => [group.group, group.to]));
    const sentence = `member ${member.id} handed ${moved.length} of ${report.groups.length} led ` +
      `groups to its peers in ${elapsedMs} ms`;
    if (stuck.length === 0) {
      logger?.info({ memberId: member.id, elapsedMs, handedTo }, sentence);
    } else {
      const failed = Object.fromEntries(stuck.map((group) => [group.group, group.error]));
      logger?.warn({ memberId: member.id, elapsedMs, handedTo, failed }, sentence);
    }
  } catch (error) {
    logger?.warn({ memberId: member.id, err: error }, `member ${member.id}: hand-off failed`);
  }
}
