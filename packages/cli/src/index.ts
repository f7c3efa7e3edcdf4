export { runCli, generalUsage } from './cli.js';
export type { CliIo } from './cli.js';
export type { Command, CommandContext } from './command.js';
export { COMMANDS } from './command-table.js';
export { UsageError, EXIT_USAGE } from './usage-error.js';
export { parseFlags, parsePort, parseHost } from './args.js';
export { createLogger } from './logger.js';
export type { Logger } from './logger.js';
export { cliVersion } from './version.js';
export {
  localCommand,
  parseLocalArgs,
  startLocal,
  DEFAULT_HOST,
  DEFAULT_PORT,
} from './commands/local.js';
export type { LocalHandle, LocalOptions } from './commands/local.js';
