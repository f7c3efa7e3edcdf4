// docs/api.md is kept true by the OpenAPI document: every operation has its section (and no
// section names an operation the document lacks), and every Svc-* header, query parameter and
// error kind the document lists is named in the reference.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { STATUS_OF_KIND } from '@spoolmq/engine';
import { buildOpenApiDocument } from '../../src/openapi/openapi-document.js';

type Parameter = { name: string; in: string };
type Response = { headers?: Record<string, unknown> };
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  responses: Record<string, Response | { $ref: string }>;
};
type Doc = { paths: Record<string, Record<string, Operation>> };

const doc = buildOpenApiDocument() as unknown as Doc;
const reference = readFileSync(
  fileURLToPath(new URL('../../../../docs/api.md', import.meta.url)),
  'utf8',
);

function operations(): Array<{ method: string; path: string; operation: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      operation,
    })),
  );
}

describe('docs/api.md', () => {
  it('has a section per operation of the document, naming its operationId, and no other', () => {
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    const sections = [...reference.matchAll(/^#### `([A-Z]+ \/[^`]*)`$/gm)].map((m) => m[1]);
    expect([...sections].sort()).toEqual([...documented].sort());
    for (const { method, path, operation } of operations()) {
      const start = reference.indexOf(`#### \`${method} ${path}\``);
      const end = reference.indexOf('\n#', start + 1);
      const section = reference.slice(start, end < 0 ? undefined : end);
      expect(section, `${method} ${path}`).toContain(`(\`${operation.operationId}\``);
    }
  });

  it('names every Svc-* header and query parameter of the document', () => {
    const names = new Set<string>();
    for (const { operation } of operations()) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'query' || parameter.name.startsWith('Svc-')) names.add(parameter.name);
      }
      for (const response of Object.values(operation.responses)) {
        for (const name of Object.keys('headers' in response ? (response.headers ?? {}) : {})) {
          if (name.startsWith('Svc-')) names.add(name);
        }
      }
    }
    const missing = [...names].filter((name) => !reference.includes(`\`${name}`));
    expect(missing).toEqual([]);
  });

  it('names every error kind with its status in the errors table', () => {
    for (const [kind, status] of Object.entries(STATUS_OF_KIND)) {
      if (kind === 'key_blocked') {
        expect(reference).toMatch(/^\| 403 \| \(no kind\) \|/m);
        continue;
      }
      expect(reference, kind).toMatch(new RegExp(`^\\| ${status} \\| [^|]*\`${kind}\``, 'm'));
    }
  });
});
