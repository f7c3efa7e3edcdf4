// A CliIo for tests: output captured in strings, log records captured as parsed JSON.

import { pino } from 'pino';
import type { CliIo } from '../src/index.js';

export interface CapturedIo {
  readonly io: CliIo;
  readonly out: () => string;
  readonly err: () => string;
  readonly logs: Array<Record<string, unknown>>;
  readonly shutdown: AbortController;
  /** Resolves with the first log record `match` accepts (checked as records arrive). */
  waitForLog(match: (record: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

export function captureIo(env: Record<string, string | undefined> = {}): CapturedIo {
  let out = '';
  let err = '';
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<{ match: (r: Record<string, unknown>) => boolean; resolve: (r: Record<string, unknown>) => void }> = [];
  const logger = pino(
    { level: 'info' },
    {
      write(line: string) {
        const record = JSON.parse(line) as Record<string, unknown>;
        logs.push(record);
        for (const waiter of waiters.splice(0)) {
          if (waiter.match(record)) waiter.resolve(record);
          else waiters.push(waiter);
        }
      },
    },
  );
  const shutdown = new AbortController();
  return {
    io: {
      env,
      shutdown: shutdown.signal,
      logger,
      out: (text) => {
        out += text;
      },
      err: (text) => {
        err += text;
      },
    },
    out: () => out,
    err: () => err,
    logs,
    shutdown,
    waitForLog: (match) => {
      const found = logs.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}
