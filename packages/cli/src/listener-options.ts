// `--connections-per-address` (MQ_CONNECTIONS_PER_ADDRESS) of `mq serve`, `mq member` and
// `mq gateway`: how many connections one source address may hold on the public listener. Behind
// a load balancer every client shares the balancer's few addresses; raise it there.

import { PUBLIC_CONNECTION_LIMITS } from '@spoolmq/gateway';
import { type Env, flagOrEnv } from './cluster-options.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const LISTENER_FLAGS = { 'connections-per-address': { type: 'string' } } as const;

export const LISTENER_USAGE = `\
  --connections-per-address N
                      Connections one address may hold on the API
                      (1-${PUBLIC_CONNECTION_LIMITS.totalMax};
                      default ${PUBLIC_CONNECTION_LIMITS.perAddressMax}).
                      Env MQ_CONNECTIONS_PER_ADDRESS.`;

/** The per-address connection bound; UsageError outside 1..the total bound. */
export function listenerOf(flags: Flags, env: Env): { readonly connectionsPerAddress: number } {
  const given = flagOrEnv(flags, 'connections-per-address', env, 'MQ_CONNECTIONS_PER_ADDRESS');
  if (given === undefined) return { connectionsPerAddress: PUBLIC_CONNECTION_LIMITS.perAddressMax };
  const value = Number(given.value);
  const max = PUBLIC_CONNECTION_LIMITS.totalMax;
  if (!/^\d{1,5}$/.test(given.value) || value < 1 || value > max) {
    throw new UsageError(`${given.source} must be 1-${max}, got '${given.value}'`);
  }
  return { connectionsPerAddress: value };
}

/** The public listener's connection limits with the chosen per-address bound. */
export function publicConnectionLimits(connectionsPerAddress: number) {
  return { ...PUBLIC_CONNECTION_LIMITS, perAddressMax: connectionsPerAddress };
}
