// The JSON Schemas (draft 2020-12, as OpenAPI 3.1 uses) of every JSON body /v1 reads or writes.
// Ranges come from the constants the gateway enforces, so the document cannot promise a range
// the code does not keep; what only the service knows (plan limits) is said in prose.

import { PAGE_LIMIT_MAX } from '../params.js';
import assert from 'node:assert/strict';
import { RATE_LIMIT_RULES, TOP_LEVEL_RULES } from '../settings-json.js';
import { ref, type JsonObject } from './json.js';

export const NAME_PATTERN = '^[A-Za-z0-9_:-]{1,63}$';
export const TOKEN_PATTERN = '^[A-Za-z0-9_-]{16,128}$';
/** RFC 3339 UTC with milliseconds, the only form the service writes. */
const TIMESTAMP_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$';

const integer = (description: string, extra: JsonObject = {}): JsonObject => ({
  type: 'integer',
  minimum: 0,
  description,
  ...extra,
});

const timestamp = (description: string): JsonObject => ({
  ...ref('schemas', 'Timestamp'),
  description,
});

function closedObject(properties: Record<string, JsonObject>, required: string[]): JsonObject {
  return { type: 'object', properties, required, additionalProperties: false };
}

const SETTINGS_MEANING: Readonly<Record<string, string>> = {
  leaseTimeoutSeconds: 'Seconds a lease lasts before an automatic nack; 0: never.',
  maxRetries: 'Redeliveries before a message fails; 0: the first nack fails it.',
  dedupWindowSeconds: 'Seconds a dedup key is remembered; 0 turns deduplication off.',
  retentionSeconds: 'Seconds a message is kept from first becoming visible; 0: no expiry.',
};

function settingsInputProperties(): Record<string, JsonObject> {
  const properties: Record<string, JsonObject> = {};
  for (const [name, rule] of Object.entries(TOP_LEVEL_RULES)) {
    const meaning = SETTINGS_MEANING[name];
    assert(meaning !== undefined, `every settings field is described: ${name}`);
    const base: JsonObject = { type: 'integer', minimum: rule.min, description: meaning };
    const bounded = rule.max < Number.MAX_SAFE_INTEGER ? { ...base, maximum: rule.max } : base;
    properties[name] =
      rule.zeroOrAtLeast === undefined
        ? bounded
        : { ...bounded, anyOf: [{ const: 0 }, { minimum: rule.zeroOrAtLeast }] };
  }
  return properties;
}

function rateLimitInput(): JsonObject {
  const { intervalMicros, burst } = RATE_LIMIT_RULES;
  return closedObject(
    {
      intervalMicros: {
        type: 'integer',
        minimum: intervalMicros.min,
        description: 'Microseconds between two receives at the sustained rate (10000: 100/s).',
      },
      burst: {
        type: 'integer',
        minimum: burst.min,
        maximum: burst.max,
        description: 'Messages an idle queue may hand out at once.',
      },
    },
    ['intervalMicros', 'burst'],
  );
}

const COUNTS: Readonly<Record<string, string>> = {
  total: 'Stored messages in every state, sends in flight included.',
  dataBytes: 'Payload bytes of the counted messages.',
  delayed: 'Messages waiting for their delay to pass.',
  visible: 'Messages a receive can take now.',
  pending: 'Messages leased to a receiver and not yet settled.',
  failed: 'Messages in the failure queue, waiting for recover or discard.',
  unavailable: 'Messages whose payload could not be read for now; retried automatically.',
  addedTotal: 'Messages appended since startedAt (dedup hits not counted).',
  ackedTotal: 'Messages acked since startedAt.',
  nackedTotal: 'Nacks since startedAt, lease timeouts included.',
  releasedTotal: 'Releases since startedAt.',
  failedTotal: 'Messages failed since startedAt.',
  discardedTotal: 'Messages discarded since startedAt.',
  expiredTotal: 'Messages removed by retention since startedAt.',
};

function countsProperties(): Record<string, JsonObject> {
  const properties: Record<string, JsonObject> = {};
  for (const [name, meaning] of Object.entries(COUNTS)) properties[name] = integer(meaning);
  return properties;
}

function queueProperties(): Record<string, JsonObject> {
  return {
    name: ref('schemas', 'Name'),
    createdAt: timestamp('Creation time; a queue created again under the name gets a new one.'),
    state: { type: 'string', enum: ['active', 'draining', 'deleting'] },
    settings: ref('schemas', 'Settings'),
  };
}

const QUEUE_REQUIRED = ['name', 'createdAt', 'state', 'settings'];

function page(item: JsonObject): JsonObject {
  return closedObject(
    {
      items: { type: 'array', items: item, maxItems: PAGE_LIMIT_MAX },
      next: { ...ref('schemas', 'Cursor'), description: 'Absent on the last page.' },
    },
    ['items'],
  );
}

/** `then`/`else` of a Message field present only in one state. */
function onlyInState(state: string, field: string, always: boolean): JsonObject {
  const absent = { not: { required: [field] } };
  return {
    if: { properties: { state: { const: state } } },
    then: always ? { required: [field] } : {},
    else: absent,
  };
}

function messageSchema(): JsonObject {
  const body = closedObject(
    {
      id: { type: 'string', minLength: 1, description: 'Sorts in send order, byte-wise.' },
      state: { type: 'string', enum: ['delayed', 'visible', 'pending', 'failed', 'unavailable'] },
      retries: integer('Redeliveries so far.'),
      createdAt: timestamp('When the message was sent.'),
      visibleAt: timestamp('When a delayed message becomes visible; only in state delayed.'),
      leaseExpiresAt: timestamp('When the lease times out; only in state pending, if it can.'),
      expiresAt: timestamp('When retention removes the message; absent without retention.'),
      handle: { ...ref('schemas', 'Token'), description: 'Only when listed with handle=true.' },
    },
    ['id', 'state', 'retries', 'createdAt'],
  );
  return {
    ...body,
    allOf: [
      onlyInState('delayed', 'visibleAt', true),
      onlyInState('pending', 'leaseExpiresAt', false),
    ],
  };
}

function spoolSchema(): JsonObject {
  const stats = closedObject(
    {
      ...countsProperties(),
      sampledAt: timestamp('When the counts were read; equal values mean one snapshot.'),
      startedAt: timestamp('When the *Total counters started from zero; rates only within one.'),
    },
    [...Object.keys(COUNTS), 'sampledAt', 'startedAt'],
  );
  return closedObject(
    { name: ref('schemas', 'Name'), queueCount: integer('Queues on the spool.'), stats },
    ['name', 'queueCount', 'stats'],
  );
}

function statsPageSchema(): JsonObject {
  const entry = closedObject(
    { ...queueProperties(), stats: ref('schemas', 'Counts') },
    [...QUEUE_REQUIRED, 'stats'],
  );
  return closedObject(
    {
      queueCount: integer('Queues on the spool, whatever the page selects.'),
      stats: { ...ref('schemas', 'Counts'), description: 'Summed over every queue of the spool.' },
      queues: page(entry),
    },
    ['queueCount', 'stats', 'queues'],
  );
}

function settingsSchema(): JsonObject {
  const properties = settingsInputProperties();
  const output: Record<string, JsonObject> = {};
  for (const [name, schema] of Object.entries(properties)) {
    output[name] = { type: 'integer', minimum: 0, description: schema['description'] as string };
  }
  output['effectiveRetentionSeconds'] = integer(
    'Retention enforced: retentionSeconds bounded by the plan (0 counts as unbounded).',
  );
  output['recvRateLimit'] = closedObject(
    { intervalMicros: integer('0: no limit.'), burst: integer('0: no limit.') },
    ['intervalMicros', 'burst'],
  );
  return closedObject(output, Object.keys(output));
}

/** components.schemas, error bodies excepted (see openapi-errors.ts). */
export function dataSchemas(): Record<string, JsonObject> {
  return {
    Name: { type: 'string', pattern: NAME_PATTERN, description: 'A spool or queue name.' },
    Token: {
      type: 'string',
      pattern: TOKEN_PATTERN,
      description: 'A lease or a handle; opaque, bound to one spool, queue and delivery.',
    },
    Cursor: { type: 'string', minLength: 1, maxLength: 256, description: 'Opaque page cursor.' },
    Timestamp: { type: 'string', format: 'date-time', pattern: TIMESTAMP_PATTERN },
    Settings: settingsSchema(),
    SettingsInput: closedObject(
      { ...settingsInputProperties(), recvRateLimit: rateLimitInput() },
      [],
    ),
    SettingsPatch: closedObject(
      {
        ...settingsInputProperties(),
        recvRateLimit: {
          oneOf: [rateLimitInput(), { type: 'null' }],
          description: 'null removes the limit.',
        },
      },
      [],
    ),
    Counts: closedObject(countsProperties(), Object.keys(COUNTS)),
    Spool: spoolSchema(),
    Queue: closedObject(queueProperties(), QUEUE_REQUIRED),
    QueuePage: page(ref('schemas', 'Queue')),
    StatsPage: statsPageSchema(),
    Message: messageSchema(),
    MessagePage: page(ref('schemas', 'Message')),
  };
}
