// The workload of a chaos run as data: which queues exist and how (dedup windows, delays, lease
// timeouts), how many producers and consumers, and what a consumer does with a delivery. Pure:
// the planners below draw every choice from a seeded Prng, so one seed fixes every client's
// sequence of decisions (the timing, and so the history, still depends on the server).
//
// Payloads are unique per logical send: `p:<client>:<n>`; dedup keys likewise `k:<client>:<n>`.
// The checker relies on that to tie what is received to what was sent.

import { Prng, pickWeighted } from '@spoolmq/raft';

export interface QueueSpec {
  /** Queue name, `^[A-Za-z0-9_:-]{1,63}$`. */
  readonly name: string;
  /** 1-300 s; consumers abandon leases only where it is short (`abandonAllowed`). */
  readonly leaseTimeoutSeconds: number;
  /** 0-65,535. */
  readonly maxRetries: number;
  /** 0 (no dedup) or 1-300 s. Sends here carry a dedup key and retry unanswered attempts. */
  readonly dedupWindowSeconds: number;
  /** >= 60 s; keep it longer than the run, or expiry looks like loss to the checker. */
  readonly retentionSeconds: number;
  /** Fraction of sends to this queue that carry Svc-Delay-Seconds, 0-1. */
  readonly delayedFraction: number;
  /** Delays are whole seconds in 1-delaySecondsMax; 1-60. */
  readonly delaySecondsMax: number;
  /** Consumers may walk away from a delivery here and let the lease time out. */
  readonly abandonAllowed: boolean;
}

/** Relative weights of what a consumer does with a delivery; >= 0, not all 0. */
export interface ConsumerMix {
  readonly ack: number;
  readonly nack: number;
  readonly release: number;
  /** Release with a Svc-Delay of 1-`releaseDelayMsMax` ms. */
  readonly releaseDelayed: number;
  readonly fail: number;
  /** Renew the lease, then ack. */
  readonly renewThenAck: number;
  /** Ack and send a new message to a seeded queue, atomically. */
  readonly ackAndSend: number;
  /** Discard with the lease. */
  readonly discard: number;
  /** Walk away: the lease times out (only on queues with `abandonAllowed`). */
  readonly abandon: number;
}

export interface WorkloadModel {
  readonly seed: number;
  /** The spool every client addresses. */
  readonly spool: string;
  readonly queues: readonly QueueSpec[];
  /** 1-64 each. */
  readonly producers: number;
  readonly consumers: number;
  readonly mix: ConsumerMix;
  /** Per consumer iteration, the chance of a janitor pass (list failed, recover or discard). */
  readonly janitorChance: number;
  /** Per consumer iteration, the chance of a stats read. */
  readonly statsChance: number;
  /** Receive long poll, 0-20 s. */
  readonly receiveWaitSeconds: number;
  /** Client-side bound on one request, ms; longer than the long poll. */
  readonly requestTimeoutMs: number;
  /** Attempts of one logical send at most (1 = never retry), 1-10. */
  readonly sendAttemptsMax: number;
  /** Largest Svc-Delay of a delayed release, ms, 1-60,000. */
  readonly releaseDelayMsMax: number;
}

/** One logical send: its attempts all carry this payload, key and delay. */
export interface PlannedSend {
  readonly queue: string;
  readonly payload: string;
  readonly dedupKey?: string;
  /** 0 = immediate. */
  readonly delaySeconds: number;
}

export type ConsumerAction =
  | { readonly kind: 'ack' | 'nack' | 'fail' | 'discard' | 'renewThenAck' | 'abandon' }
  | { readonly kind: 'release'; readonly delayMs: number }
  | { readonly kind: 'ackAndSend'; readonly send: PlannedSend };

export const CONSUMER_ACTIONS = [
  'ack',
  'nack',
  'release',
  'releaseDelayed',
  'fail',
  'renewThenAck',
  'ackAndSend',
  'discard',
  'abandon',
] as const satisfies readonly (keyof ConsumerMix)[];

const CLIENTS_MAX = 64;
const QUEUE_NAME = /^[A-Za-z0-9_:-]{1,63}$/;
/** A day: far longer than any run, short enough for every plan's retention limit. */
const RETENTION_SECONDS_DEFAULT = 86_400;

/**
 * The standard chaos workload: a plain queue with a short lease timeout (abandons, nacks into
 * failure), a dedup queue (keys on every send, retries after no answer), a queue with delayed
 * sends. Fields of `overrides` replace the defaults; the result is validated.
 */
export function defaultWorkloadModel(
  seed: number,
  overrides: Partial<WorkloadModel> = {},
): WorkloadModel {
  // Abandoned leases are waited out by the drain: only on the queue with the short timeout.
  const plain = {
    leaseTimeoutSeconds: 5,
    maxRetries: 3,
    retentionSeconds: RETENTION_SECONDS_DEFAULT,
    delayedFraction: 0,
    delaySecondsMax: 1,
    dedupWindowSeconds: 0,
    abandonAllowed: false,
  };
  const model: WorkloadModel = {
    seed,
    spool: 'default',
    queues: [
      { ...plain, name: 'chaos-plain', leaseTimeoutSeconds: 2, abandonAllowed: true },
      { ...plain, name: 'chaos-dedup', dedupWindowSeconds: 60 },
      {
        ...plain,
        name: 'chaos-delay',
        delayedFraction: 0.3,
        delaySecondsMax: 1,
      },
    ],
    producers: 2,
    consumers: 3,
    mix: {
      ack: 50,
      nack: 8,
      release: 5,
      releaseDelayed: 3,
      fail: 4,
      renewThenAck: 8,
      ackAndSend: 10,
      discard: 3,
      abandon: 3,
    },
    janitorChance: 0.03,
    statsChance: 0.02,
    receiveWaitSeconds: 1,
    requestTimeoutMs: 10_000,
    sendAttemptsMax: 4,
    releaseDelayMsMax: 500,
    ...overrides,
  };
  validateWorkloadModel(model);
  return model;
}

/** Throws `Error` naming the first field out of range. */
export function validateWorkloadModel(model: WorkloadModel): void {
  const within = (value: number, lo: number, hi: number): boolean => value >= lo && value <= hi;
  const names = model.queues.map((q) => q.name);
  const weights = CONSUMER_ACTIONS.map((action) => model.mix[action]);
  const problems: [boolean, string][] = [
    [names.length === 0, 'no queues'],
    [new Set(names).size !== names.length, 'queue names repeat'],
    [!weights.every((w) => w >= 0) || !weights.some((w) => w > 0), 'mix weights >= 0, one > 0'],
    [!within(model.receiveWaitSeconds, 0, 20), 'receiveWaitSeconds 0-20'],
    [!(model.requestTimeoutMs > model.receiveWaitSeconds * 1000), 'requestTimeoutMs <= long poll'],
    [!within(model.sendAttemptsMax, 1, 10), 'sendAttemptsMax 1-10'],
    [!within(model.releaseDelayMsMax, 1, 60_000), 'releaseDelayMsMax 1-60000'],
  ];
  const clients = { producers: model.producers, consumers: model.consumers };
  for (const [name, count] of Object.entries(clients)) {
    const ok = Number.isInteger(count) && within(count, 1, CLIENTS_MAX);
    problems.push([!ok, `${name} 1-${CLIENTS_MAX}`]);
  }
  for (const q of model.queues) {
    problems.push(
      [!QUEUE_NAME.test(q.name), `bad queue name ${JSON.stringify(q.name)}`],
      [!within(q.leaseTimeoutSeconds, 1, 300), `${q.name}: leaseTimeoutSeconds 1-300`],
      [!within(q.dedupWindowSeconds, 0, 300), `${q.name}: dedupWindowSeconds 0-300`],
      [!(q.retentionSeconds >= 60), `${q.name}: retentionSeconds >= 60`],
      [!within(q.maxRetries, 0, 65_535), `${q.name}: maxRetries 0-65535`],
      [!within(q.delayedFraction, 0, 1), `${q.name}: delayedFraction 0-1`],
      [!within(q.delaySecondsMax, 1, 60), `${q.name}: delaySecondsMax 1-60`],
    );
  }
  for (const [bad, why] of problems) if (bad) throw new Error(`workload model: ${why}`);
}

/** The seed of one client's Prng: stable per (model seed, role, index). */
export function clientSeed(seed: number, role: 'producer' | 'consumer', index: number): number {
  const prng = new Prng(seed ^ (role === 'producer' ? 0x5eed0001 : 0x5eed0002));
  let value = prng.nextU32();
  for (let i = 0; i < index; i += 1) value = prng.nextU32();
  return value | 0;
}

/** Client ids used in histories and payloads. */
export function clientId(role: 'producer' | 'consumer', index: number): string {
  return `${role === 'producer' ? 'p' : 'c'}${index}`;
}

/** The `n`th logical send of `client` to a seeded queue (or to `queue` when given). */
export function planSend(
  model: WorkloadModel,
  prng: Prng,
  client: string,
  n: number,
  queue?: QueueSpec,
): PlannedSend {
  const spec = queue ?? prng.pick(model.queues);
  const delayed = spec.delayedFraction > 0 && prng.chance(spec.delayedFraction);
  return {
    queue: spec.name,
    payload: `p:${client}:${n}`,
    ...(spec.dedupWindowSeconds > 0 ? { dedupKey: `k:${client}:${n}` } : {}),
    delaySeconds: delayed ? prng.range(1, spec.delaySecondsMax) : 0,
  };
}

/**
 * What a consumer does with a delivery from `queue`. `nextSend` numbers the consumer's own
 * logical sends (ack-and-send makes one). Abandon is replaced by ack where not allowed.
 */
export function planSettle(
  model: WorkloadModel,
  prng: Prng,
  queue: QueueSpec,
  client: string,
  nextSend: () => number,
): ConsumerAction {
  const choice = CONSUMER_ACTIONS[pickWeighted(prng, CONSUMER_ACTIONS.map((a) => model.mix[a]))]!;
  switch (choice) {
    case 'releaseDelayed':
      return { kind: 'release', delayMs: prng.range(1, model.releaseDelayMsMax) };
    case 'release':
      return { kind: 'release', delayMs: 0 };
    case 'ackAndSend': {
      const send = planSend(model, prng, client, nextSend());
      return { kind: 'ackAndSend', send };
    }
    case 'abandon':
      return queue.abandonAllowed ? { kind: 'abandon' } : { kind: 'ack' };
    default:
      return { kind: choice };
  }
}
