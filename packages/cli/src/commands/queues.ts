// `mq queues`: list, create, describe, update and delete the queues of a spool.

import type { MqClient } from '@spoolmq/client';
import type { Command, CommandContext } from '../command.js';
import {
  CONNECTION_USAGE,
  clientOf,
  parseDataPlaneArgs,
  reportFailures,
  table,
} from '../data-plane.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: mq queues [list]
       mq queues create NAME [--lease-timeout SECONDS] [--max-retries N] [--dedup-window SECONDS]
       mq queues describe NAME
       mq queues update NAME [--lease-timeout SECONDS] [--max-retries N] [--dedup-window SECONDS]
       mq queues delete NAME [--force]

Lists the spool's queues with their depth, creates one (settings not given take the server's
defaults), shows one with its settings, changes the settings given (the others stay; a new
lease timeout applies to leases issued afterwards), or deletes one: drained first (202 until
empty), or at once with --force (its messages are gone).

Options:
  --lease-timeout SECONDS, --max-retries N, --dedup-window SECONDS
                                             Settings of a new or updated queue.
  --force                                    Delete without draining.
${CONNECTION_USAGE}
  -h, --help                                 Show this help.`;

type Flags = Record<string, string | boolean | undefined>;

function whole(flags: Flags, name: string): number | undefined {
  const value = flags[name];
  if (typeof value !== 'string') return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}

/** The settings the flags give (only those given). */
function settingsOf(flags: Flags): {
  leaseTimeoutSeconds?: number;
  maxRetries?: number;
  dedupWindowSeconds?: number;
} {
  const leaseTimeoutSeconds = whole(flags, 'lease-timeout');
  const maxRetries = whole(flags, 'max-retries');
  const dedupWindowSeconds = whole(flags, 'dedup-window');
  return {
    ...(leaseTimeoutSeconds === undefined ? {} : { leaseTimeoutSeconds }),
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(dedupWindowSeconds === undefined ? {} : { dedupWindowSeconds }),
  };
}

async function list(client: MqClient, json: boolean, context: CommandContext): Promise<number> {
  const page = await client.stats({ limit: 1000 });
  const queues = page.queues.items;
  if (json) {
    context.out(`${JSON.stringify(queues)}\n`);
    return 0;
  }
  const rows = queues.map((q) => [
    q.name,
    q.state,
    String(q.stats.visible),
    String(q.stats.delayed),
    String(q.stats.pending),
    String(q.stats.failed),
  ]);
  context.out(table(['QUEUE', 'STATE', 'VISIBLE', 'DELAYED', 'PENDING', 'FAILED'], rows));
  if (page.queues.next !== undefined) context.out(`(first 1000 of ${page.queueCount} queues)\n`);
  return 0;
}

async function act(
  client: MqClient,
  action: string,
  name: string,
  flags: Flags,
  context: CommandContext,
): Promise<number> {
  const json = flags['json'] === true;
  if (action === 'create') {
    const queue = await client.createQueue(name, settingsOf(flags));
    context.out(json ? `${JSON.stringify(queue)}\n` : `created ${queue.name}\n`);
  } else if (action === 'update') {
    const settings = settingsOf(flags);
    if (Object.keys(settings).length === 0) {
      throw new UsageError('update needs a setting to change');
    }
    const queue = await client.updateQueue(name, settings);
    context.out(json ? `${JSON.stringify(queue)}\n` : `updated ${queue.name}\n`);
  } else if (action === 'describe') {
    const queue = await client.describeQueue(name);
    context.out(`${JSON.stringify(queue, null, json ? 0 : 2)}\n`);
  } else {
    const outcome = await client.deleteQueue(name, flags['force'] === true ? 'force' : 'drain');
    const text = outcome === 'deleted' ? `deleted ${name}` : `${name} drains, then goes`;
    context.out(json ? `${JSON.stringify({ queue: name, outcome })}\n` : `${text}\n`);
  }
  return 0;
}

async function runQueues(argv: readonly string[], context: CommandContext): Promise<number> {
  const { positional, flags } = parseDataPlaneArgs(argv, {
    'lease-timeout': { type: 'string' },
    'max-retries': { type: 'string' },
    'dedup-window': { type: 'string' },
    force: { type: 'boolean' },
  });
  if (flags['help'] === true) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  const [action = 'list', name, ...extra] = positional;
  if (extra.length > 0) throw new UsageError('too many arguments');
  if (action !== 'list' && !['create', 'describe', 'update', 'delete'].includes(action)) {
    throw new UsageError(`unknown action '${action}'`);
  }
  if (action !== 'list' && name === undefined) throw new UsageError(`${action} needs a queue NAME`);
  const client = clientOf(flags, context.env);
  return reportFailures(context, () =>
    action === 'list'
      ? list(client, flags['json'] === true, context)
      : act(client, action, name!, flags, context),
  );
}

export const queuesCommand: Command = {
  name: 'queues',
  summary: 'list, create, describe, update or delete queues',
  usage: USAGE,
  run: runQueues,
};
