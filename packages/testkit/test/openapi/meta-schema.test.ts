// The served document is valid OpenAPI 3.1, and the check is strict enough to notice a broken one.

import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@spoolmq/gateway';
import { openApiMetaProblems } from '../../src/openapi/meta-schema.js';

type Doc = {
  paths: Record<string, Record<string, { parameters: Array<Record<string, unknown>> }>>;
  components: { schemas: Record<string, Record<string, unknown>> };
};

function document(): Doc {
  return structuredClone(buildOpenApiDocument()) as unknown as Doc;
}

describe('openApiMetaProblems', () => {
  it('finds nothing wrong with the gateway document', () => {
    expect(openApiMetaProblems(buildOpenApiDocument())).toEqual([]);
  });

  it('refuses a parameter in an unknown location', () => {
    const broken = document();
    const parameter = broken.paths['/v1/spools/{spool}']?.['get']?.parameters[0];
    if (parameter === undefined) throw new Error('describeSpool has a spool parameter');
    parameter['in'] = 'body';
    expect(openApiMetaProblems(broken)).not.toEqual([]);
  });

  it('refuses a Schema Object that is not a valid JSON Schema', () => {
    const broken = document();
    const name = broken.components.schemas['Name'];
    if (name === undefined) throw new Error('the document has a Name schema');
    name['type'] = 'strng';
    expect(openApiMetaProblems(broken).join('\n')).toContain('/components/schemas/Name/type');
  });
});
