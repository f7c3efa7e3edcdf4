// Where the gateway and the member RPC report unexpected exceptions: the command's pino logger
// (one JSON line each) instead of their default, a bare line on stderr.

import type { Logger } from './logger.js';

type LogError<Context> = (error: unknown, context: Context) => void;

/** `logError` for startHttpServer: unexpected request errors (answered 500) to `logger`. */
export function gatewayLogOptions(
  logger: Logger | undefined,
): { logError?: LogError<{ readonly operation: string }> } {
  if (logger === undefined) return {};
  return {
    logError: (error, context) => logger.error({ err: error, ...context }, 'internal error'),
  };
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
