// Whether a request is one the document describes: its key (per the operation's security), each
// path, query and header parameter against its schema, no parameter or Svc-* header the
// operation does not list, and the body against the request body's media type and schema.
// Values arrive as text, so integers and booleans are read as the API reads them (plain digits;
// exactly true/false) before the schema judges them.

import type { DocumentIndex, JsonRecord, JsonValue, OperationEntry } from './document-index.js';
import { isRecord } from './document-index.js';
import { mediaTypeOf, requestHeaderValues, type ExchangeRequest } from './exchange.js';
import type { SchemaValidator } from './schema-validator.js';

/** The bearer syntax the API reads; whether the key is known is the server's verdict. */
const BEARER = /^Bearer +[\x21-\x7E]+ *$/i;
const OCTETS = 'application/octet-stream';
const JSON_TYPE = 'application/json';

export interface RequestContext {
  readonly index: DocumentIndex;
  readonly schemas: SchemaValidator;
  readonly entry: OperationEntry;
  /** Decoded path parameters; undefined when the path did not decode. */
  readonly params: Readonly<Record<string, string>> | undefined;
  readonly request: ExchangeRequest;
}

/** Text -> the value the API reads for a schema of `type`; unreadable text stays text. */
function readScalar(text: string, type: JsonValue | undefined): unknown {
  if (type === 'integer') return /^[0-9]{1,16}$/.test(text) ? Number(text) : text;
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  return text;
}

function securityProblems(context: RequestContext): string[] {
  const { index, entry, request } = context;
  const requirements = entry.operation['security'] ?? index.document['security'] ?? [];
  if (!Array.isArray(requirements) || requirements.length === 0) return [];
  if (requirements.some((r) => isRecord(r) && Object.keys(r).length === 0)) return [];
  const values = requestHeaderValues(request, 'authorization');
  if (values.length === 1 && BEARER.test(values[0] as string)) return [];
  return ['no Authorization: Bearer <key> header'];
}

/** The values a parameter has in the request, all as text. */
function parameterValues(context: RequestContext, where: string, name: string): string[] {
  const { request } = context;
  if (where === 'path') {
    const value = context.params?.[name];
    return value === undefined ? [] : [value];
  }
  if (where === 'query') return new URL(request.url).searchParams.getAll(name);
  if (name.toLowerCase() === 'content-length') {
    return request.contentLength === undefined ? [] : [String(request.contentLength)];
  }
  return requestHeaderValues(request, name);
}

function parameterProblems(context: RequestContext): string[] {
  const { index, schemas, entry } = context;
  const problems: string[] = [];
  const parameters = entry.operation['parameters'];
  const list = Array.isArray(parameters) ? parameters : [];
  list.forEach((raw, i) => {
    const parameter = index.resolve(raw);
    const name = String(parameter['name']);
    const where = String(parameter['in']);
    const values = parameterValues(context, where, name);
    const label = `${where} parameter ${name}`;
    if (values.length === 0) {
      if (parameter['required'] === true) problems.push(`${label} is required`);
      return;
    }
    const schema = index.resolve(parameter['schema']);
    let value: unknown;
    if (schema['type'] === 'array') {
      const items = index.resolve((schema['items'] ?? {}) as JsonRecord);
      value = values.map((text) => readScalar(text, items['type']));
    } else if (values.length > 1) {
      problems.push(`${label} is repeated`);
      return;
    } else {
      value = readScalar(values[0] as string, schema['type']);
    }
    const pointer = `${entry.pointer}/parameters/${i}/schema`;
    for (const problem of schemas.check(pointer, value)) problems.push(`${label}: ${problem}`);
  });
  return problems;
}

/** Names the operation lists, lower case, for one location. */
function listed(context: RequestContext, where: string): Set<string> {
  const parameters = context.entry.operation['parameters'];
  const names = new Set<string>();
  for (const raw of Array.isArray(parameters) ? parameters : []) {
    const parameter = context.index.resolve(raw);
    if (parameter['in'] === where) names.add(String(parameter['name']).toLowerCase());
  }
  return names;
}

function unlistedProblems(context: RequestContext): string[] {
  const problems: string[] = [];
  const query = listed(context, 'query');
  for (const name of new Set(new URL(context.request.url).searchParams.keys())) {
    if (!query.has(name.toLowerCase())) problems.push(`query parameter ${name} is not listed`);
  }
  const headers = listed(context, 'header');
  for (const name of Object.keys(context.request.headers)) {
    const lower = name.toLowerCase();
    if (lower.startsWith('svc-') && !headers.has(lower)) {
      problems.push(`header ${name} is not listed`);
    }
  }
  if (context.params === undefined) problems.push('a path segment does not percent-decode');
  return problems;
}

function jsonBodyProblems(context: RequestContext, body: Uint8Array, pointer: string): string[] {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return ['the body is not UTF-8 JSON'];
  }
  return context.schemas.check(pointer, value).map((problem) => `body: ${problem}`);
}

function bodyProblems(context: RequestContext): string[] {
  const { request, entry, index } = context;
  const declared = entry.operation['requestBody'];
  const body = request.body;
  const length = body?.byteLength ?? request.contentLength ?? 0;
  if (declared === undefined) return length === 0 ? [] : ['the operation takes no body'];
  const requestBody = index.resolve(declared);
  const content = isRecord(requestBody['content']) ? requestBody['content'] : {};
  if (length === 0) return [];
  if (OCTETS in content) return []; // raw payload: any bytes, the Content-Type is not read
  const media = mediaTypeOf(requestHeaderValues(request, 'content-type')[0]);
  if (media === undefined || !(media in content)) {
    const listed = Object.keys(content).join(', ');
    return [`body media type ${media ?? '(none)'} is not one of ${listed}`];
  }
  if (media !== JSON_TYPE || body === undefined) return [];
  const pointer = `${entry.pointer}/requestBody/content/${media.replace('/', '~1')}/schema`;
  return jsonBodyProblems(context, body, pointer);
}

/** Every way the request departs from the document; empty when the document describes it. */
export function requestProblems(context: RequestContext): string[] {
  return [
    ...securityProblems(context),
    ...unlistedProblems(context),
    ...parameterProblems(context),
    ...bodyProblems(context),
  ];
}
