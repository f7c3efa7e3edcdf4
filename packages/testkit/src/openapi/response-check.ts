// Whether a response is one the document describes for the operation: a listed status; every
// required header present and each listed header valid; no Svc-* header the response does not
// list; a body only where content is listed, of a listed media type, JSON valid by its schema.

import { isRecord, type DocumentIndex, type JsonRecord } from './document-index.js';
import { mediaTypeOf, type ExchangeResponse } from './exchange.js';
import type { SchemaValidator } from './schema-validator.js';

export interface ResponseContext {
  readonly index: DocumentIndex;
  readonly schemas: SchemaValidator;
  /** JSON pointer of the response object as listed (may hold a $ref). */
  readonly pointer: string;
  readonly response: ExchangeResponse;
}

function headerValue(response: ExchangeResponse, name: string): string | string[] | undefined {
  return response.headers[name.toLowerCase()];
}

/** `$ref`s followed by pointer, so schemas compile at their place in the document. */
function resolvedPointer(index: DocumentIndex, pointer: string): { at: string; value: JsonRecord } {
  let at = pointer;
  for (let hops = 0; hops < 16; hops += 1) {
    const value = index.at(`#${at}`);
    if (!isRecord(value)) break;
    const target = value['$ref'];
    if (typeof target !== 'string') return { at, value };
    at = target.slice(1);
  }
  throw new Error(`response ${pointer} does not resolve to an object`);
}

function readHeader(text: string, schema: JsonRecord): unknown {
  if (schema['type'] === 'integer') return /^[0-9]{1,16}$/.test(text) ? Number(text) : text;
  return text;
}

function headerProblems(context: ResponseContext, at: string, listed: JsonRecord): string[] {
  const { index, schemas, response } = context;
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(listed)) {
    const header = index.resolve(raw);
    const value = headerValue(response, name);
    if (value === undefined) {
      if (header['required'] === true) problems.push(`header ${name} is missing`);
      continue;
    }
    if (Array.isArray(value)) {
      problems.push(`header ${name} is repeated`);
      continue;
    }
    const schema = index.resolve(header['schema']);
    const pointer = `${at}/headers/${name}/schema`;
    for (const problem of schemas.check(pointer, readHeader(value, schema))) {
      problems.push(`header ${name}: ${problem}`);
    }
  }
  const names = new Set(Object.keys(listed).map((name) => name.toLowerCase()));
  for (const name of Object.keys(response.headers)) {
    if (name.startsWith('svc-') && !names.has(name)) problems.push(`header ${name} is not listed`);
  }
  return problems;
}

function contentProblems(
  context: ResponseContext,
  at: string,
  content: JsonRecord | undefined,
): string[] {
  const { response, schemas } = context;
  const bytes = response.body.byteLength;
  if (content === undefined) {
    return bytes === 0 ? [] : [`a body of ${bytes} bytes where none is listed`];
  }
  const contentType = headerValue(response, 'content-type');
  const media = mediaTypeOf(typeof contentType === 'string' ? contentType : undefined);
  if (media === undefined || !(media in content)) {
    return [`content type ${media ?? '(none)'} is not one of ${Object.keys(content).join(', ')}`];
  }
  if (media !== 'application/json') return [];
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(response.body).toString('utf8'));
  } catch {
    return ['the body is not JSON'];
  }
  const pointer = `${at}/content/${media.replace('/', '~1')}/schema`;
  return schemas.check(pointer, value).map((problem) => `body: ${problem}`);
}

/** Every way the response departs from the listed response at `context.pointer`. */
export function responseProblems(context: ResponseContext): string[] {
  const { at, value } = resolvedPointer(context.index, context.pointer);
  const headers = isRecord(value['headers']) ? value['headers'] : {};
  const content = isRecord(value['content']) ? value['content'] : undefined;
  return [...headerProblems(context, at, headers), ...contentProblems(context, at, content)];
}
