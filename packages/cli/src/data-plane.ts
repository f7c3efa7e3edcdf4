// What the data-plane commands (`mq send`, `mq recv`, `mq queues`, `mq stats`) share: where the
// API is and which key to use, from flags, else the environment (MQ_URL, MQ_KEY, MQ_SPOOL), else
// a small JSON config file ($MQ_CONFIG, default ~/.config/mq/config.json: {"url", "key",
// "spool"}); and one sentence, not a stack trace, when a call fails.

import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MqClient, MqClientError, MqTransportError } from '@spoolmq/client';
import { parseFlags } from './args.js';
import { type Env, flagOrEnv } from './cluster-options.js';
import type { CommandContext } from './command.js';
import { UsageError } from './usage-error.js';

type Flags = Record<string, string | boolean | undefined>;

export const API_URL_DEFAULT = 'http://127.0.0.1:8080/v1';

export const CONNECTION_FLAGS = {
  url: { type: 'string' },
  key: { type: 'string' },
  spool: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const CONNECTION_USAGE = `Connection (a flag, else the environment, else the config file
$MQ_CONFIG or ~/.config/mq/config.json):
  --url URL       The API, e.g. ${API_URL_DEFAULT} (MQ_URL; default that).
  --key KEY       An API key (MQ_KEY). Required: \`mq admin keys create ACCOUNT\` makes one.
  --spool NAME    The spool (MQ_SPOOL; default default).
  --json          Print JSON instead of text.`;

interface ConfigFile {
  readonly url?: string;
  readonly key?: string;
  readonly spool?: string;
}

function readConfig(env: Env): ConfigFile {
  const path = env['MQ_CONFIG'] ?? join(env['HOME'] ?? homedir(), '.config', 'mq', 'config.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    if (env['MQ_CONFIG'] !== undefined) throw new UsageError(`cannot read MQ_CONFIG ${path}`);
    return {};
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
    return parsed as ConfigFile;
  } catch {
    throw new UsageError(`${path} is not a JSON object like {"url": "...", "key": "..."}`);
  }
}

/**
 * Splits `argv` into its leading words (queue, body, handle...) and the flags after them, parsed
 * against the connection flags plus `extra`. UsageError for an unknown flag.
 */
export function parseDataPlaneArgs(
  argv: readonly string[],
  extra: Record<string, { readonly type: 'string' | 'boolean' }>,
): { positional: readonly string[]; flags: Flags } {
  const split = argv.findIndex((arg) => arg.startsWith('-'));
  const positional = split < 0 ? argv : argv.slice(0, split);
  const flags = parseFlags(split < 0 ? [] : argv.slice(split), {
    ...CONNECTION_FLAGS,
    ...extra,
    help: { type: 'boolean', short: 'h' },
  });
  return { positional, flags };
}

/** A client for the API the flags, environment or config file name. UsageError without a key. */
export function clientOf(flags: Flags, env: Env): MqClient {
  const config = readConfig(env);
  const url = flagOrEnv(flags, 'url', env, 'MQ_URL')?.value ?? config.url ?? API_URL_DEFAULT;
  const key = flagOrEnv(flags, 'key', env, 'MQ_KEY')?.value ?? config.key;
  const spool = flagOrEnv(flags, 'spool', env, 'MQ_SPOOL')?.value ?? config.spool ?? 'default';
  if (!/^https?:\/\//.test(url)) {
    throw new UsageError(`the API URL must start with http:// or https://, got '${url}'`);
  }
  if (key === undefined || key === '') {
    throw new UsageError(
      'an API key is needed: pass --key, set MQ_KEY, or put "key" in the config file',
    );
  }
  return new MqClient({ baseUrl: url, apiKey: key, spool, sendRetry: { retries: 2 } });
}

/** One sentence for a failed call: what the server said, or that it could not be reached. */
export function describeFailure(error: unknown): string {
  if (error instanceof MqClientError) {
    const kind = error.kind === undefined ? '' : ` ${error.kind}`;
    return `the server answered ${error.status}${kind}: ${error.message}`;
  }
  if (error instanceof MqTransportError) {
    return `no answer from the server (${error.message}); is it running at that URL?`;
  }
  return error instanceof Error ? error.message : String(error);
}

/** Runs `work`; a failed call prints its sentence on stderr and exits 1. */
export async function reportFailures(
  context: CommandContext,
  work: () => Promise<number>,
): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    (context.err ?? context.out)(`mq: ${describeFailure(error)}\n`);
    return 1;
  }
}

/** Rows as an aligned text table with a header. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
