// The pipeline every /v1 operation runs, in the order decisions.md fixes: (route, done by the
// router) -> authentication -> spool and queue names -> the operation's own validation of
// headers, query and length -> the operation. A validation failure asks the service whether
// the spool and queue exist and answers 404 instead when they do not, so a missing target wins
// over a malformed request without costing a lookup on the good path.

import type { BodyBudget } from './body-budget.js';
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { MqError, isMqError, type SpoolService } from '@spoolmq/engine';
import { authenticateRequest } from './auth.js';
import type { LongPolls } from './long-polls.js';
import type { MatchGuard } from './match-guard.js';
import type { GatewayMetrics } from './metrics.js';
import type { ResolvedOptions } from './options.js';
import { parseQuery, type Query, type QueryShape } from './query.js';
import { checkSvcHeaders, scanHeaders, type RequestHeaders } from './request-headers.js';
import { checkName, isName } from './scalars.js';

/** What @hono/node-server passes as `c.env`; absent under `app.request()`. */
export interface NodeBindings {
  readonly incoming?: IncomingMessage | { readonly rawHeaders?: readonly string[] };
  readonly outgoing?: ServerResponse;
}

export type GatewayEnv = {
  Bindings: NodeBindings | undefined;
  Variables: { operation: string; requestId: string; account: string | undefined };
};

export type GatewayContext = Context<GatewayEnv>;

/** Everything an operation needs, shared by all requests of one app. */
export interface GatewayDeps {
  readonly service: SpoolService;
  readonly options: ResolvedOptions;
  readonly metrics: GatewayMetrics;
  readonly matchGuard: MatchGuard;
  readonly longPolls: LongPolls;
  /** Request body bytes being received, per process and per account. */
  readonly bodyBudget: BodyBudget;
}

export interface GatewayRequest {
  readonly c: GatewayContext;
  readonly deps: GatewayDeps;
  /** The spool's identity for the service: the account's prefix and the path's name. */
  readonly spool: string;
  /** The spool as the path names it (what responses show). */
  readonly publicSpool: string;
  /** The largest payload this request may send (the account's plan, else the gateway's). */
  readonly messageSizeMaxBytes: number;
  /** The queue named in the path, when the route has one. */
  readonly queue: string | undefined;
  readonly headers: RequestHeaders;
  readonly query: Query;
}

/**
 * What the path's queue must be for the request to make sense: `queue` must exist; `new-queue`
 * (create) need not, so only its spool is checked before a validation error is answered.
 */
export type Scope = 'spool' | 'queue' | 'new-queue';

export interface Operation<P> {
  /** Metrics label and log context. */
  readonly name: string;
  /** Lower-case `Svc-*` request headers the operation defines. */
  readonly svcHeaders: ReadonlySet<string>;
  readonly query: QueryShape;
  readonly scope: Scope;
  /** A queue named outside the path (ack-and-send's `Svc-Queue`) to check on failure. */
  readonly headerQueue?: (headers: RequestHeaders) => string | undefined;
  /** Validates headers, query, length (and a JSON body); throws 4xx `MqError`s. */
  parse(request: GatewayRequest): P | Promise<P>;
  /** Performs the operation through the service and renders the answer. */
  run(request: GatewayRequest, parsed: P): Promise<Response>;
}

/** Statuses of request validation, which a missing spool or queue (404) outranks. */
const VALIDATION_STATUSES: ReadonlySet<number> = new Set([400, 411, 413, 415]);

function rawHeadersOf(c: GatewayContext): readonly string[] | undefined {
  const raw = c.env?.incoming?.rawHeaders;
  return Array.isArray(raw) ? (raw as string[]) : undefined;
}

/**
 * Rethrows `error`, unless it is a validation error and the target turns out not to exist, in
 * which case the service's 404 is thrown instead. Any other answer of the lookup is ignored.
 */
async function outrankedBy404(
  service: SpoolService,
  spool: string,
  queue: string | undefined,
  error: unknown,
): Promise<never> {
  if (isMqError(error) && VALIDATION_STATUSES.has(error.status)) {
    try {
      await service.checkTarget(spool, queue);
    } catch (lookup) {
      if (isMqError(lookup) && lookup.status === 404) throw lookup;
    }
  }
  throw error;
}

function targetQueueOf<P>(
  operation: Operation<P>,
  queue: string | undefined,
  headers: RequestHeaders,
): string | undefined {
  if (operation.scope === 'queue') return queue;
  const named = operation.headerQueue?.(headers);
  return named !== undefined && isName(named) ? named : undefined;
}

/** Runs `operation` for the request in `c` through the whole pipeline; errors propagate. */
export async function runOperation<P>(
  c: GatewayContext,
  deps: GatewayDeps,
  operation: Operation<P>,
): Promise<Response> {
  c.set('operation', operation.name);
  const headers = scanHeaders(rawHeadersOf(c), c.req.raw.headers);
  const principal = await authenticateRequest(headers.authorization, deps.options.authenticate);
  if (principal) c.set('account', principal.accountId);
  const publicSpool = checkName('spool', c.req.param('spool') ?? '');
  const prefix = principal?.spoolPrefix ?? '';
  const spool = prefix + publicSpool;
  const messageSizeMaxBytes = principal?.messageSizeMaxBytes ?? deps.options.messageSizeMaxBytes;
  const queue = operation.scope === 'spool' ? undefined : (c.req.param('queue') ?? '');
  let request: GatewayRequest;
  let parsed: P;
  try {
    if (queue !== undefined) checkName('queue', queue);
    checkSvcHeaders(headers, operation.svcHeaders);
    const query = parseQuery(c.req.url, operation.query);
    request = { c, deps, spool, publicSpool, messageSizeMaxBytes, queue, headers, query };
    parsed = await operation.parse(request);
  } catch (error) {
    // A malformed path queue cannot exist: only the spool is worth checking then.
    const target =
      queue !== undefined && !isName(queue) ? undefined : targetQueueOf(operation, queue, headers);
    return outrankedBy404(deps.service, spool, target, error).catch((e: unknown) => {
      throw unscoped(e, prefix);
    });
  }
  if (prefix === '') return operation.run(request, parsed);
  try {
    return await operation.run(request, parsed);
  } catch (error) {
    throw unscoped(error, prefix);
  }
}

/**
 * The error as the account sees it: a message naming the spool by its cluster identity
 * (`<account>/<spool>`) names it by the path's name instead.
 */
function unscoped(error: unknown, prefix: string): unknown {
  if (prefix === '' || !isMqError(error) || !error.message.includes(prefix)) return error;
  const message = error.message.split(prefix).join('');
  return new MqError(error.kind, message, error.details);
}

/** The path's queue of a queue-scoped operation (the router guarantees it is there). */
export function pathQueue(request: GatewayRequest): string {
  assert(request.queue !== undefined, 'queue-scoped routes carry a queue');
  return request.queue;
}
