// `mq send QUEUE [BODY]`: one message from an argument, a file (--file) or standard input.

import { readFile } from 'node:fs/promises';
import type { Command, CommandContext } from '../command.js';
import {
  CONNECTION_USAGE,
  clientOf,
  parseDataPlaneArgs,
  reportFailures,
} from '../data-plane.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: mq send QUEUE [BODY] [--file FILE] [--delay SECONDS] [--dedup-key KEY]
                [--handle]

Sends one message to QUEUE: BODY, else the bytes of --file, else standard input. Prints the
message id (and its handle with --handle). A send that got no answer is retried with a dedup key
when the queue has a dedup window, as the client library does.

Options:
  --file FILE        The payload's bytes.
  --delay SECONDS    Visible after this many seconds (0-604800).
  --dedup-key KEY    A dedup key (1-128 printable ASCII characters).
  --handle           Also print the send handle (to peek or cancel it later).
${CONNECTION_USAGE}
  -h, --help         Show this help.`;

async function readStdin(): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function runSend(argv: readonly string[], context: CommandContext): Promise<number> {
  const { positional, flags } = parseDataPlaneArgs(argv, {
    file: { type: 'string' },
    delay: { type: 'string' },
    'dedup-key': { type: 'string' },
    handle: { type: 'boolean' },
  });
  if (flags['help'] === true) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  const [queue, text, ...extra] = positional;
  if (queue === undefined || extra.length > 0) {
    throw new UsageError('say QUEUE, and at most one BODY');
  }
  if (text !== undefined && typeof flags['file'] === 'string') {
    throw new UsageError('give a BODY or --file, not both');
  }
  const delay = flags['delay'];
  if (typeof delay === 'string' && !/^\d{1,6}$/.test(delay)) {
    throw new UsageError(`--delay must be whole seconds 0-604800, got '${delay}'`);
  }
  const client = clientOf(flags, context.env);
  return reportFailures(context, async () => {
    const file = flags['file'];
    const body =
      text !== undefined
        ? new TextEncoder().encode(text)
        : typeof file === 'string'
          ? await readFile(file)
          : await readStdin();
    const result = await client.send(queue, body, {
      ...(typeof delay === 'string' ? { delaySeconds: Number(delay) } : {}),
      ...(typeof flags['dedup-key'] === 'string' ? { dedupKey: flags['dedup-key'] } : {}),
      handle: flags['handle'] === true,
    });
    if (flags['json'] === true) context.out(`${JSON.stringify(result)}\n`);
    else {
      const what = result.duplicate ? 'duplicate of' : 'sent';
      const handle = result.handle === undefined ? '' : ` handle ${result.handle}`;
      context.out(`${what} ${result.messageId}${handle}\n`);
    }
    return 0;
  });
}

export const sendCommand: Command = {
  name: 'send',
  summary: 'send a message to a queue (argument, file or stdin)',
  usage: USAGE,
  run: runSend,
};
