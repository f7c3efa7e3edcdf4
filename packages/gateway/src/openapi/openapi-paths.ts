// The paths of the document: every /v1 operation the route table serves, the document itself,
// and the probes outside /v1. Each operation lists the statuses it can answer; a test checks
// that this set of paths and methods is exactly the route table's.

import type { ErrorKind } from '@spoolmq/engine';
import { ERROR_RESPONSES, errorResponseOf } from './openapi-errors.js';
import * as p from './openapi-parameters.js';
import { ref, type JsonObject } from './json.js';

const JSON_TYPE = 'application/json';
const OCTETS = 'application/octet-stream';

/** Errors any authenticated /v1 operation can answer. */
const COMMON_ERRORS = [
  'BadRequest',
  'Unauthenticated',
  'Suspended',
  'Forbidden',
  'NotFound',
  'RateLimited',
  'Internal',
  'Unavailable',
];

type Kinds = Readonly<Record<'403' | '409', readonly ErrorKind[]>>;

/** 403: the account hold (a blocked key has no kind); 409: a queue being deleted. */
const DEFAULT_KINDS: Kinds = { '403': ['account_blocked'], '409': ['queue_deleting'] };

/** DEFAULT_KINDS with more 409 kinds, and more 403 kinds. */
function kindsWith(conflicts: readonly ErrorKind[], forbidden: readonly ErrorKind[] = []): Kinds {
  return {
    '403': [...DEFAULT_KINDS['403'], ...forbidden],
    '409': [...DEFAULT_KINDS['409'], ...conflicts],
  };
}

interface OperationSpec {
  readonly id: string;
  readonly summary: string;
  readonly description: string;
  readonly parameters?: readonly JsonObject[];
  readonly requestBody?: JsonObject;
  readonly responses: Readonly<Record<string, JsonObject>>;
  /** Error response components beyond COMMON_ERRORS. */
  readonly errors?: readonly string[];
  /** The kinds of 403 and 409 this operation can answer (default DEFAULT_KINDS). */
  readonly kinds?: Kinds;
  /**
   * Fields whose 400 invalid_argument can answer a request that meets every schema here: rules
   * across parameters (both dedup headers) or that only the service can judge (a cursor).
   */
  readonly invalidArgumentFields?: readonly string[];
}

function operation(spec: OperationSpec, tag: string): JsonObject {
  const responses: Record<string, JsonObject> = { ...spec.responses };
  for (const name of [...COMMON_ERRORS, ...(spec.errors ?? [])]) {
    responses[String(ERROR_RESPONSES[name])] = ref('responses', name);
  }
  for (const [status, kinds] of Object.entries(spec.kinds ?? DEFAULT_KINDS)) {
    if (!(status in responses)) continue;
    responses[status] = errorResponseOf(Number(status), [...kinds]);
  }
  const entries = Object.entries(responses).sort(([a], [b]) => a.localeCompare(b));
  const sorted = Object.fromEntries(entries);
  const result: Record<string, unknown> = {
    operationId: spec.id,
    tags: [tag],
    summary: spec.summary,
    description: spec.description,
    parameters: spec.parameters ?? [],
    responses: sorted,
  };
  if (spec.requestBody !== undefined) result['requestBody'] = spec.requestBody;
  if (spec.invalidArgumentFields !== undefined) {
    result['x-invalid-argument-fields'] = spec.invalidArgumentFields;
  }
  return result as JsonObject;
}

function jsonOk(description: string, schema: string, headers?: JsonObject): JsonObject {
  const response: Record<string, JsonObject | string> = {
    description,
    content: { [JSON_TYPE]: { schema: ref('schemas', schema) } },
  };
  if (headers !== undefined) response['headers'] = headers;
  return response;
}

function empty(description: string, headers?: JsonObject): JsonObject {
  return headers === undefined ? { description } : { description, headers };
}

function payload(description: string, headers: JsonObject): JsonObject {
  return { description, headers, content: { [OCTETS]: { schema: {} } } };
}

const payloadBody: JsonObject = {
  required: true,
  description: 'The payload: any bytes, stored and delivered as sent. The Content-Type is not ' +
    'read; application/octet-stream is the honest one.',
  content: { [OCTETS]: { schema: {} } },
};

function settingsBody(schema: string, description: string): JsonObject {
  return {
    required: false,
    description,
    content: { [JSON_TYPE]: { schema: ref('schemas', schema) } },
  };
}

const deliveryHeaders: JsonObject = {
  'Svc-Lease': p.responseHeader(true, ref('schemas', 'Token'), 'The lease: settles this delivery.'),
  'Svc-Message-Id': p.messageIdHeader,
  'Svc-Message-Retries': p.responseHeader(true, { type: 'integer', minimum: 0 },
    'Redeliveries before this one.'),
  'Svc-Lease-Expires-At': p.leaseExpiresHeader,
};

const sendHeaders = (withHandle: boolean): JsonObject => {
  const headers: Record<string, JsonObject> = { 'Svc-Message-Id': p.messageIdHeader };
  if (withHandle) {
    headers['Svc-Handle'] = p.responseHeader(false, ref('schemas', 'Token'),
      'Only with handle=true: a handle to the new message (peek, discard).');
  }
  return headers;
};

const QUEUE_ERRORS = ['Conflict'];

function queueOperations(): Record<string, JsonObject> {
  const q = [p.spoolPath, p.queuePath];
  const tag = 'Queues';
  return {
    get: operation({
      id: 'describeQueue',
      summary: 'Describe a queue',
      description: 'Name, creation time, state and settings as applied. No counts (see stats).',
      parameters: q,
      responses: { '200': jsonOk('The queue.', 'Queue') },
      errors: QUEUE_ERRORS,
    }, tag),
    put: operation({
      id: 'createQueue',
      summary: 'Create a queue',
      description: 'Creates the queue with the given settings; a field left out takes its ' +
        'default (leaseTimeoutSeconds 300, maxRetries 10, dedupWindowSeconds 0, ' +
        'retentionSeconds the server default bounded by the plan, no receive rate limit). No ' +
        'body, or an empty one, means every default. 409 queue_exists if the name is taken, ' +
        'whatever its settings; 403 queue_limit or retention_limit past the plan.',
      parameters: q,
      requestBody: settingsBody('SettingsInput', 'Settings to set; application/json.'),
      responses: { '201': jsonOk('Created; the queue with every setting as applied.', 'Queue') },
      errors: [...QUEUE_ERRORS, 'TooLarge', 'UnsupportedMediaType'],
      kinds: kindsWith(['queue_exists'], ['queue_limit', 'retention_limit']),
    }, tag),
    patch: operation({
      id: 'updateQueue',
      summary: 'Change queue settings',
      description: 'Changes the fields given, same ranges as create; recvRateLimit null removes ' +
        'the limit and {} changes nothing. A new leaseTimeoutSeconds applies to later leases; ' +
        'a changed dedupWindowSeconds forgets every remembered key. Allowed while draining.',
      parameters: q,
      requestBody: settingsBody('SettingsPatch', 'Settings to change; application/json.'),
      responses: { '200': jsonOk('The queue as changed.', 'Queue') },
      errors: [...QUEUE_ERRORS, 'TooLarge', 'UnsupportedMediaType'],
      kinds: kindsWith([], ['retention_limit']),
    }, tag),
    delete: operation({
      id: 'deleteQueue',
      summary: 'Delete a queue',
      description: 'Deletion survives restarts. A draining queue takes no new messages, stays ' +
        'consumable and is deleted once empty (failed messages hold it until recovered or ' +
        'discarded). 409 conflict: a concurrent update won the race; retry.',
      parameters: [...q, p.modeQuery],
      responses: {
        '202': empty('Deletion is durable and still under way (drain, or a long force).'),
        '204': empty('Deleted; the name is free.'),
      },
      errors: QUEUE_ERRORS,
      kinds: kindsWith(['conflict']),
    }, tag),
  };
}

function spoolPaths(): Record<string, JsonObject> {
  const s = [p.spoolPath];
  const tag = 'Spools';
  return {
    '/v1/spools/{spool}': {
      get: operation({
        id: 'describeSpool',
        summary: 'Describe a spool',
        description: 'Queue count and counts summed over every queue, read in one snapshot. ' +
          'The *Total counters count from startedAt, and keep counting deleted queues.',
        parameters: s,
        responses: { '200': jsonOk('The spool.', 'Spool') },
      }, tag),
    },
    '/v1/spools/{spool}/stats': {
      get: operation({
        id: 'spoolStats',
        summary: 'Counts per queue',
        description: 'The spool rollup and a page of queues with their counts, in byte order ' +
          'of names, all from one snapshot.',
        parameters: [...s, p.statsQueueQuery, p.limitQuery, p.afterQuery, p.matchQuery],
        responses: { '200': jsonOk('A page of queue counts.', 'StatsPage') },
        invalidArgumentFields: ['after', 'match'],
      }, tag),
    },
    '/v1/spools/{spool}/queues': {
      get: operation({
        id: 'listQueues',
        summary: 'List queues',
        description: 'A page of queues in byte order of names; no counts. Keyset paging: a ' +
          'queue that exists during the whole walk is seen exactly once.',
        parameters: [...s, p.limitQuery, p.afterQuery, p.matchQuery],
        responses: { '200': jsonOk('A page of queues.', 'QueuePage') },
        invalidArgumentFields: ['after', 'match'],
      }, tag),
    },
    '/v1/spools/{spool}/queues/{queue}': queueOperations(),
  };
}

const ACK_AND_SEND_DESCRIPTION = 'Acks the delivery the lease names and appends a new message, ' +
  'as one atomic step; the two queues may be the same. A dedup hit refuses the whole call ' +
  '(409 dedup_claimed, nothing acked). A retry of a call that committed is 410 and appends ' +
  'nothing, so retries need no dedup key. The message count cap does not apply (net zero); ' +
  'the byte cap refuses growth (507).';

function ackAndSend(id: string, parameters: readonly JsonObject[], where: string): JsonObject {
  return operation({
    id,
    summary: `Ack one message and send another (${where})`,
    description: ACK_AND_SEND_DESCRIPTION,
    parameters: [
      ...parameters,
      p.handleQuery,
      p.leaseHeader(true, 'Lease of the delivery to ack.'),
      p.delayHeader,
      p.dedupStringHeader,
      p.dedupHashHeader,
      p.contentLengthHeader,
    ],
    requestBody: payloadBody,
    responses: { '201': empty('Acked and appended durably.', sendHeaders(true)) },
    errors: ['Conflict', 'Gone', 'LengthRequired', 'TooLarge', 'SpoolFull'],
    kinds: kindsWith(['queue_draining', 'dedup_in_flight', 'dedup_claimed']),
    invalidArgumentFields: ['Svc-Delay', 'Svc-Dedup-String'],
  }, 'Messages');
}

function sendOperation(): JsonObject {
  return operation({
    id: 'send',
    summary: 'Send a message',
    description: 'Appends the payload. 201 means stored (on a cluster: in the log of a ' +
      'majority of replicas, each synced to disk). With a dedup key, a repeat inside the ' +
      'window answers 200 with the original id and appends nothing; a repeat while the first ' +
      'is settling is 409 dedup_in_flight. A dedup header on a queue without a window is 400 ' +
      'dedup_disabled. Every 4xx, 503 and 507 is answered before anything is appended.',
    parameters: [
      p.spoolPath,
      p.queuePath,
      p.handleQuery,
      p.delaySecondsHeader,
      p.dedupStringHeader,
      p.dedupHashHeader,
      p.contentLengthHeader,
    ],
    requestBody: payloadBody,
    responses: {
      '200': empty(
        'Dedup hit: nothing appended; Svc-Message-Id is the original.',
        sendHeaders(false),
      ),
      '201': empty('Appended durably.', sendHeaders(true)),
    },
    errors: ['Conflict', 'LengthRequired', 'TooLarge', 'SpoolFull'],
    kinds: kindsWith(['queue_draining', 'dedup_in_flight']),
    invalidArgumentFields: ['Svc-Dedup-String'],
  }, 'Messages');
}

function receiveOperation(): JsonObject {
  return operation({
    id: 'receive',
    summary: 'Receive a message',
    description: 'Leases the oldest visible message (send order; a returned message keeps its ' +
      'place). While the lease lives nobody else gets it; settle it with ack, nack, release, ' +
      'fail or discard, or it times out and counts as a nack. Waits up to waitSeconds for a ' +
      'message. Takes no Svc-* headers.',
    parameters: [p.spoolPath, p.queuePath, p.waitSecondsQuery],
    responses: {
      '200': payload('A delivery: the payload as the body.', deliveryHeaders),
      '204': empty('Nothing arrived within the wait.'),
    },
    errors: ['Conflict'],
  }, 'Messages');
}

function listMessagesOperation(): JsonObject {
  return operation({
    id: 'listMessages',
    summary: 'List messages',
    description: 'A page of messages in send order, without payloads. Moves nothing. ' +
      'handle=true adds a handle to each item, for peek, recover and discard.',
    parameters: [p.spoolPath, p.queuePath, p.stateQuery, p.limitQuery, p.afterQuery, p.handleQuery],
    responses: {
      '200': jsonOk('A page of messages.', 'MessagePage', { 'Cache-Control': p.noStoreHeader }),
    },
    errors: ['Conflict'],
    invalidArgumentFields: ['after'],
  }, 'Failures and inspection');
}

function failureHeadOperation(): JsonObject {
  const headers: JsonObject = {
    'Svc-Lease': p.responseHeader(true, ref('schemas', 'Token'),
      'A failure lease: accepted by recover and discard only.'),
    'Svc-Message-Id': p.messageIdHeader,
    'Svc-Retry-Count': p.responseHeader(true, { type: 'integer', minimum: 0 },
      'Redeliveries before the message failed.'),
    'Cache-Control': p.noStoreHeader,
  };
  return operation({
    id: 'failureHead',
    summary: 'Read the oldest failed message',
    description: 'The head of the failure queue, payload included, without taking it: reads ' +
      'return the same message until it is recovered or discarded.',
    parameters: [p.spoolPath, p.queuePath],
    responses: {
      '200': payload('The oldest failed message.', headers),
      '204': empty('The failure queue is empty.', { 'Cache-Control': p.noStoreHeader }),
    },
    errors: ['Conflict'],
  }, 'Failures and inspection');
}

function messagePaths(): Record<string, JsonObject> {
  const base = '/v1/spools/{spool}/queues/{queue}';
  return {
    [`${base}/send`]: { post: sendOperation() },
    [`${base}/recv`]: { post: receiveOperation() },
    [`${base}/ack-and-send`]: {
      post: ackAndSend('ackAndSend', [p.spoolPath, p.queuePath], 'into the path queue'),
    },
    [`${base}/messages`]: { get: listMessagesOperation() },
    [`${base}/failures/head`]: { get: failureHeadOperation() },
  };
}

interface TokenSpec {
  readonly id: string;
  readonly summary: string;
  readonly description: string;
  readonly headers: readonly JsonObject[];
  readonly done: JsonObject;
  readonly invalidArgumentFields?: readonly string[];
  /** 409 kinds beyond queue_deleting. */
  readonly conflicts?: readonly ErrorKind[];
}

function tokenOperation(spec: TokenSpec): JsonObject {
  const tag = spec.id === 'recover' || spec.id === 'discard' ? 'Failures and inspection' : 'Leases';
  const base = {
    id: spec.id,
    summary: spec.summary,
    description: `${spec.description} Takes no body; the token names the queue.`,
    parameters: [p.spoolPath, ...spec.headers],
    responses: { '204': spec.done },
    errors: ['Conflict', 'Gone'],
    kinds: kindsWith(spec.conflicts ?? []),
  };
  const withFields =
    spec.invalidArgumentFields === undefined
      ? base
      : { ...base, invalidArgumentFields: spec.invalidArgumentFields };
  return operation(withFields, tag);
}

const LEASE = p.leaseHeader(true, 'The lease from receive.');
const ONE_TOKEN = 'Exactly one of Svc-Lease and Svc-Handle (both or neither: 400).';

function leasePaths(): Record<string, JsonObject> {
  const s = '/v1/spools/{spool}';
  const done = empty('Done.');
  const renewed = empty('Renewed.', { 'Svc-Lease-Expires-At': p.leaseExpiresHeader });
  const specs: TokenSpec[] = [
    { id: 'ack', summary: 'Acknowledge', description: 'Removes the message for good.',
      headers: [LEASE], done },
    { id: 'nack', summary: 'Negative acknowledge', description: 'Returns the message to its ' +
      'place with a retry counted, or fails it once maxRetries redeliveries are past.',
      headers: [LEASE], done },
    { id: 'release', summary: 'Release', description: 'Returns the message without spending a ' +
      'retry, visible now or after Svc-Delay. Releasing on every error retries forever.',
      headers: [LEASE, p.delayHeader], done, invalidArgumentFields: ['Svc-Delay'] },
    { id: 'fail', summary: 'Fail', description: 'Moves the message to the failure queue now, ' +
      'whatever retries remain.', headers: [LEASE], done },
    { id: 'renew', summary: 'Renew a lease', description: 'Extends the lease to now plus the ' +
      'queue\'s leaseTimeoutSeconds; the token stays the same. A no-op without a lease timeout.',
      headers: [LEASE], done: renewed },
    { id: 'recover', summary: 'Recover a failed message', description: 'Returns a failed ' +
      `message to its queue with retries reset, now or after Svc-Delay-Seconds. ${ONE_TOKEN} ` +
      'The lease must be a failure lease (from the failure head). 409 conflict when the ' +
      'handle names a message that is not failed, message_leased when it is leased.',
      headers: [p.handleHeader(false, 'A handle from a listing.'),
        p.leaseHeader(false, 'A failure lease from the failure head.'), p.delaySecondsHeader],
      done, invalidArgumentFields: ['Svc-Lease'], conflicts: ['message_leased', 'conflict'] },
    { id: 'discard', summary: 'Discard a message', description: 'Drops the message for good ' +
      `(counted as discarded, not acked). ${ONE_TOKEN} With a send handle it cancels a ` +
      'message before its first delivery; 409 message_leased if it is leased right now.',
      headers: [p.leaseHeader(false, 'A lease (delivery or failure).'),
        p.handleHeader(false, 'A handle from send or a listing.')],
      done, invalidArgumentFields: ['Svc-Lease'], conflicts: ['message_leased'] },
  ];
  const paths: Record<string, JsonObject> = {};
  for (const spec of specs) paths[`${s}/${spec.id}`] = { post: tokenOperation(spec) };
  paths[`${s}/peek`] = { post: peekOperation('peek') };
  paths[`${s}/inspect`] = { post: peekOperation('inspect') };
  paths[`${s}/ack-and-send`] = {
    post: ackAndSend('ackAndSendToQueue', [p.spoolPath, p.queueHeader], 'into Svc-Queue'),
  };
  return paths;
}

function peekOperation(id: string): JsonObject {
  const headers: JsonObject = {
    'Svc-Message-Id': p.messageIdHeader,
    'Svc-Message-State': p.responseHeader(true,
      { enum: ['delayed', 'visible', 'pending', 'failed', 'unavailable'] }, 'Current state.'),
    'Svc-Retry-Count': p.responseHeader(true, { type: 'integer', minimum: 0 },
      'Redeliveries so far.'),
    'Cache-Control': p.noStoreHeader,
  };
  return operation({
    id,
    summary: id === 'peek' ? 'Peek a message' : 'Peek a message (same as peek)',
    description: 'Reads the message a handle names, in whatever state, payload included; ' +
      'moves nothing and leaves the handle valid. 410 once the handle is stale.',
    parameters: [p.spoolPath, p.handleHeader(true, 'A handle from send or a listing.')],
    responses: { '200': payload('The message.', headers) },
    errors: ['Conflict', 'Gone'],
  }, 'Failures and inspection');
}

function unauthenticated(
  id: string,
  summary: string,
  description: string,
  ok: JsonObject,
): JsonObject {
  const responses = { '200': ok };
  return { operationId: id, tags: ['Service'], summary, description, security: [], responses };
}

/** A response whose body is `{"status": value}`. */
function statusResponse(value: string): JsonObject {
  return {
    description: `{"status":"${value}"}`,
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'object',
          properties: { status: { const: value } },
          required: ['status'],
          additionalProperties: false,
        },
      },
    },
  };
}

/** /readyz's 200: the status, and on a member its disk and memory alarms. */
function readyResponse(): JsonObject {
  const bytes = { type: ['integer', 'null'], minimum: 0 };
  return {
    description:
      '{"status":"ready"}; a member adds `disk` (its data volume) and `memory` (its heap).',
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'object',
          properties: {
            status: { const: 'ready' },
            disk: {
              type: 'object',
              description: 'The disk alarm (sends refused with 507 storage_full while true; ' +
                'receive and ack go on) and the latest sample of the data volume.',
              properties: {
                alarm: { type: 'boolean' },
                freeBytes: bytes,
                totalBytes: bytes,
                reserveBytes: bytes,
                clearBytes: bytes,
                probeError: { type: ['string', 'null'] },
              },
              required: ['alarm'],
              additionalProperties: false,
            },
            memory: {
              type: 'object',
              description: 'The memory alarm (growth refused with 503 unavailable while true; ' +
                'receive and ack go on) and the latest sample of the V8 heap.',
              properties: {
                alarm: { type: 'boolean' },
                usedBytes: bytes,
                limitBytes: bytes,
                highBytes: bytes,
                clearBytes: bytes,
              },
              required: ['alarm'],
              additionalProperties: false,
            },
          },
          required: ['status'],
          additionalProperties: false,
        },
      },
    },
  };
}

function servicePaths(): Record<string, JsonObject> {
  const notReady = ref('responses', 'Unavailable');
  const ready = readyResponse();
  const metrics = {
    description: 'Metrics.',
    content: { 'text/plain': { schema: { type: 'string' } } },
  };
  return {
    '/v1/openapi.json': {
      get: unauthenticated('openApiDocument', 'This document', 'The OpenAPI 3.1 document of ' +
        'this API. No key needed.', {
        description: 'The document.',
        content: { [JSON_TYPE]: { schema: { type: 'object' } } },
      }),
    },
    '/healthz': {
      get: unauthenticated('healthz', 'Liveness', 'The process is alive. No key needed.',
        statusResponse('ok')),
    },
    '/readyz': {
      get: {
        ...unauthenticated('readyz', 'Readiness', 'This process can serve now: every spool ' +
          'it serves has a known primary. No key needed.', ready),
        responses: { '200': ready, '503': notReady },
      },
    },
    '/metrics': {
      get: {
        ...unauthenticated('metrics', 'Prometheus metrics', 'Prometheus text format. Open on ' +
          'loopback binds; elsewhere a key is required unless the operator opened it.', metrics),
        security: [{}, { bearer: [] }],
        responses: {
          '200': metrics,
          '401': ref('responses', 'Unauthenticated'),
        },
      },
    },
  };
}

/** Every path of the document. */
export function apiPaths(): Record<string, JsonObject> {
  return { ...spoolPaths(), ...messagePaths(), ...leasePaths(), ...servicePaths() };
}
