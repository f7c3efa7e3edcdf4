// The parts of an OpenAPI 3.1 document the exchange checker reads: path templates matched
// against request paths, operations by method, and `$ref`s resolved within the document.
// Only what our document uses is supported: local refs, path templates of whole segments.

import assert from 'node:assert/strict';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };
export type JsonRecord = { [key: string]: JsonValue };

export interface OperationEntry {
  readonly id: string;
  readonly method: string;
  readonly template: string;
  /** JSON pointer of the operation object, e.g. `/paths/~1v1~1spools~1{spool}/get`. */
  readonly pointer: string;
  readonly operation: JsonRecord;
}

export type PathMatch =
  | { readonly kind: 'no-path' }
  | { readonly kind: 'no-method'; readonly allowed: readonly string[] }
  | {
      readonly kind: 'operation';
      readonly entry: OperationEntry;
      /** Path parameters, percent-decoded; undefined when a segment does not decode. */
      readonly params: Readonly<Record<string, string>> | undefined;
    };

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `a/b~c` -> `a~1b~0c`, one JSON pointer token. */
export function pointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

interface Template {
  readonly path: string;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  /** Literal segments count: more literal wins when two templates match. */
  readonly literals: number;
}

function compileTemplate(path: string): Template {
  const names: string[] = [];
  let literals = 0;
  const source = path
    .split('/')
    .map((segment) => {
      const param = /^\{([^}]+)\}$/.exec(segment);
      if (param === null) {
        literals += 1;
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      names.push(param[1] as string);
      return '([^/]+)';
    })
    .join('/');
  return { path, pattern: new RegExp(`^${source}$`), names, literals };
}

function decodeAll(
  names: readonly string[],
  values: readonly string[],
): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  try {
    names.forEach((name, i) => (params[name] = decodeURIComponent(values[i] as string)));
  } catch {
    return undefined;
  }
  return params;
}

export class DocumentIndex {
  private readonly templates: readonly Template[];
  readonly operations: readonly OperationEntry[];

  constructor(readonly document: JsonRecord) {
    const paths = document['paths'];
    assert(isRecord(paths), 'the document has paths');
    this.templates = Object.keys(paths).map(compileTemplate);
    const operations: OperationEntry[] = [];
    for (const [template, item] of Object.entries(paths)) {
      assert(isRecord(item), `path item ${template} is an object`);
      for (const method of METHODS) {
        const operation = item[method];
        if (!isRecord(operation)) continue;
        const id = operation['operationId'];
        assert(typeof id === 'string', `${method} ${template} has an operationId`);
        const pointer = `/paths/${pointerToken(template)}/${method}`;
        operations.push({ id, method, template, pointer, operation });
      }
    }
    this.operations = operations;
  }

  /** The operation a request names, or why there is none. `pathname` is still encoded. */
  match(method: string, pathname: string): PathMatch {
    let best: { template: Template; values: string[] } | undefined;
    for (const template of this.templates) {
      const found = template.pattern.exec(pathname);
      if (found === null) continue;
      if (best === undefined || template.literals > best.template.literals) {
        best = { template, values: found.slice(1) };
      }
    }
    if (best === undefined) return { kind: 'no-path' };
    const lower = method.toLowerCase();
    const entries = this.operations.filter((entry) => entry.template === best.template.path);
    const entry = entries.find((candidate) => candidate.method === lower);
    if (entry === undefined) {
      return { kind: 'no-method', allowed: entries.map((e) => e.method.toUpperCase()) };
    }
    return { kind: 'operation', entry, params: decodeAll(best.template.names, best.values) };
  }

  /** Follows `$ref` (local, `#/...`) until an object without one. */
  resolve(value: JsonValue | undefined): JsonRecord {
    let current = value;
    for (let hops = 0; hops < 16; hops += 1) {
      assert(isRecord(current), 'a referenced value is an object');
      const target = current['$ref'];
      if (typeof target !== 'string') return current;
      current = this.at(target);
    }
    assert.fail('$ref chain longer than 16');
  }

  /** The value at a local reference `#/a/b`. */
  at(reference: string): JsonValue {
    assert(reference.startsWith('#/'), `only local references: ${reference}`);
    let current: JsonValue = this.document;
    for (const raw of reference.slice(2).split('/')) {
      const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      assert(isRecord(current) && token in current, `reference resolves: ${reference}`);
      current = current[token] as JsonValue;
    }
    return current;
  }
}
