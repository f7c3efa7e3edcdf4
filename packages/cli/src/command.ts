// What a subcommand is. Each lives in its own file under commands/ and is listed once in
// command-table.ts; `serve`, `member`, `gateway` and `admin` join the table the same way.

import type { Logger } from './logger.js';

export interface CommandContext {
  /** Environment variables (process.env in main; a plain object in tests). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Aborted on SIGINT/SIGTERM: a long-running command shuts down gracefully and returns. */
  readonly shutdown: AbortSignal;
  readonly logger: Logger;
  /** Where command output goes (stdout in main). */
  readonly out: (text: string) => void;
  /** Where messages for the person go (stderr in main); `out` when absent. */
  readonly err?: (text: string) => void;
}

export interface Command {
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** Full usage text, shown by `mq help <name>` and on a usage error. */
  readonly usage: string;
  /** Runs the command; resolves its exit status. Throws UsageError for a bad command line. */
  run(argv: readonly string[], context: CommandContext): Promise<number>;
}
