// The in-memory local variant: one engine per spool, each behind a spool host with the local
// (apply-at-once) command log. Everything is lost when the process ends.

import { randomBytes } from 'node:crypto';
import { type Plan, type SpoolService, SpoolEngine, resolvePlan } from '@spoolmq/engine';
import { type Clock, systemClock } from '@spoolmq/protocol';
import { LocalCommandLog } from './command-log.js';
import { CursorCodec } from './cursors.js';
import { HostedSpoolService } from './hosted-service.js';
import { PatternCache } from './patterns.js';
import { SpoolHost } from './spool-host.js';
import { TokenCodec } from './tokens.js';

export interface LocalServiceOptions {
  /** Spools served; default `['default']`. Names `^[A-Za-z0-9_:-]{1,63}$`, no repeats. */
  readonly spools?: readonly string[];
  /** Default: the system clock. Tests pass a ManualClock. */
  readonly clock?: Clock;
  /** HMAC secret of tokens and cursors, >= 16 bytes; default 32 random bytes. */
  readonly tokenSecret?: Uint8Array;
  /** Plan limits overriding the local defaults. */
  readonly plan?: Partial<Plan>;
  /** Long-poll receivers parked per queue (default 10,000). */
  readonly waitersPerQueueMax?: number;
}

export type LocalService = SpoolService & {
  /** Cancels timers; pending long polls resolve null; later calls reject with 503 unavailable. */
  close(): Promise<void>;
};

const SPOOL_NAME = /^[A-Za-z0-9_:-]{1,63}$/;

/** Creates the in-memory service. Throws `Error` on invalid options. */
export function createLocalService(options: LocalServiceOptions = {}): LocalService {
  const spools = options.spools ?? ['default'];
  if (spools.length === 0) throw new Error('local service: at least one spool is required');
  const plan = resolvePlan(options.plan);
  const clock = options.clock ?? systemClock;
  const secret = options.tokenSecret ?? randomBytes(32);
  // A fresh salt per instance: tokens of an earlier instance never verify, even with the same
  // secret, because seqs and queue generations start over in a new in-memory spool.
  const salt = randomBytes(16);
  const tokens = new TokenCodec(secret, salt);
  const cursors = new CursorCodec(secret, salt);
  const patterns = new PatternCache();
  const hosts = new Map<string, SpoolHost>();
  for (const name of spools) {
    if (!SPOOL_NAME.test(name)) {
      throw new Error(`local service: invalid spool name ${JSON.stringify(name)}`);
    }
    if (hosts.has(name)) throw new Error(`local service: spool ${name} listed twice`);
    const engine = new SpoolEngine(plan);
    const host = new SpoolHost({
      name,
      engine,
      log: new LocalCommandLog(engine, clock),
      clock,
      tokens,
      cursors,
      patterns,
      appliesSynchronously: true,
      ...(options.waitersPerQueueMax === undefined
        ? {}
        : { waitersPerQueueMax: options.waitersPerQueueMax }),
    });
    host.openPrimary();
    hosts.set(name, host);
  }
  const service = new HostedSpoolService(hosts);
  return Object.assign(service, {
    close: async () => {
      for (const host of hosts.values()) host.close();
      patterns.clear();
    },
  });
}
