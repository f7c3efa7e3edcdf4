// JSON Schema (draft 2020-12) validation of values against schemas inside the OpenAPI document,
// with Ajv. The whole document is registered once, so a schema anywhere in it is compiled by its
// JSON pointer and its `#/components/...` references resolve as they do in the document.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { JsonRecord } from './document-index.js';

const DOCUMENT_ID = 'openapi.json';

/** A pointer such as `/paths/~1v1~1spools~1{spool}/get` as a URI fragment. */
function fragmentOf(pointer: string): string {
  return pointer
    .split('/')
    .map((token) => encodeURIComponent(token).replace(/%7E/gi, '~'))
    .join('/');
}

export class SchemaValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(document: JsonRecord) {
    // strict: false because the registered root is an OpenAPI document, not a schema (its
    // `openapi`, `paths` keywords are unknown to JSON Schema). Formats are not asserted: every
    // format the document uses is backed by a pattern that is.
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    this.ajv.addSchema(document, DOCUMENT_ID);
  }

  /**
   * Problems of `value` against the schema at `pointer` (a JSON pointer into the document),
   * each as `<instance path> <message>`; empty when it conforms.
   */
  check(pointer: string, value: unknown): string[] {
    let validate = this.compiled.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${fragmentOf(pointer)}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => {
      const where = error.instancePath === '' ? 'value' : error.instancePath;
      const params = JSON.stringify(error.params);
      return `${where} ${error.message ?? 'is invalid'} ${params}`;
    });
  }
}
