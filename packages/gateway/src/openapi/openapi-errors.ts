// Error bodies and error responses of the document. The kinds come from the engine's
// STATUS_OF_KIND, and every kind must have a sentence here (the Record type makes a kind added
// to the engine without one a compile error), so the document lists every kind the code has.

import assert from 'node:assert/strict';
import { STATUS_OF_KIND, type ErrorKind } from '@spoolmq/engine';
import { ref, type JsonObject } from './json.js';

const KIND_MEANING: Readonly<Record<ErrorKind, string>> = {
  invalid_argument: 'A path, query, header or JSON field breaks its rule; details.field names it.',
  invalid_json: 'A JSON body does not parse or is not an object.',
  unknown_field: 'A JSON body has a field the operation does not define; details.field.',
  unknown_header: 'A Svc-* header this operation does not define; details.header.',
  dedup_disabled: 'A dedup header on a queue whose dedupWindowSeconds is 0.',
  token_kind: 'A lease where a handle belongs, or the reverse, or a failure lease outside ' +
    'recover and discard.',
  unauthenticated: 'No Authorization: Bearer key, or a key the service does not know.',
  account_suspended: 'The account is suspended.',
  account_blocked: 'The account is on hold.',
  key_blocked: 'The key is blocked: the 403 whose body has no kind.',
  queue_limit: 'The plan allows no more queues on this spool.',
  retention_limit: 'retentionSeconds is above the plan limit.',
  spool_not_found: 'The spool does not exist (for this key).',
  queue_not_found: 'The queue does not exist.',
  not_found: 'No such path.',
  method_not_allowed: 'The path exists but not with this method; Allow lists the methods.',
  queue_exists: 'Create on a name already taken, whatever the settings.',
  queue_draining: 'Send or ack-and-send into a queue being drained.',
  queue_deleting: 'The queue is being deleted; nothing is accepted for it.',
  conflict: 'A delete lost a race with a concurrent update; retry.',
  dedup_in_flight: 'Another send with the same dedup key is still settling; retry.',
  dedup_claimed: 'ack-and-send: the dedup key already landed; nothing acked. ' +
    'details.messageId is the original.',
  message_leased: 'Discard by handle of a message that is leased right now.',
  gone: 'The lease or handle settles nothing any more; details.reason says why.',
  length_required: 'No Content-Length (none, or a chunked body).',
  message_too_large: 'Content-Length above the limit; details.limitBytes.',
  unsupported_media_type: 'A JSON operation whose body is not application/json.',
  rate_limited: 'The account request rate is exceeded; wait Retry-After seconds.',
  internal: 'The server failed; nothing is known about the outcome of a write.',
  operation_unconfirmed: 'The write was accepted but its durability is unknown.',
  unavailable: 'The spool has no reachable primary right now; retry after Retry-After.',
  spool_full: 'The spool is at its plan maximum of messages or payload bytes.',
  storage_full: "The member's data volume is below its free-space reserve (disk alarm); nothing " +
    'was appended: retry after Retry-After. Receive, ack and the other draining calls go on.',
};

/** Statuses with an error response component, by component name. */
export const ERROR_RESPONSES: Readonly<Record<string, number>> = {
  BadRequest: 400,
  Unauthenticated: 401,
  Suspended: 402,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  Gone: 410,
  LengthRequired: 411,
  TooLarge: 413,
  UnsupportedMediaType: 415,
  RateLimited: 429,
  Internal: 500,
  Unavailable: 503,
  SpoolFull: 507,
};

/** Kinds answered on routes that exist (not_found and method_not_allowed are the router's). */
function kindsOf(status: number): ErrorKind[] {
  const kinds = Object.entries(STATUS_OF_KIND)
    .filter(([kind, of]) => of === status && kind !== 'not_found' && kind !== 'key_blocked')
    .map(([kind]) => kind as ErrorKind);
  return kinds;
}

function describeKinds(kinds: readonly ErrorKind[]): string {
  return kinds.map((kind) => `- \`${kind}\`: ${KIND_MEANING[kind]}`).join('\n');
}

/** `then` clause requiring details fields for one kind. */
function detailsOf(kind: ErrorKind, properties: Record<string, JsonObject>): JsonObject {
  return {
    if: { properties: { kind: { const: kind } } },
    then: {
      properties: {
        details: { type: 'object', required: Object.keys(properties), properties },
      },
    },
  };
}

function errorSchema(): JsonObject {
  const kinds = Object.keys(STATUS_OF_KIND).filter((kind) => kind !== 'key_blocked');
  const text = { type: 'string' };
  return {
    type: 'object',
    description: 'Every error body. Match on the status, the kind and details; the message ' +
      'is for people and may change.',
    properties: {
      kind: { type: 'string', enum: kinds },
      message: text,
      details: { $ref: '#/components/schemas/ErrorDetails' },
    },
    required: ['kind', 'message', 'details'],
    additionalProperties: false,
    allOf: [
      detailsOf('invalid_argument', { field: text }),
      detailsOf('unknown_field', { field: text }),
      detailsOf('unknown_header', { header: text }),
      detailsOf('gone', { reason: { enum: ['expired', 'settled', 'primary_changed', 'stale'] } }),
      detailsOf('message_too_large', { limitBytes: { type: 'integer', minimum: 1 } }),
      detailsOf('dedup_claimed', { messageId: text }),
    ],
  };
}

/** components.schemas of error bodies. */
export function errorSchemas(): Record<string, JsonObject> {
  return {
    ErrorDetails: {
      type: 'object',
      additionalProperties: { type: ['string', 'number', 'boolean'] },
      description: 'Facts about the error; {} when there are none.',
    },
    Error: errorSchema(),
    KeyBlocked: {
      type: 'object',
      description: 'The 403 of a blocked key: no kind.',
      properties: { message: { type: 'string' }, details: ref('schemas', 'ErrorDetails') },
      required: ['message', 'details'],
      additionalProperties: false,
    },
  };
}

function errorContent(kinds: readonly ErrorKind[]): JsonObject {
  const body: JsonObject = {
    allOf: [ref('schemas', 'Error')],
    properties: { kind: { enum: kinds } },
  };
  return { 'application/json': { schema: body } };
}

const RETRY_AFTER_HEADER: JsonObject = {
  description: 'Whole seconds to wait, at least 1 (never an HTTP date).',
  required: true,
  schema: { type: 'integer', minimum: 1 },
};

/**
 * The response of an error status with `kinds` (default: every kind of that status the routes
 * can answer). An operation that can answer only some of them lists just those.
 */
export function errorResponseOf(status: number, kinds = kindsOf(status)): JsonObject {
  assert(kinds.every((kind) => STATUS_OF_KIND[kind] === status), `kinds of status ${status}`);
  const description = `Error ${status}. Kinds:\n${describeKinds(kinds)}`;
  if (status === 403) {
    const kinded = errorContent(kinds)['application/json'] as JsonObject;
    const schema = { oneOf: [kinded['schema'] as JsonObject, ref('schemas', 'KeyBlocked')] };
    const text = `${description}\n- (no kind): ${KIND_MEANING.key_blocked}`;
    return { description: text, content: { 'application/json': { schema } } };
  }
  const response: Record<string, JsonObject | string> = {
    description,
    content: errorContent(kinds),
  };
  if (status === 429 || status === 503) response['headers'] = { 'Retry-After': RETRY_AFTER_HEADER };
  if (status === 401) {
    response['headers'] = { 'WWW-Authenticate': { schema: { const: 'Bearer' }, required: true } };
  }
  return response;
}

/** components.responses: one per error status, plus the router's 404 and 405. */
export function errorResponses(): Record<string, JsonObject> {
  const responses: Record<string, JsonObject> = {};
  for (const [name, status] of Object.entries(ERROR_RESPONSES)) {
    responses[name] = errorResponseOf(status);
  }
  responses['NoSuchPath'] = {
    description: `Any path not in this document (inside /v1 or not), before authentication. ` +
      `Kind \`not_found\`: ${KIND_MEANING.not_found}`,
    content: errorContent(['not_found']),
  };
  responses['MethodNotAllowed'] = {
    description: `A path of this document asked with a method it does not list, before ` +
      `authentication. Kind \`method_not_allowed\`: ${KIND_MEANING.method_not_allowed}`,
    headers: { Allow: { required: true, schema: { type: 'string' } } },
    content: errorContent(['method_not_allowed']),
  };
  return responses;
}
