// Parameters (path, query, header) and success-response headers of the document, built from the
// limits the gateway enforces (params.ts, options.ts), so a changed limit changes the document.

import {
  MATCH_PATTERN_MAX_CHARS,
  MESSAGE_SIZE_MAX_BYTES_DEFAULT,
  STATS_QUEUE_PARAMS_MAX,
} from '../options.js';
import {
  DELAY_MAX_SECONDS,
  PAGE_LIMIT_DEFAULT,
  PAGE_LIMIT_MAX,
  WAIT_SECONDS_MAX,
} from '../params.js';
import { ref, type JsonObject } from './json.js';

/** Go-style duration limited to whole numbers and the units ms, s, m, h; or a bare 0. */
const DURATION_PATTERN = '^(0|([0-9]{1,10}(ms|s|m|h))+)$';

function parameter(
  where: 'path' | 'query' | 'header',
  name: string,
  required: boolean,
  schema: JsonObject,
  description: string,
): JsonObject {
  return { name, in: where, required, schema, description };
}

export const spoolPath = parameter('path', 'spool', true, ref('schemas', 'Name'),
  'Spool name. Every account has a spool named `default`.');
export const queuePath = parameter('path', 'queue', true, ref('schemas', 'Name'), 'Queue name.');

export const limitQuery = parameter('query', 'limit', false,
  { type: 'integer', minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT },
  'Most items on one page.');
export const afterQuery = parameter('query', 'after', false, ref('schemas', 'Cursor'),
  'Continue after this cursor: the `next` of the previous page of the same listing. A cursor ' +
  'of another listing, or altered, is 400 invalid_argument.');
export const matchQuery = parameter('query', 'match', false,
  { type: 'string', maxLength: MATCH_PATTERN_MAX_CHARS },
  'RE2 regular expression, unanchored, on queue names; empty means no filter. Syntax RE2 ' +
  'lacks (lookaround, backreferences) is 400 invalid_argument.');
export const statsQueueQuery = {
  ...parameter('query', 'queue', false,
    { type: 'array', items: ref('schemas', 'Name'), maxItems: STATS_QUEUE_PARAMS_MAX },
    'Only these queues (repeat the parameter); a name the spool lacks is left out.'),
  style: 'form',
  explode: true,
};
export const handleQuery = parameter('query', 'handle', false, { type: 'boolean', default: false },
  'true: the answer carries a handle (a bearer credential, so off by default).');
export const waitSecondsQuery = parameter('query', 'waitSeconds', false,
  { type: 'integer', minimum: 0, maximum: WAIT_SECONDS_MAX, default: WAIT_SECONDS_MAX },
  'Long poll: seconds to wait for a message before answering 204. 0 answers at once.');
export const stateQuery = parameter('query', 'state', false,
  { type: 'string', enum: ['delayed', 'visible', 'pending', 'failed', 'unavailable'] },
  'Only messages in this state; absent lists every state.');
export const modeQuery = parameter('query', 'mode', true,
  { type: 'string', enum: ['force', 'drain'] },
  '`force` deletes the queue and its messages now; `drain` refuses new messages, lets ' +
  'consumers empty it, then deletes it.');

export function leaseHeader(required: boolean, description: string): JsonObject {
  return parameter('header', 'Svc-Lease', required, ref('schemas', 'Token'), description);
}

export function handleHeader(required: boolean, description: string): JsonObject {
  return parameter('header', 'Svc-Handle', required, ref('schemas', 'Token'), description);
}

export const delaySecondsHeader = parameter('header', 'Svc-Delay-Seconds', false,
  { type: 'integer', minimum: 0, maximum: DELAY_MAX_SECONDS },
  'Seconds before the message becomes visible; absent or 0: now.');
export const delayHeader = parameter('header', 'Svc-Delay', false,
  { type: 'string', pattern: DURATION_PATTERN },
  'Delay before the message is visible, as whole numbers with units ms, s, m, h ' +
  '(`0`, `500ms`, `90s`, `1h30m`), at most 168h; absent or 0: now.');
export const dedupStringHeader = parameter('header', 'Svc-Dedup-String', false,
  { type: 'string', pattern: '^[\\x21-\\x7E]{1,128}$' },
  'Dedup key, case-sensitive, printable ASCII. The service keeps sha256(key) cut to 16 bytes. ' +
  'Not together with Svc-Dedup-Hash.');
export const dedupHashHeader = parameter('header', 'Svc-Dedup-Hash', false,
  { type: 'string', pattern: '^[0-9a-fA-F]{32}$' },
  'The 16-byte dedup fingerprint in hex, for senders that hash keys themselves.');
export const queueHeader = parameter('header', 'Svc-Queue', true, ref('schemas', 'Name'),
  'The queue that receives the new message.');
export const contentLengthHeader = parameter('header', 'Content-Length', true,
  { type: 'integer', minimum: 0 },
  `Required (411 without it or with a chunked body). Above the message size limit ` +
  `(${MESSAGE_SIZE_MAX_BYTES_DEFAULT} bytes unless the plan sets another) the answer is 413, ` +
  'given before any byte of the body is read.');

/** A response header. */
export function responseHeader(
  required: boolean,
  schema: JsonObject,
  description: string,
): JsonObject {
  return { required, schema, description };
}

export const noStoreHeader = responseHeader(true, { const: 'no-store' },
  'The answer names live messages: never cache it.');
export const messageIdHeader = responseHeader(true, { type: 'string', minLength: 1 },
  'Message id: for logs and correlation; no operation takes one.');
export const leaseExpiresHeader = responseHeader(false, ref('schemas', 'Timestamp'),
  'When the lease times out; absent when the queue has no lease timeout.');
