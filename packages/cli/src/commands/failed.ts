// `mq redrive QUEUE` and `mq discard QUEUE`: the failure queue, from its head, through the
// interface's own recover and discard calls; and `mq peek HANDLE`. A redrive stops at the count
// of failed messages it began with (messages that fail again are not chased round), so it ends;
// running it again resumes where it stopped.

import type { MqClient } from '@spoolmq/client';
import type { Command, CommandContext } from '../command.js';
import {
  CONNECTION_USAGE,
  clientOf,
  parseDataPlaneArgs,
  reportFailures,
} from '../data-plane.js';
import { UsageError } from '../usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

function countOf(flags: Flags): number | undefined {
  const text = flags['count'];
  if (typeof text !== 'string') return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) throw new UsageError('--count must be >= 1');
  return Number(text);
}

/** Recovers or discards failed messages of `queue` from the head; the number moved. */
async function drainFailed(
  client: MqClient,
  queue: string,
  action: 'recover' | 'discard',
  limit: number | undefined,
  context: CommandContext,
): Promise<number> {
  const page = await client.stats({ queues: [queue] });
  const failed = page.queues.items.find((q) => q.name === queue)?.stats.failed ?? 0;
  const total = Math.min(limit ?? Infinity, failed);
  const err = context.err ?? (() => undefined);
  const verb = action === 'recover' ? 'recovered' : 'discarded';
  let moved = 0;
  while (moved < total && !context.shutdown.aborted) {
    const head = await client.failureHead(queue);
    if (head === null) break;
    if (action === 'recover') await client.recover({ lease: head.lease });
    else await client.discard({ lease: head.lease });
    moved += 1;
    if (moved % 100 === 0 || moved === total) err(`\r${verb} ${moved} of ${total}`);
  }
  if (moved > 0) err('\n');
  return moved;
}

const REDRIVE_USAGE = `Usage: mq redrive QUEUE [--count N]

Moves QUEUE's failed messages back to visible, oldest first, with the interface's recover call:
all that were failed when it began, or the first N. Shows its progress on standard error; Ctrl-C
stops it, and running it again goes on from there.

Options:
  --count N     Recover at most N messages.
${CONNECTION_USAGE}
  -h, --help    Show this help.`;

const DISCARD_USAGE = `Usage: mq discard QUEUE [--count N]
       mq discard --handle HANDLE

Deletes QUEUE's failed messages, oldest first (all that were failed when it began, or the first
N), or the one message a send or listing handle names.

Options:
  --count N        Discard at most N failed messages.
  --handle HANDLE  Discard the message this handle names instead.
${CONNECTION_USAGE}
  -h, --help       Show this help.`;

const PEEK_USAGE = `Usage: mq peek HANDLE

Prints the message a handle names (from \`mq send --handle\` or a listing) without moving it:
its payload on standard output, its id, state and retries on standard error (--json: one object).

Options:
${CONNECTION_USAGE}
  -h, --help    Show this help.`;

async function runFailed(
  action: 'recover' | 'discard',
  usage: string,
  argv: readonly string[],
  context: CommandContext,
): Promise<number> {
  const extraFlags = { count: { type: 'string' }, handle: { type: 'string' } } as const;
  const { positional, flags } = parseDataPlaneArgs(argv, extraFlags);
  if (flags['help'] === true) {
    context.out(`${usage}\n`);
    return 0;
  }
  const handle = flags['handle'];
  if (action === 'discard' && typeof handle === 'string') {
    if (positional.length > 0) throw new UsageError('give a QUEUE or --handle, not both');
    const client = clientOf(flags, context.env);
    return reportFailures(context, async () => {
      await client.discard({ handle });
      context.out(flags['json'] === true ? '{"discarded":1}\n' : 'discarded 1\n');
      return 0;
    });
  }
  if (typeof handle === 'string') throw new UsageError('--handle is for mq discard');
  const [queue, ...extra] = positional;
  if (queue === undefined || extra.length > 0) throw new UsageError('say one QUEUE');
  const limit = countOf(flags);
  const client = clientOf(flags, context.env);
  return reportFailures(context, async () => {
    const moved = await drainFailed(client, queue, action, limit, context);
    const key = action === 'recover' ? 'recovered' : 'discarded';
    const text = flags['json'] === true ? JSON.stringify({ [key]: moved }) : `${key} ${moved}`;
    context.out(`${text}\n`);
    return 0;
  });
}

async function runPeek(argv: readonly string[], context: CommandContext): Promise<number> {
  const { positional, flags } = parseDataPlaneArgs(argv, {});
  if (flags['help'] === true) {
    context.out(`${PEEK_USAGE}\n`);
    return 0;
  }
  const [handle, ...extra] = positional;
  if (handle === undefined || extra.length > 0) throw new UsageError('say one HANDLE');
  const client = clientOf(flags, context.env);
  return reportFailures(context, async () => {
    const { body, messageId, state, retries } = await client.peek(handle);
    if (flags['json'] === true) {
      const text = Buffer.from(body).toString('base64');
      context.out(`${JSON.stringify({ messageId, state, retries, base64: text })}\n`);
    } else {
      context.out(Buffer.from(body).toString('utf8'));
      (context.err ?? context.out)(`\nmessage ${messageId}, ${state}, retries ${retries}\n`);
    }
    return 0;
  });
}

export const redriveCommand: Command = {
  name: 'redrive',
  summary: "move a queue's failed messages back to visible (all or --count N)",
  usage: REDRIVE_USAGE,
  run: (argv, context) => runFailed('recover', REDRIVE_USAGE, argv, context),
};

export const discardCommand: Command = {
  name: 'discard',
  summary: "delete a queue's failed messages, or one message by its handle",
  usage: DISCARD_USAGE,
  run: (argv, context) => runFailed('discard', DISCARD_USAGE, argv, context),
};

export const peekCommand: Command = {
  name: 'peek',
  summary: 'print the message a handle names without moving it',
  usage: PEEK_USAGE,
  run: runPeek,
};
