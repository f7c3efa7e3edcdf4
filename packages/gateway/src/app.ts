// The Hono app serving the /v1 interface over any `SpoolService`, plus /healthz, /readyz and
// /metrics. All HTTP concerns live here and in the operation files; no queue logic does.

import { BodyBudget } from './body-budget.js';
import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { MqError, type SpoolService } from '@spoolmq/engine';
import { authenticateRequest } from './auth.js';
import { errorResponse, mqErrorResponse } from './error-response.js';
import { CONSOLE_PATH, consoleResponse } from './console/console-routes.js';
import { sharedMatchGuard } from './match-guard.js';
import { LongPolls } from './long-polls.js';
import { GatewayMetrics } from './metrics.js';
import {
  runOperation,
  type GatewayContext,
  type GatewayDeps,
  type GatewayEnv,
} from './operation.js';
import { resolveOptions, type GatewayOptions } from './options.js';
import { scanHeaders } from './request-headers.js';
import { jsonResponse } from './responses.js';
import { ROUTES } from './routes.js';
import { OPENAPI_PATH, openApiResponse } from './openapi/openapi-route.js';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';
/** A client's `X-Request-Id` is kept when this short and plain; else the gateway makes one. */
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

/** Request ids: the client's when acceptable, else `<random process prefix>-<counter>`. */
class RequestIds {
  private readonly prefix = randomBytes(4).toString('hex');
  private next = 0;

  of(given: string | undefined): string {
    if (given !== undefined && REQUEST_ID_PATTERN.test(given)) return given;
    this.next = this.next === Number.MAX_SAFE_INTEGER ? 0 : this.next + 1;
    return `${this.prefix}-${this.next.toString(36)}`;
  }
}

function methodNotAllowed(allowed: readonly string[]): Response {
  const response = mqErrorResponse(
    new MqError('method_not_allowed', `method not allowed; use ${allowed.join(', ')}`),
  );
  response.headers.set('allow', allowed.join(', '));
  return response;
}

/** Serves a path outside the /v1 table: `handler` for GET, 405 for anything else. */
function getOnly(handler: (c: GatewayContext) => Response | Promise<Response>) {
  return (c: GatewayContext): Response | Promise<Response> =>
    c.req.method === 'GET' ? handler(c) : methodNotAllowed(['GET']);
}

function registerProbes(app: Hono<GatewayEnv>, deps: GatewayDeps): void {
  app.all(
    '/healthz',
    getOnly((c) => {
      c.set('operation', 'healthz');
      return jsonResponse(200, { status: 'ok' });
    }),
  );
  app.all(
    '/readyz',
    getOnly((c) => {
      c.set('operation', 'readyz');
      const detail = deps.options.readyDetail?.() ?? {};
      if (deps.service.ready()) return jsonResponse(200, { ...detail, status: 'ready' });
      const message = 'not every spool has a known primary';
      if (Object.keys(detail).length === 0) {
        return mqErrorResponse(new MqError('unavailable', message));
      }
      // The error body's shape, with the detail (nested objects) as its details.
      const body = { kind: 'unavailable', message, details: detail };
      return jsonResponse(503, body, { 'retry-after': '1' });
    }),
  );
  app.all(
    '/metrics',
    getOnly(async (c) => {
      c.set('operation', 'metrics');
      if (!deps.options.metricsPublic) {
        const headers = scanHeaders(undefined, c.req.raw.headers);
        await authenticateRequest(headers.authorization, deps.options.authenticate);
      }
      const headers = { 'content-type': PROMETHEUS_TEXT };
      const extra = deps.options.metricsExtra?.() ?? '';
      return new Response(deps.metrics.render() + extra, { status: 200, headers });
    }),
  );
}

/**
 * The gateway's Hono app over `service`. Serves every /v1 operation of the interface (with the
 * `inspect` alias of peek and both ack-and-send forms), GET /healthz, GET /readyz (200 iff
 * `service.ready()`) and GET /metrics (Prometheus text). Unknown paths answer 404 `not_found`,
 * known paths with another method 405 `method_not_allowed`. Throws (assertion) on invalid
 * options, see `resolveOptions`.
 */
export function createGatewayApp(service: SpoolService, options?: GatewayOptions): Hono {
  const resolved = resolveOptions(options);
  const deps: GatewayDeps = {
    service,
    options: resolved,
    metrics: new GatewayMetrics(),
    matchGuard: sharedMatchGuard,
    longPolls: new LongPolls(resolved.shutdownSignal),
    bodyBudget: new BodyBudget(),
  };
  const app = new Hono<GatewayEnv>();
  app.use('*', requestObserver(deps, new RequestIds()));
  registerProbes(app, deps);
  const serveConsole = (c: GatewayContext): Response => {
    c.set('operation', 'console');
    return consoleResponse(c.req.method, c.req.path, 'public');
  };
  app.all(CONSOLE_PATH, serveConsole);
  app.all(`${CONSOLE_PATH}/*`, serveConsole);
  app.all(
    OPENAPI_PATH,
    getOnly((c) => {
      c.set('operation', 'openapi');
      return openApiResponse();
    }),
  );
  for (const route of ROUTES) {
    const allowed = Object.keys(route.methods);
    app.all(route.path, (c) => {
      const method = c.req.method;
      const operation = Object.hasOwn(route.methods, method) ? route.methods[method] : undefined;
      if (operation === undefined) return methodNotAllowed(allowed);
      return runOperation(c, deps, operation);
    });
  }
  app.notFound(() => mqErrorResponse(new MqError('not_found', 'no such path')));
  app.onError((error, c) =>
    errorResponse(error, (unexpected) =>
      resolved.logError(unexpected, {
        operation: c.get('operation'),
        requestId: c.get('requestId'),
      }),
    ),
  );
  // The environment type is internal (what @hono/node-server passes); callers see a plain Hono.
  return app as unknown as Hono;
}

/**
 * Middleware that names each request (its id, kept from the client when plain), times it into the
 * metrics and the request log, and closes keep-alive connections while shutting down.
 */
function requestObserver(deps: GatewayDeps, ids: RequestIds) {
  const resolved = deps.options;
  return async (c: GatewayContext, next: () => Promise<void>): Promise<void> => {
    const startMs = resolved.clock.nowMs();
    deps.metrics.started();
    c.set('operation', 'unmatched');
    c.set('account', undefined);
    const requestId = ids.of(c.req.header('x-request-id'));
    c.set('requestId', requestId);
    try {
      await next();
    } finally {
      const durationMs = resolved.clock.nowMs() - startMs;
      deps.metrics.observe(c.get('operation'), c.res.status, durationMs);
      resolved.logRequest?.({
        requestId,
        operation: c.get('operation'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs,
        account: c.get('account'),
      });
    }
    // While shutting down, no connection is kept alive past its current response.
    const closing = resolved.shutdownSignal?.aborted === true;
    const outgoing = c.env?.outgoing;
    if (outgoing !== undefined && !outgoing.headersSent) {
      // On Node's response itself: the response's own headers stay a plain record, which
      // @hono/node-server writes as it is (reading c.res.headers builds a Headers object and
      // makes it convert that back, per request).
      outgoing.setHeader('x-request-id', requestId);
      if (closing) outgoing.setHeader('connection', 'close');
      return;
    }
    c.res.headers.set('x-request-id', requestId);
    if (closing) c.res.headers.set('connection', 'close');
  };
}
