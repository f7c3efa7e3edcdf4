// Dispatch of `mq <command> [flags]`: global flags (--help, --version), then the command table.
// Usage errors print the relevant usage to stderr and give exit status 2.

import type { CommandContext } from './command.js';
import { COMMANDS, type CommandEntry } from './command-table.js';
import { EXIT_USAGE, UsageError } from './usage-error.js';
import { cliVersion } from './version.js';

export interface CliIo extends CommandContext {
  /** Where usage errors go (stderr in main). */
  readonly err: (text: string) => void;
}

/** The general usage: the command list. */
export function generalUsage(
  commands: ReadonlyMap<string, Pick<CommandEntry, 'name' | 'summary'>> = COMMANDS,
): string {
  const width = Math.max(...[...commands.keys(), 'help'].map((name) => name.length));
  const lines = [...commands.values()].map(
    (command) => `  ${command.name.padEnd(width)}  ${command.summary}`,
  );
  lines.push(`  ${'help'.padEnd(width)}  show help for mq or one command (mq help local)`);
  return [
    'Usage: mq <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Options:',
    '  -h, --help     show this help',
    '  -v, --version  print the version',
  ].join('\n');
}

/**
 * Runs one command line (argv without `node` and the script). Resolves the exit status:
 * the command's own, 0 for help and version, 2 for a usage error. Other errors reject.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.err(`${generalUsage()}\n`);
    return EXIT_USAGE;
  }
  if (name === '--version' || name === '-v' || name === 'version') {
    io.out(`${cliVersion()}\n`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') return help(rest, io);
  const entry = COMMANDS.get(name);
  if (entry === undefined) return usageError(`unknown command '${name}'`, generalUsage(), io);
  const command = await entry.load();
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message, command.usage, io);
    throw error;
  }
}

async function help(argv: readonly string[], io: CliIo): Promise<number> {
  const [topic, ...extra] = argv;
  if (topic === undefined) {
    io.out(`${generalUsage()}\n`);
    return 0;
  }
  const entry = COMMANDS.get(topic);
  if (entry === undefined || extra.length > 0) {
    return usageError(`no help for '${argv.join(' ')}'`, generalUsage(), io);
  }
  io.out(`${(await entry.load()).usage}\n`);
  return 0;
}

function usageError(message: string, usage: string, io: CliIo): number {
  io.err(`mq: ${message}\n\n${usage}\n`);
  return EXIT_USAGE;
}
