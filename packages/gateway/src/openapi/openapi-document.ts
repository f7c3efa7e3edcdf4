// The OpenAPI 3.1 document of the public listener: every /v1 operation, the document itself and
// the probes. Served at GET /v1/openapi.json and kept in the repository as docs/openapi.json (a
// test fails when the two differ, and the conformance suite checks every exchange against it).

import { errorResponses, errorSchemas } from './openapi-errors.js';
import { apiPaths } from './openapi-paths.js';
import { dataSchemas } from './openapi-schemas.js';
import type { JsonObject } from './json.js';

const DESCRIPTION = `A replicated message queue. A producer sends bytes, a worker receives them
under a lease and settles the lease (ack, nack, release, fail, discard); an unsettled lease times
out and the message is delivered again. Every account has a spool named \`default\`; a spool
holds queues.

Conventions for every /v1 operation:
- Authentication: \`Authorization: Bearer <key>\`. A key in the query string never counts.
  \`mq local\` (the in-memory variant) accepts any key but still wants the header.
- Payloads are raw bytes both ways; message attributes travel in \`Svc-*\` headers. An operation
  accepts only the \`Svc-*\` headers it lists (another is 400 \`unknown_header\`); an empty or
  repeated one is 400 \`invalid_argument\`. Other headers are ignored.
- Query parameters: only those listed; integers are plain digits, booleans exactly
  \`true\`/\`false\`, enumerations exact lower case; anything else is 400 \`invalid_argument\`.
- A JSON field not listed, at any depth, is 400 \`unknown_field\`.
- Checks run in this order: route (404 \`not_found\` for a path not here, 405
  \`method_not_allowed\` with \`Allow\` for a method not listed), authentication (401, 402, 403),
  spool and queue (404), headers and query (400), length (411, 413), then the operation.
- Errors are \`{"kind", "message", "details"}\` as application/json; match on status and kind.
  The one exception is the 403 of a blocked key, whose body has no kind.
- Timestamps are RFC 3339 UTC with milliseconds. Durations carry their unit in the name.
- Send retries: every 4xx, 503 and 507 is answered before any append, so a retry cannot
  duplicate. After a 500, 502, 504 or no answer the message may be stored: retry only with the
  same dedup key on a queue with a dedup window.
- Each response carries \`X-Request-Id\` (the client's when it sent a plain one of up to 64
  characters).`;

const TAGS: readonly JsonObject[] = [
  { name: 'Spools', description: 'A spool holds queues; every account has `default`.' },
  { name: 'Queues', description: 'Create, describe, change and delete queues.' },
  { name: 'Messages', description: 'Send, receive, and ack one message while sending another.' },
  { name: 'Leases', description: 'Settle a delivery with the lease receive gave.' },
  {
    name: 'Failures and inspection',
    description: 'List messages, read the failure queue, peek, recover and discard.',
  },
  { name: 'Service', description: 'This document and the probes; no key needed.' },
];

/** Builds the document (a fresh plain object each call). */
export function buildOpenApiDocument(): JsonObject {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'mq /v1',
      version: '1.0.0',
      summary: 'Queues of raw-byte messages with leases, retries, failure queues and dedup.',
      description: DESCRIPTION,
    },
    servers: [
      { url: '/', description: 'The listener that served this document.' },
      { url: 'http://127.0.0.1:8080', description: 'mq serve, mq local: the default address.' },
    ],
    security: [{ bearer: [] }],
    tags: TAGS,
    paths: apiPaths(),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key as a bearer token.' },
      },
      schemas: { ...dataSchemas(), ...errorSchemas() },
      responses: errorResponses(),
    },
  };
}

let serialised: string | undefined;

/** The document as JSON text (2-space indented, trailing newline), built once. */
export function openApiJson(): string {
  serialised ??= `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;
  return serialised;
}
