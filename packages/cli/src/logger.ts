// The CLI's logger: pino JSON lines on stderr, written synchronously so that a line logged just
// before exit is never lost, and so stdout stays free for command output.

import { type Logger, pino } from 'pino';

export type { Logger };

/** A logger writing JSON lines to file descriptor 2 (stderr); `level` as pino's, default info. */
export function createLogger(level = 'info'): Logger {
  return pino({ level, base: { name: 'mq' } }, pino.destination({ dest: 2, sync: true }));
}
