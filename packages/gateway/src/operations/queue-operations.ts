// Queue management: describe, create (PUT), update (PATCH) and delete. Create and update take a
// JSON settings object; an empty or missing body means "nothing set" (defaults on create, no
// change on update).

import { MqError, invalidArgument, type DeleteMode, type SettingsInput } from '@spoolmq/engine';
import { declaredJsonBytes, readBody } from '../body.js';
import { pathQueue, type GatewayRequest, type Operation } from '../operation.js';
import { JSON_BODY_MAX_BYTES } from '../options.js';
import { emptyResponse, jsonResponse } from '../responses.js';
import { parseEnum } from '../scalars.js';
import { parseJsonBytes, parseSettingsBody } from '../settings-json.js';
import { queueJson } from '../views.js';

const NO_HEADERS: ReadonlySet<string> = new Set();
const DELETE_MODES: readonly DeleteMode[] = ['force', 'drain'];

/** Whether a Content-Type names JSON (`application/json`, parameters allowed). */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const media = semicolon < 0 ? contentType : contentType.slice(0, semicolon);
  return media.trim().toLowerCase() === 'application/json';
}

/**
 * Reads and validates the settings body of create or update: 413 over JSON_BODY_MAX_BYTES, 415
 * when a body is present without a JSON Content-Type, then invalid_json, unknown_field and
 * invalid_argument from the body itself.
 */
async function settingsBody(request: GatewayRequest): Promise<SettingsInput> {
  const { contentLength, transferEncoding, contentType } = request.headers;
  const declared = declaredJsonBytes(contentLength, transferEncoding, JSON_BODY_MAX_BYTES);
  if (!declared.present) return {};
  if (!isJsonContentType(contentType)) {
    throw new MqError('unsupported_media_type', 'the body must be application/json');
  }
  const raw = request.c.req.raw;
  const limits = {
    exactBytes: declared.exactBytes,
    maxBytes: JSON_BODY_MAX_BYTES,
    budget: { budget: request.deps.bodyBudget, account: request.c.get('account') },
  };
  const clock = request.deps.options.clock;
  const bytes = await readBody(request.c.env?.incoming, () => raw.body, limits, clock);
  return parseSettingsBody(parseJsonBytes(bytes));
}

export const describeQueue: Operation<void> = {
  name: 'describe_queue',
  svcHeaders: NO_HEADERS,
  query: {},
  scope: 'queue',
  parse: () => undefined,
  async run(request) {
    const queue = await request.deps.service.describeQueue(request.spool, pathQueue(request));
    return jsonResponse(200, queueJson(queue));
  },
};

export const createQueue: Operation<SettingsInput> = {
  name: 'create_queue',
  svcHeaders: NO_HEADERS,
  query: {},
  scope: 'new-queue',
  parse: settingsBody,
  async run(request, settings) {
    const { service } = request.deps;
    const queue = await service.createQueue(request.spool, pathQueue(request), settings);
    return jsonResponse(201, queueJson(queue));
  },
};

export const updateQueue: Operation<SettingsInput> = {
  name: 'update_queue',
  svcHeaders: NO_HEADERS,
  query: {},
  scope: 'queue',
  parse: settingsBody,
  async run(request, patch) {
    const queue = await request.deps.service.updateQueue(request.spool, pathQueue(request), patch);
    return jsonResponse(200, queueJson(queue));
  },
};

export const deleteQueue: Operation<DeleteMode> = {
  name: 'delete_queue',
  svcHeaders: NO_HEADERS,
  query: { mode: 1 },
  scope: 'queue',
  parse(request) {
    const mode = request.query.one('mode');
    if (mode === undefined) throw invalidArgument('mode', 'mode is required: force or drain');
    return parseEnum('mode', mode, DELETE_MODES);
  },
  async run(request, mode) {
    const outcome = await request.deps.service.deleteQueue(request.spool, pathQueue(request), mode);
    return emptyResponse(outcome === 'deleted' ? 204 : 202);
  },
};
