// The gateway's options and every bound it enforces. Each buffer or list the gateway fills from
// a request has a named limit here, checked once when the app is created.

import assert from 'node:assert/strict';
import { type Clock, monotonicClock } from '@spoolmq/protocol';
import type { Authenticate } from './auth.js';

export interface GatewayOptions {
  /**
   * Checks an API key. Returns (or resolves with) the key's principal: its spool names are then
   * scoped to the account and its message size limit applies; nothing means any key acts
   * unscoped. Throws (or rejects with) an `MqError` of kind `unauthenticated` (401),
   * `account_suspended` (402), `key_blocked` (403 without a kind), `account_blocked` (403),
   * `rate_limited` (429) or `unavailable` (503). Default: every key is accepted (the local
   * variant). An AccountDirectory's `authenticate` fits.
   */
  authenticate?: Authenticate;
  /** Largest message payload in bytes, 1 .. 67,108,864; default 1,048,576 (1 MiB). */
  messageSizeMaxBytes?: number;
  /** Whether `GET /metrics` is served without a key; default true. */
  metricsPublic?: boolean;
  /**
   * More Prometheus text appended to `GET /metrics` (whole lines, each ending in a newline): a
   * member's Raft groups, a gateway's member links. Called once per scrape; must not throw.
   */
  metricsExtra?: () => string;
  /**
   * More fields of `GET /readyz`'s JSON body, ready or not (a member's disk alarm: it refuses
   * sends yet stays ready, so consumers can drain it). Called once per probe; must not throw.
   */
  readyDetail?: () => Readonly<Record<string, unknown>>;
  /** Aborted on shutdown: long polls in progress end with 204, later ones answer 204 at once. */
  shutdownSignal?: AbortSignal;
  /** Receives unexpected exceptions (rendered as 500 `internal`); default writes to stderr. */
  logError?: (error: unknown, context: LogContext) => void;
  /** Told about every answered request (an access log); default none. Must not throw. */
  logRequest?: (entry: RequestLogEntry) => void;
  /**
   * Time for the gateway's deadlines, timers and request durations; default monotonicClock (real
   * timers; `nowMs` is compared only with itself, so a wall-clock step moves no deadline).
   */
  clock?: Clock;
}

/** What an error log line carries about its request. */
export interface LogContext {
  readonly operation: string;
  /** The request's id (its `X-Request-Id`, or one the gateway made; echoed in the answer). */
  readonly requestId: string;
}

export interface RequestLogEntry extends LogContext {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** The key's account, when authenticated against accounts. */
  readonly account: string | undefined;
}

export const MESSAGE_SIZE_MAX_BYTES_DEFAULT = 1_048_576;
/** Upper bound of `messageSizeMaxBytes`: a payload is buffered whole in memory. */
export const MESSAGE_SIZE_MAX_BYTES_LIMIT = 64 * 1_048_576;
/** A create or update body is a handful of integers: anything near this is not settings. */
export const JSON_BODY_MAX_BYTES = 16_384;
/** Query parameters a request may carry in total (the `queue` list of stats included). */
export const QUERY_PARAMS_MAX = 1_024;
/** `queue` parameters on a stats request: a page holds at most 1,000 queues. */
export const STATS_QUEUE_PARAMS_MAX = 1_000;
/** Longest `match` pattern in characters; queue names are at most 63, so this is generous. */
export const MATCH_PATTERN_MAX_CHARS = 512;
/** Bytes of request headers a connection may send (Node's own limit, made explicit). */
export const HEADER_MAX_BYTES = 16_384;
/** Time a client has to send its request headers. */
export const HEADERS_TIMEOUT_MS = 20_000;
/** Time a client has to send a whole request (a 1 MiB body needs ~17 KB/s). */
export const REQUEST_TIMEOUT_MS = 60_000;
/**
 * Time an idle keep-alive connection stays open. Longer than the 60 s idle timeout load
 * balancers commonly keep: a server that closes first races the balancer's next request on that
 * connection, which the client then sees as a reset or a 502 (Node's default is 5 s). Idle
 * connections are bounded by CONNECTIONS_MAX.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Connections served at once; more are refused by the listener. */
export const CONNECTIONS_MAX = 16_384;
/** Longest a graceful close waits for in-flight requests before cutting connections. */
export const CLOSE_GRACE_MS = 10_000;

export interface ResolvedOptions {
  readonly authenticate: Authenticate | undefined;
  readonly messageSizeMaxBytes: number;
  readonly metricsPublic: boolean;
  readonly metricsExtra: (() => string) | undefined;
  readonly readyDetail: (() => Readonly<Record<string, unknown>>) | undefined;
  readonly shutdownSignal: AbortSignal | undefined;
  readonly logError: (error: unknown, context: LogContext) => void;
  readonly logRequest: ((entry: RequestLogEntry) => void) | undefined;
  readonly clock: Clock;
}

function logToStderr(error: unknown, context: LogContext): void {
  console.error(`gateway: internal error in ${context.operation}:`, error);
}

/**
 * Applies defaults and checks the options. Throws (an assertion, a programming error) when
 * `messageSizeMaxBytes` is not an integer in 1 .. 67,108,864.
 */
export function resolveOptions(options: GatewayOptions = {}): ResolvedOptions {
  const messageSizeMaxBytes = options.messageSizeMaxBytes ?? MESSAGE_SIZE_MAX_BYTES_DEFAULT;
  assert(
    Number.isSafeInteger(messageSizeMaxBytes) &&
      messageSizeMaxBytes >= 1 &&
      messageSizeMaxBytes <= MESSAGE_SIZE_MAX_BYTES_LIMIT,
    `messageSizeMaxBytes must be an integer in 1..${MESSAGE_SIZE_MAX_BYTES_LIMIT}`,
  );
  assert(STATS_QUEUE_PARAMS_MAX <= QUERY_PARAMS_MAX, 'queue params must fit the query bound');
  return {
    authenticate: options.authenticate,
    messageSizeMaxBytes,
    metricsPublic: options.metricsPublic ?? true,
    metricsExtra: options.metricsExtra,
    readyDetail: options.readyDetail,
    shutdownSignal: options.shutdownSignal,
    logError: options.logError ?? logToStderr,
    logRequest: options.logRequest,
    clock: options.clock ?? monotonicClock,
  };
}
