// Response constructors. Headers are plain objects so @hono/node-server writes them without
// building a Headers instance.

export type HeaderRecord = Record<string, string>;

const OCTET_STREAM = 'application/octet-stream';

/** A JSON body with `status`. */
export function jsonResponse(status: number, body: object, headers: HeaderRecord = {}): Response {
  headers['content-type'] = 'application/json';
  return new Response(JSON.stringify(body), { status, headers });
}

/**
 * No body: 201 of a send, 202/204 of the rest. A bodiless 200-202 states `content-length: 0`,
 * or Node would frame it as a chunked body and write its terminator separately.
 */
export function emptyResponse(status: number, headers: HeaderRecord = {}): Response {
  if (status !== 204) headers['content-length'] = '0';
  return new Response(null, { status, headers });
}

/** A payload body (application/octet-stream), bytes as stored. */
export function payloadResponse(payload: Uint8Array, headers: HeaderRecord): Response {
  headers['content-type'] = OCTET_STREAM;
  return new Response(payload as Uint8Array<ArrayBuffer>, { status: 200, headers });
}
