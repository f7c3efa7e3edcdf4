// A seeded fault schedule: a pure function from a seed and the cluster's shape to a list of
// fault episodes, each injected at `startMs` and recovered at `endMs` (offsets from the start of
// the scenario). The same options always give the same schedule.
//
// Shape guarantees:
// - Episodes never overlap, and a quiet gap (`quietMs`, default two election timeouts) follows
//   each, so at most one member is down (killed, paused, wiped) at any time and at most one is
//   wiped. With fewer than three members one member down is a majority down: that needs
//   `quorumLossAllowed`. `killMajority` (a majority killed at once) is never chosen unless
//   listed in `kinds`.
// - The first episodes cover every kind in `kinds` once, in a seeded order; the rest are seeded
//   picks. `makeSchedule` throws when `durationMs` cannot fit one of each (see
//   `scheduleDurationMsMin`).
// - A pause lasts longer than the election timeout (2-4 timeouts), so the paused member is
//   deposed or misses an election while it sleeps.
// - A target may be `PRIMARY`: the harness resolves it to the spool's primary when it injects
//   the episode and keeps that member for the recovery.

import { type CutMode } from './tcp-proxy.js';
import { Prng } from '@spoolmq/raft';

/** Symbolic target: the member that is the spool's primary when the episode starts. */
export const PRIMARY = '@primary';
/** A member id, or PRIMARY. */
export type FaultTarget = string;

export const FAULT_KINDS = [
  'kill',
  'pause',
  'wipe',
  'corrupt',
  'partition',
  'isolate',
  'cutOneWay',
  'delay',
  'drop',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number] | 'killMajority';

interface EpisodeBase {
  /** 0-based position in the schedule. */
  readonly index: number;
  /** Inject at this offset from the scenario start, ms. */
  readonly startMs: number;
  /** Recover (restart, resume, heal) at this offset, ms; > startMs. */
  readonly endMs: number;
  /** Until this offset the primary may still change because of it: flag [startMs, windowEndMs]. */
  readonly windowEndMs: number;
}

export type FaultEpisode = EpisodeBase &
  (
    | { readonly kind: 'kill'; readonly member: FaultTarget }
    | { readonly kind: 'pause'; readonly member: FaultTarget }
    /** SIGKILL, delete the member's whole data directory, restart it empty at endMs. */
    | { readonly kind: 'wipe'; readonly member: FaultTarget }
    /** SIGKILL, flip a bit in a few stored log entries (bad bytes), restart at endMs. */
    | { readonly kind: 'corrupt'; readonly member: FaultTarget }
    /** The minority (PRIMARY allowed) against every other member. */
    | {
        readonly kind: 'partition';
        readonly minority: readonly FaultTarget[];
        readonly mode: CutMode;
      }
    | { readonly kind: 'isolate'; readonly member: FaultTarget; readonly mode: CutMode }
    /** What `from` sends to each of `to` is cut; `to: 'others'` means every other member. */
    | {
        readonly kind: 'cutOneWay';
        readonly from: FaultTarget;
        readonly to: readonly string[] | 'others';
        readonly mode: CutMode;
      }
    /** Every link touching `member` ('all': every link) delayed. */
    | {
        readonly kind: 'delay';
        readonly member: FaultTarget | 'all';
        readonly delayMs: number;
        readonly jitterMs: number;
      }
    | {
        readonly kind: 'drop';
        readonly member: FaultTarget | 'all';
        readonly probability: number;
        readonly stallMs: number;
      }
    | { readonly kind: 'killMajority'; readonly members: readonly string[] }
  );

type DetailsOf<E> = E extends unknown ? Omit<E, keyof EpisodeBase> : never;
/** An episode without its timing. */
export type EpisodeDetails = DetailsOf<FaultEpisode>;

export interface ScheduleOptions {
  /** Any 32-bit integer. */
  readonly seed: number;
  /** Member ids, 1-16, unique. */
  readonly members: readonly string[];
  /** Length of the scenario, ms. */
  readonly durationMs: number;
  /** The members' largest election timeout, ms, 10-60,000. */
  readonly electionTimeoutMs: number;
  /** Kinds to use; default FAULT_KINDS (not killMajority). */
  readonly kinds?: readonly FaultKind[];
  /** Gap after each episode, ms; default 2 x electionTimeoutMs. */
  readonly quietMs?: number;
  /** Fraction of single-member targets that are PRIMARY, 0-1; default 0.5. */
  readonly primaryFraction?: number;
  /** Allow one member down when that is a majority (fewer than 3 members). Default false. */
  readonly quorumLossAllowed?: boolean;
}

export interface Schedule {
  readonly seed: number;
  readonly durationMs: number;
  readonly episodes: readonly FaultEpisode[];
}

/** Bounds of one episode's length per kind, in election timeouts. */
const LENGTH_TIMEOUTS: Readonly<Record<FaultKind, readonly [number, number]>> = {
  kill: [1, 3],
  pause: [2, 4],
  wipe: [1, 3],
  corrupt: [1, 3],
  partition: [2, 5],
  isolate: [2, 5],
  cutOneWay: [2, 5],
  delay: [2, 5],
  drop: [2, 5],
  killMajority: [1, 3],
};

const MEMBERS_MAX = 16;
const NETWORK_KINDS: ReadonlySet<FaultKind> = new Set(['partition', 'isolate', 'cutOneWay']);
const PROCESS_KINDS: ReadonlySet<FaultKind> = new Set(['kill', 'pause', 'wipe', 'corrupt']);

function resolved(options: ScheduleOptions): Required<ScheduleOptions> {
  return {
    kinds: FAULT_KINDS,
    quietMs: 2 * options.electionTimeoutMs,
    primaryFraction: 0.5,
    quorumLossAllowed: false,
    ...options,
  };
}

/**
 * The shortest `durationMs` that fits one episode of every kind whatever the seed: a quiet
 * lead-in, then for each kind its longest episode and a quiet gap.
 */
export function scheduleDurationMsMin(
  options: Omit<ScheduleOptions, 'seed' | 'durationMs'>,
): number {
  const o = resolved({ ...options, seed: 0, durationMs: 0 });
  let total = o.quietMs;
  for (const kind of new Set(o.kinds)) {
    total += LENGTH_TIMEOUTS[kind][1] * o.electionTimeoutMs + o.quietMs;
  }
  return total;
}

function validate(o: Required<ScheduleOptions>): void {
  const kinds = [...new Set(o.kinds)];
  const count = o.members.length;
  const needMs = scheduleDurationMsMin(o);
  const problems: readonly [boolean, string][] = [
    [count < 1 || count > MEMBERS_MAX, `1-${MEMBERS_MAX} members required`],
    [new Set(o.members).size !== count || o.members.includes(PRIMARY), 'member ids must be unique'],
    [!(o.electionTimeoutMs >= 10 && o.electionTimeoutMs <= 60_000), 'electionTimeoutMs 10-60000'],
    [!(o.quietMs >= 0), 'quietMs must be >= 0'],
    [!(o.primaryFraction >= 0 && o.primaryFraction <= 1), 'primaryFraction 0-1'],
    [kinds.length === 0, 'no fault kinds'],
    [count < 2 && kinds.some((k) => NETWORK_KINDS.has(k)), 'network faults need 2+ members'],
    [
      count < 3 && kinds.some((k) => PROCESS_KINDS.has(k)) && !o.quorumLossAllowed,
      'one member down is a majority of fewer than 3: set quorumLossAllowed',
    ],
    [!(o.durationMs >= needMs), `durationMs cannot fit every kind once; need >= ${needMs}`],
  ];
  for (const [bad, why] of problems) if (bad) throw new Error(`schedule: ${why}`);
}

/** Builds the schedule (see the file comment). Throws `Error` on options it cannot honour. */
export function makeSchedule(options: ScheduleOptions): Schedule {
  const o = resolved(options);
  validate(o);
  const prng = new Prng(o.seed);
  const kinds = [...new Set(o.kinds)];
  const firstRound = prng.shuffle(kinds);
  const episodes: FaultEpisode[] = [];
  let atMs = o.quietMs;
  // Bounded: each pass adds an episode of at least one election timeout or stops.
  for (let index = 0; index < 100_000; index += 1) {
    const kind = index < firstRound.length ? firstRound[index]! : prng.pick(kinds);
    const [lo, hi] = LENGTH_TIMEOUTS[kind];
    const lengthMs = prng.range(lo * o.electionTimeoutMs, hi * o.electionTimeoutMs);
    if (atMs + lengthMs > o.durationMs) break;
    const endMs = atMs + lengthMs;
    const base: EpisodeBase = { index, startMs: atMs, endMs, windowEndMs: endMs + o.quietMs };
    episodes.push({ ...base, ...episodeDetails(kind, prng, o) });
    atMs += lengthMs + o.quietMs;
  }
  return { seed: o.seed, durationMs: o.durationMs, episodes };
}

function target(prng: Prng, o: Required<ScheduleOptions>): FaultTarget {
  return prng.chance(o.primaryFraction) ? PRIMARY : prng.pick(o.members);
}

const MODES: readonly CutMode[] = ['blackhole', 'blackhole', 'stall', 'reset'];

function episodeDetails(kind: FaultKind, prng: Prng, o: Required<ScheduleOptions>): EpisodeDetails {
  const timeoutMs = o.electionTimeoutMs;
  switch (kind) {
    case 'kill':
    case 'pause':
    case 'wipe':
    case 'corrupt':
      return { kind, member: target(prng, o) };
    case 'partition': {
      const size = prng.range(1, Math.max(1, Math.floor((o.members.length - 1) / 2)));
      const minority = prng.chance(o.primaryFraction)
        ? [PRIMARY, ...prng.shuffle(o.members).slice(0, size - 1)]
        : prng.shuffle(o.members).slice(0, size);
      return { kind, minority, mode: prng.pick(MODES) };
    }
    case 'isolate':
      return { kind, member: target(prng, o), mode: prng.pick(MODES) };
    case 'cutOneWay': {
      const from = target(prng, o);
      const to = from === PRIMARY ? 'others' : [prng.pick(o.members.filter((m) => m !== from))];
      return { kind, from, to, mode: prng.pick(['blackhole', 'stall'] as const) };
    }
    case 'delay': {
      const delayMs = prng.range(1, Math.max(1, Math.floor(timeoutMs / 2)));
      const member = prng.chance(0.3) ? 'all' : target(prng, o);
      return { kind, member, delayMs, jitterMs: prng.range(0, delayMs) };
    }
    case 'drop': {
      const probability = prng.range(1, 20) / 100;
      const member = prng.chance(0.3) ? 'all' : target(prng, o);
      return { kind, member, probability, stallMs: prng.range(0, timeoutMs) };
    }
    case 'killMajority': {
      const majority = Math.floor(o.members.length / 2) + 1;
      return { kind, members: prng.shuffle(o.members).slice(0, majority) };
    }
  }
}
