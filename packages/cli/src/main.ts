#!/usr/bin/env node
// Entry point of the `mq` command: wires process signals, stdio and the environment into
// runCli and exits with its status. A second SIGINT/SIGTERM during shutdown exits at once.

import { runCli } from './cli.js';
import { createLogger } from './logger.js';
import { startFailureSentence } from './start-failure.js';

/** Exit status when a second signal cuts a graceful shutdown short (128 + SIGINT). */
const EXIT_FORCED = 130;

async function main(): Promise<void> {
  // Everything mq writes (storage, snapshots, tokens, keys) is for this user alone: new files
  // 0600 and directories 0700, whatever the shell's umask.
  process.umask(0o077);
  const logger = createLogger(process.env['MQ_LOG_LEVEL'] ?? 'info');
  const shutdown = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (shutdown.signal.aborted) {
      logger.warn({ signal }, 'second signal: exiting without waiting');
      process.exit(EXIT_FORCED);
    }
    logger.info({ signal }, 'signal received: shutting down gracefully');
    shutdown.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let status: number;
  try {
    status = await runCli(process.argv.slice(2), {
      env: process.env,
      shutdown: shutdown.signal,
      logger,
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
  } catch (error) {
    const sentence = startFailureSentence(error);
    if (sentence === null) logger.fatal({ err: error }, 'mq failed');
    else process.stderr.write(`mq: ${sentence}\n`);
    status = 1;
  }
  // Exit explicitly: a stray handle (a socket a peer keeps open) must not hold the process.
  process.stdout.write('', () => process.exit(status));
}

void main();
