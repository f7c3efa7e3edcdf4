// `mq recv QUEUE`: receive one message, print it, and ack it or keep the lease.

import type { Command, CommandContext } from '../command.js';
import {
  CONNECTION_USAGE,
  clientOf,
  parseDataPlaneArgs,
  reportFailures,
} from '../data-plane.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: mq recv QUEUE [--wait SECONDS] [--ack]

Receives one message from QUEUE, waiting up to --wait seconds (0-20, default 0) for one. Prints
the payload on standard output and its id, retries and lease on standard error (all of it as one
JSON object with --json: the payload as text when it is UTF-8, else base64). With --ack the
message is acknowledged once printed; without, the lease is kept for \`mq\`-less tools or expires.
Exit status 0 with a message, 3 when none arrived.

Options:
  --wait SECONDS   Long-poll up to this long (0-20).
  --ack            Acknowledge the message after printing it.
${CONNECTION_USAGE}
  -h, --help       Show this help.`;

/** Exit status when no message arrived within the wait. */
export const EXIT_NO_MESSAGE = 3;

function payloadJson(body: Uint8Array): { text: string } | { base64: string } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(body) };
  } catch {
    return { base64: Buffer.from(body).toString('base64') };
  }
}

async function runRecv(argv: readonly string[], context: CommandContext): Promise<number> {
  const { positional, flags } = parseDataPlaneArgs(argv, {
    wait: { type: 'string' },
    ack: { type: 'boolean' },
  });
  if (flags['help'] === true) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  const [queue, ...extra] = positional;
  if (queue === undefined || extra.length > 0) throw new UsageError('say one QUEUE');
  const wait = typeof flags['wait'] === 'string' ? flags['wait'] : '0';
  if (!/^\d{1,2}$/.test(wait) || Number(wait) > 20) {
    throw new UsageError(`--wait must be whole seconds 0-20, got '${wait}'`);
  }
  const client = clientOf(flags, context.env);
  const err = context.err ?? context.out;
  return reportFailures(context, async () => {
    const waitSeconds = Number(wait);
    const delivery = await client.receive(queue, { waitSeconds, signal: context.shutdown });
    if (delivery === null) {
      err(`no message in ${queue}\n`);
      return EXIT_NO_MESSAGE;
    }
    const { body, messageId, retries, lease } = delivery;
    if (flags['json'] === true) {
      const leaseField = flags['ack'] === true ? {} : { lease };
      const answer = { messageId, retries, ...leaseField, payload: payloadJson(body) };
      context.out(`${JSON.stringify(answer)}\n`);
    } else {
      context.out(Buffer.from(body).toString('utf8'));
      const held = flags['ack'] === true ? '' : `, lease ${lease}`;
      err(`\nmessage ${messageId}, retries ${retries}${held}\n`);
    }
    if (flags['ack'] === true) await client.ack(lease);
    return 0;
  });
}

export const recvCommand: Command = {
  name: 'recv',
  summary: 'receive one message from a queue, print it, optionally ack it',
  usage: USAGE,
  run: runRecv,
};
