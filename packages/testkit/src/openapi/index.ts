// Checking HTTP exchanges against an OpenAPI 3.1 document (the conformance suite's use of it
// is in ../conformance/openapi.ts).

export { OpenApiChecker, describeExchange } from './openapi-checker.js';
export type { Exchange, ExchangeRequest, ExchangeResponse } from './exchange.js';
export type { JsonRecord, JsonValue } from './document-index.js';
