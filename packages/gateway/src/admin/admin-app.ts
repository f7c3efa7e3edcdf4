// The admin HTTP API: accounts, keys, plans, spools and the cluster's shape, on its own listener
// (never the public port), guarded by the admin token (`Authorization: Bearer <token>`). JSON in,
// JSON out, errors as the public API renders them. Routes (all under /admin/v1):
//   GET accounts | POST accounts {id, plan?} | GET accounts/:id
//   PATCH accounts/:id {state?, plan?}
//   POST accounts/:id/keys -> 201 {id, accountId, blocked, key} (the key is shown only here)
//   PATCH keys/:keyId {blocked} | DELETE keys/:keyId (revoke)
//   GET plans | PUT plans/:name {limits...}
//   PUT accounts/:id/spools/:spool | DELETE accounts/:id/spools/:spool
//   POST accounts/:id/spools/:spool/move {to}
//   POST accounts/:id/spools/:spool/move-replica {from, to}
//   GET cluster | POST members {id, address} | DELETE members/:id[?allowShrink=true]

import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { MqError } from '@spoolmq/engine';
import { bearerKey } from '../auth.js';
import { CONSOLE_PATH, consoleResponse } from '../console/console-routes.js';
import { errorResponse, mqErrorResponse } from '../error-response.js';
import { jsonResponse } from '../responses.js';
import type { AdminAccountState, AdminBackend, AdminPlan } from '@spoolmq/protocol';

/** Largest admin request body. */
export const ADMIN_BODY_BYTES_MAX = 16_384;
/** Shortest admin token accepted at start-up (the token guards every account). */
export const ADMIN_TOKEN_CHARS_MIN = 16;

const STATES: readonly AdminAccountState[] = ['active', 'suspended', 'blocked'];
const PLAN_FIELDS: readonly (keyof AdminPlan)[] = [
  'queuesPerSpoolMax',
  'retentionLimitSeconds',
  'retentionDefaultSeconds',
  'messagesPerSpoolMax',
  'payloadBytesPerSpoolMax',
  'messageSizeMaxBytes',
  'dedupKeysPerSpoolMax',
  'requestsPerSecond',
  'requestBurst',
];

export interface AdminAppOptions {
  /** The admin token (>= ADMIN_TOKEN_CHARS_MIN characters). */
  readonly token: string;
  readonly logError?: (error: unknown) => void;
  /**
   * This process's labelled metrics (per-queue depth and age, account and spool labels), served
   * at GET /metrics on the admin listener behind the admin token; absent: no /metrics here.
   */
  readonly metrics?: () => Promise<string>;
  /** This member's groups and storage latency for the console's cluster page (JSON). */
  readonly memberStatus?: () => object;
  /** Told of every change made and every refused token (the audit log); never sees a secret. */
  readonly audit?: (record: AdminAuditRecord) => void;
}

/**
 * One line of the audit log: a change that succeeded (its method, path and JSON body, none of
 * which carries a secret: keys are made by the server and only answered) or a refused token.
 */
export interface AdminAuditRecord {
  readonly event: 'admin_change' | 'admin_login_failed';
  readonly method: string;
  readonly path: string;
  /** The peer's address, or 'unknown' when the app runs without a socket (tests). */
  readonly client: string;
  readonly status?: number;
  readonly body?: Record<string, unknown>;
}

/** The socket's address under @hono/node-server (its env carries the incoming request). */
function clientOf(c: Context): string {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/** The request's JSON object body as the route read it (Hono caches it), else undefined. */
async function auditedBody(c: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await c.req.text());
    const isObject = typeof value === 'object' && value !== null;
    return isObject ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function invalid(field: string, message: string): MqError {
  return new MqError('invalid_argument', message, { field });
}

async function jsonBody(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  if (text.length > ADMIN_BODY_BYTES_MAX) throw new MqError('invalid_json', 'body too large');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MqError('invalid_json', 'the body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new MqError('invalid_json', 'the body is not a JSON object');
  }
  return value as Record<string, unknown>;
}

function onlyFields(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const field of Object.keys(body)) {
    if (!allowed.includes(field)) {
      throw new MqError('unknown_field', `unknown field ${field}`, { field });
    }
  }
}

function optionalString(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string`);
  return value;
}

function planOf(body: Record<string, unknown>): Partial<AdminPlan> {
  onlyFields(body, PLAN_FIELDS);
  const plan: Record<string, number> = {};
  for (const field of PLAN_FIELDS) {
    const value = body[field];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw invalid(field, `${field} must be a non-negative integer`);
    }
    plan[field] = value;
  }
  return plan as Partial<AdminPlan>;
}

/**
 * The admin API over `backend`. Throws (assertion-like Error) for a token shorter than
 * ADMIN_TOKEN_CHARS_MIN.
 */
export function createAdminApp(backend: AdminBackend, options: AdminAppOptions): Hono {
  if (options.token.length < ADMIN_TOKEN_CHARS_MIN) {
    throw new Error(`the admin token must have at least ${ADMIN_TOKEN_CHARS_MIN} characters`);
  }
  const tokenHash = sha256(options.token);
  const app = new Hono();
  const checkToken = (authorization: string | undefined): void => {
    const presented = sha256(bearerKey(authorization));
    if (!timingSafeEqual(presented, tokenHash)) {
      throw new MqError('unauthenticated', 'the admin token is not recognized');
    }
  };
  guardAdmin(app, checkToken, options.audit ?? (() => undefined));
  accountRoutes(app, backend);
  clusterRoutes(app, backend);
  app.get('/healthz', () => jsonResponse(200, { status: 'ok' }));
  registerConsoleHooks(app, options, checkToken);
  app.notFound(() => mqErrorResponse(new MqError('not_found', 'no such admin path')));
  app.onError((error) =>
    errorResponse(error, (unexpected) =>
      (options.logError ?? ((e) => console.error('admin: internal error', e)))(unexpected),
    ),
  );
  return app;
}

/** Every /admin path needs the token; a change that succeeded is audited with its body. */
function guardAdmin(
  app: Hono,
  checkToken: (authorization: string | undefined) => void,
  audit: NonNullable<AdminAppOptions['audit']>,
): void {
  app.use('/admin/*', async (c, next) => {
    const method = c.req.method;
    const path = c.req.path;
    try {
      checkToken(c.req.header('authorization'));
    } catch (error) {
      audit({ event: 'admin_login_failed', method, path, client: clientOf(c) });
      throw error;
    }
    await next();
    if (method === 'GET' || method === 'HEAD' || c.res.status >= 400) return;
    const body = await auditedBody(c);
    const status = c.res.status;
    const client = clientOf(c);
    audit({ event: 'admin_change', method, path, client, status, ...(body && { body }) });
  });
}

const ADMIN_BASE = '/admin/v1';

/** Accounts, their keys, and plans. */
function accountRoutes(app: Hono, backend: AdminBackend): void {
  app.get(`${ADMIN_BASE}/accounts`, async () =>
    jsonResponse(200, { items: await backend.listAccounts() }),
  );
  app.post(`${ADMIN_BASE}/accounts`, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, ['id', 'plan']);
    const id = optionalString(body, 'id');
    if (id === undefined) throw invalid('id', 'id is required');
    return jsonResponse(201, await backend.createAccount(id, optionalString(body, 'plan')));
  });
  app.get(`${ADMIN_BASE}/accounts/:id`, async (c) =>
    jsonResponse(200, await backend.account(c.req.param('id'))),
  );
  app.patch(`${ADMIN_BASE}/accounts/:id`, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, ['state', 'plan']);
    const state = optionalString(body, 'state');
    if (state !== undefined && !STATES.includes(state as AdminAccountState)) {
      throw invalid('state', `state must be one of ${STATES.join(', ')}`);
    }
    const plan = optionalString(body, 'plan');
    const change = {
      ...(state === undefined ? {} : { state: state as AdminAccountState }),
      ...(plan === undefined ? {} : { plan }),
    };
    return jsonResponse(200, await backend.updateAccount(c.req.param('id'), change));
  });
  app.post(`${ADMIN_BASE}/accounts/:id/keys`, async (c) =>
    jsonResponse(201, await backend.createKey(c.req.param('id'))),
  );
  app.patch(`${ADMIN_BASE}/keys/:keyId`, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, ['blocked']);
    if (typeof body['blocked'] !== 'boolean') throw invalid('blocked', 'blocked must be a boolean');
    return jsonResponse(200, await backend.setKeyBlocked(c.req.param('keyId'), body['blocked']));
  });
  app.delete(`${ADMIN_BASE}/keys/:keyId`, async (c) => {
    await backend.revokeKey(c.req.param('keyId'));
    return new Response(null, { status: 204 });
  });
  app.get(`${ADMIN_BASE}/plans`, async () => jsonResponse(200, await backend.listPlans()));
  app.put(`${ADMIN_BASE}/plans/:name`, async (c) =>
    jsonResponse(200, await backend.putPlan(c.req.param('name'), planOf(await jsonBody(c)))),
  );
}

/** Spools, their moves, and the cluster's members. */
function clusterRoutes(app: Hono, backend: AdminBackend): void {
  app.put(`${ADMIN_BASE}/accounts/:id/spools/:spool`, async (c) =>
    jsonResponse(201, await backend.createSpool(c.req.param('id'), c.req.param('spool'))),
  );
  app.delete(`${ADMIN_BASE}/accounts/:id/spools/:spool`, async (c) => {
    await backend.deleteSpool(c.req.param('id'), c.req.param('spool'));
    return new Response(null, { status: 204 });
  });
  app.post(`${ADMIN_BASE}/accounts/:id/spools/:spool/move`, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, ['to']);
    const to = optionalString(body, 'to');
    if (to === undefined) throw invalid('to', 'to (a member id) is required');
    return jsonResponse(
      200,
      await backend.moveSpool(c.req.param('id'), c.req.param('spool'), to),
    );
  });
  app.post(`${ADMIN_BASE}/accounts/:id/spools/:spool/move-replica`, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, ['from', 'to']);
    const from = optionalString(body, 'from');
    const to = optionalString(body, 'to');
    if (from === undefined) {
      throw invalid('from', 'from (the member giving up its replica) is required');
    }
    if (to === undefined) throw invalid('to', 'to (the member taking the replica) is required');
    return jsonResponse(
      200,
      await backend.moveReplica(c.req.param('id'), c.req.param('spool'), from, to),
    );
  });
  app.get(`${ADMIN_BASE}/cluster`, async () => jsonResponse(200, await backend.cluster()));
  app.post(`${ADMIN_BASE}/members`, async (c) => {
    const body = await jsonBody(c);
    onlyFields(body, ['id', 'address']);
    const id = optionalString(body, 'id');
    const address = optionalString(body, 'address');
    if (id === undefined) throw invalid('id', 'id (the new member id) is required');
    if (address === undefined) throw invalid('address', 'address (host:port) is required');
    return jsonResponse(200, await backend.addMember(id, address));
  });
  app.delete(`${ADMIN_BASE}/members/:id`, async (c) => {
    const allowShrink = c.req.query('allowShrink');
    if (allowShrink !== undefined && allowShrink !== 'true' && allowShrink !== 'false') {
      throw invalid('allowShrink', 'allowShrink must be true or false');
    }
    const options = { allowShrink: allowShrink === 'true' };
    return jsonResponse(200, await backend.removeMember(c.req.param('id'), options));
  });
}

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** The console's files, /admin/v1/member-status and /metrics (the latter two behind the token). */
function registerConsoleHooks(
  app: Hono,
  options: AdminAppOptions,
  checkToken: (authorization: string | undefined) => void,
): void {
  const serveConsole = (c: Context): Response => consoleResponse(c.req.method, c.req.path, 'admin');
  app.all(CONSOLE_PATH, serveConsole);
  app.all(`${CONSOLE_PATH}/*`, serveConsole);
  const status = options.memberStatus;
  if (status !== undefined) {
    app.get('/admin/v1/member-status', () => jsonResponse(200, status()));
  }
  const metrics = options.metrics;
  if (metrics !== undefined) {
    app.get('/metrics', async (c) => {
      checkToken(c.req.header('authorization'));
      return new Response(await metrics(), { headers: { 'content-type': PROMETHEUS_TEXT } });
    });
  }
}
