// The JSON value type the OpenAPI document is built from: plain data, so the document can be
// serialised once and compared byte for byte with the copy kept in docs/openapi.json.

export type Json = null | boolean | number | string | readonly Json[] | JsonObject;

export interface JsonObject {
  readonly [key: string]: Json;
}

/** `{ $ref: '#/components/<section>/<name>' }`. */
export function ref(section: string, name: string): JsonObject {
  return { $ref: `#/components/${section}/${name}` };
}
