// `mq stats`: the spool's totals and each queue's depth and counters, once or refreshed.

import type { MqClient, StatsPage } from '@spoolmq/client';
import { parseFlags } from '../args.js';
import type { Command, CommandContext } from '../command.js';
import {
  CONNECTION_FLAGS,
  CONNECTION_USAGE,
  clientOf,
  reportFailures,
  table,
} from '../data-plane.js';
import { UsageError } from '../usage-error.js';

const USAGE = `Usage: mq stats [--watch SECONDS] [--count N]

Prints the spool's message counts by state and, per queue, depth and totals (sent, acked,
failed, FAILS: messages that failed). --watch refreshes every SECONDS (1-3600) until Ctrl-C or
--count tables.

Options:
  --watch SECONDS   Print again every SECONDS.
  --count N         With --watch: stop after N tables.
${CONNECTION_USAGE}
  -h, --help        Show this help.`;

function render(page: StatsPage, atIso: string): string {
  const s = page.stats;
  const head =
    `${atIso}  ${page.queueCount} queues: ${s.visible} visible, ${s.delayed} delayed, ` +
    `${s.pending} pending, ${s.failed} failed (${s.dataBytes} bytes)\n`;
  const rows = page.queues.items.map((q) => [
    q.name,
    String(q.stats.visible),
    String(q.stats.delayed),
    String(q.stats.pending),
    String(q.stats.failed),
    String(q.stats.addedTotal),
    String(q.stats.ackedTotal),
    String(q.stats.failedTotal),
  ]);
  const header = ['QUEUE', 'VISIBLE', 'DELAYED', 'PENDING', 'FAILED', 'SENT', 'ACKED', 'FAILS'];
  return head + table(header, rows);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

async function watch(
  client: MqClient,
  everyS: number,
  count: number,
  json: boolean,
  context: CommandContext,
): Promise<number> {
  for (let printed = 0; printed < count && !context.shutdown.aborted; printed += 1) {
    if (printed > 0) await pause(everyS * 1000, context.shutdown);
    if (context.shutdown.aborted) break;
    const page = await client.stats({ limit: 1000, signal: context.shutdown });
    context.out(json ? `${JSON.stringify(page)}\n` : render(page, new Date().toISOString()));
  }
  return 0;
}

async function runStats(argv: readonly string[], context: CommandContext): Promise<number> {
  const flags = parseFlags(argv, {
    ...CONNECTION_FLAGS,
    watch: { type: 'string' },
    count: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (flags['help'] === true) {
    context.out(`${USAGE}\n`);
    return 0;
  }
  const every = typeof flags['watch'] === 'string' ? Number(flags['watch']) : 0;
  const badEvery = !Number.isSafeInteger(every) || every < 1 || every > 3600;
  if (typeof flags['watch'] === 'string' && badEvery) {
    throw new UsageError('--watch must be whole seconds 1-3600');
  }
  const countText = flags['count'];
  const count = typeof countText === 'string' ? Number(countText) : every > 0 ? Infinity : 1;
  if (typeof countText === 'string' && (!Number.isSafeInteger(count) || count < 1)) {
    throw new UsageError('--count must be a positive whole number');
  }
  const client = clientOf(flags, context.env);
  const json = flags['json'] === true;
  return reportFailures(context, () => watch(client, every, count, json, context));
}

export const statsCommand: Command = {
  name: 'stats',
  summary: "print the spool's and each queue's depth and counters (--watch refreshes)",
  usage: USAGE,
  run: runStats,
};
