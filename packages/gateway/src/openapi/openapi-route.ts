// GET /v1/openapi.json: the document, to anyone. It is the one /v1 path that needs no key: it
// describes the API and holds nothing of any account (like /healthz, it answers before auth).

import { openApiJson } from './openapi-document.js';

export const OPENAPI_PATH = '/v1/openapi.json';

/** The document as a 200 application/json response. */
export function openApiResponse(): Response {
  const headers = { 'content-type': 'application/json', 'cache-control': 'no-cache' };
  return new Response(openApiJson(), { status: 200, headers });
}
