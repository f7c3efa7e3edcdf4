// Where the gateway and the member RPC report unexpected exceptions: the command's pino logger
// (one JSON line each) instead of their default, a bare line on stderr.

import type { LogContext, RequestLogEntry } from '@spoolmq/gateway';
import type { Logger } from './logger.js';

type LogError<Context> = (error: unknown, context: Context) => void;

/**
 * `logError` for startHttpServer: unexpected request errors (answered 500) to `logger`, with the
 * request id; with MQ_LOG_LEVEL=debug also `logRequest`, one line per answered request.
 */
export function gatewayLogOptions(logger: Logger | undefined): {
  logError?: LogError<LogContext>;
  logRequest?: (entry: RequestLogEntry) => void;
} {
  if (logger === undefined) return {};
  const logError: LogError<LogContext> = (error, context) =>
    logger.error({ err: error, ...context }, 'internal error');
  if (!logger.isLevelEnabled('debug')) return { logError };
  return { logError, logRequest: (entry) => logger.debug(entry, 'request') };
}

/** `logError` for memberServiceRegistration: unexpected member RPC errors to `logger`. */
export function rpcLogOptions(
  logger: Logger | undefined,
): { logError?: LogError<{ readonly op: string }> } {
  if (logger === undefined) return {};
  return {
    logError: (error, context) =>
      logger.error({ err: error, ...context }, 'member rpc internal error'),
  };
}
