// Judges HTTP exchanges against the OpenAPI document, so the document cannot drift from the
// server: every response must be one the document lists for the operation (or the router's 404
// and 405 for paths and methods it does not list); a request the document does not describe must
// be refused with a listed error; and a request it does describe must not be refused as
// malformed, except through the fields an operation names in `x-invalid-argument-fields`
// (rules across parameters, or that only the service can judge, such as a cursor).

import { DocumentIndex, isRecord, type JsonRecord } from './document-index.js';
import type { Exchange } from './exchange.js';
import { requestProblems } from './request-check.js';
import { responseProblems } from './response-check.js';
import { SchemaValidator } from './schema-validator.js';

/** Kinds and statuses that say "this request is malformed" whatever the state of the service. */
const MALFORMED_KINDS = new Set(['unknown_header', 'unknown_field', 'invalid_json']);
const MALFORMED_STATUSES = new Set([411, 415]);

interface ErrorBody {
  readonly kind?: unknown;
  readonly details?: { readonly field?: unknown };
}

function errorBodyOf(body: Uint8Array): ErrorBody {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    return isRecord(parsed) ? (parsed as ErrorBody) : {};
  } catch {
    return {};
  }
}

export class OpenApiChecker {
  private readonly index: DocumentIndex;
  private readonly schemas: SchemaValidator;
  /** operationId -> statuses answered to requests the document describes. */
  private readonly seen = new Map<string, Set<number>>();

  constructor(document: JsonRecord) {
    this.index = new DocumentIndex(document);
    this.schemas = new SchemaValidator(document);
  }

  /** Every way the exchange departs from the document; empty when it conforms. */
  check(exchange: Exchange): string[] {
    const { request, response } = exchange;
    const url = new URL(request.url);
    const match = this.index.match(request.method, url.pathname);
    const { index, schemas } = this;
    if (match.kind === 'no-path') {
      const pointer = '/components/responses/NoSuchPath';
      const problems = responseProblems({ index, schemas, pointer, response });
      return [...this.expectStatus(exchange, 404), ...problems];
    }
    if (match.kind === 'no-method') {
      const pointer = '/components/responses/MethodNotAllowed';
      const allow = String(response.headers['allow'] ?? '').split(/, */).sort();
      const allowProblems =
        allow.join() === [...match.allowed].sort().join() ? [] : [`Allow is ${allow.join()}`];
      return [
        ...this.expectStatus(exchange, 405),
        ...allowProblems,
        ...responseProblems({ index, schemas, pointer, response }),
      ];
    }
    const { entry, params } = match;
    const requestIssues = requestProblems({ index, schemas, entry, params, request });
    const responses = entry.operation['responses'];
    const status = String(response.status);
    if (!isRecord(responses) || !(status in responses)) {
      return [`status ${status} is not listed for ${entry.id}`];
    }
    const pointer = `${entry.pointer}/responses/${status}`;
    const problems = responseProblems({ index, schemas, pointer, response });
    if (requestIssues.length > 0) {
      if (response.status < 400) {
        problems.push(`a request the document does not describe (${requestIssues.join('; ')}) ` +
          `was answered ${status}`);
      }
      return problems;
    }
    this.record(entry.id, response.status);
    return [...problems, ...this.refusalProblems(entry.operation, exchange)];
  }

  /** A request the document describes, refused as malformed: the document or server is wrong. */
  private refusalProblems(operation: JsonRecord, exchange: Exchange): string[] {
    const { status, body } = exchange.response;
    if (status !== 400 && !MALFORMED_STATUSES.has(status)) return [];
    const error = errorBodyOf(body);
    const kind = String(error.kind);
    if (MALFORMED_STATUSES.has(status) || MALFORMED_KINDS.has(kind)) {
      return [`the document describes this request, yet it was refused: ${status} ${kind}`];
    }
    if (kind !== 'invalid_argument') return [];
    const field = String(error.details?.field);
    const allowed = operation['x-invalid-argument-fields'];
    if (Array.isArray(allowed) && allowed.includes(field)) return [];
    return [`the document describes this request, yet ${field} was refused (invalid_argument)`];
  }

  private expectStatus(exchange: Exchange, status: number): string[] {
    const got = exchange.response.status;
    return got === status ? [] : [`expected ${status} for a path or method not listed, got ${got}`];
  }

  private record(operationId: string, status: number): void {
    let statuses = this.seen.get(operationId);
    if (statuses === undefined) {
      statuses = new Set();
      this.seen.set(operationId, statuses);
    }
    statuses.add(status);
  }

  /** operationIds never answered with a 2xx to a request the document describes. */
  unexercised(): string[] {
    return this.index.operations
      .map((entry) => entry.id)
      .filter((id) => ![...(this.seen.get(id) ?? [])].some((status) => status < 300));
  }

  /** `operationId status` for each listed response never seen on a described request. */
  unseenStatuses(): string[] {
    const unseen: string[] = [];
    for (const entry of this.index.operations) {
      const responses = entry.operation['responses'];
      for (const status of Object.keys(isRecord(responses) ? responses : {})) {
        if (!this.seen.get(entry.id)?.has(Number(status))) unseen.push(`${entry.id} ${status}`);
      }
    }
    return unseen;
  }
}

/** `METHOD path -> status` for messages. */
export function describeExchange(exchange: Exchange): string {
  const url = new URL(exchange.request.url);
  return `${exchange.request.method} ${url.pathname}${url.search} -> ${exchange.response.status}`;
}
