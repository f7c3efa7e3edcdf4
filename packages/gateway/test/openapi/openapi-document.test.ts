// The document against the code it describes: its paths and methods are the route table's, each
// operation's Svc-* headers and query parameters are exactly those the operation accepts, it is
// served at /v1/openapi.json without a key, and docs/openapi.json is the same text.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createGatewayApp } from '../../src/app.js';
import { buildOpenApiDocument, openApiJson } from '../../src/openapi/openapi-document.js';
import { ROUTES } from '../../src/routes.js';
import { FakeService } from '../fake-service.js';

type Operation = { parameters: Array<{ name: string; in: string; required: boolean }> };
type Doc = { paths: Record<string, Record<string, Operation>> };

const doc = buildOpenApiDocument() as unknown as Doc;
const repoDoc = fileURLToPath(new URL('../../../../docs/openapi.json', import.meta.url));
const OUTSIDE_TABLE = ['/v1/openapi.json', '/healthz', '/readyz', '/metrics'];

/** `/v1/spools/:spool/queues/:queue` -> `/v1/spools/{spool}/queues/{queue}`. */
function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z]+)/g, '{$1}');
}

describe('OpenAPI document', () => {
  it('has exactly the route table paths and methods, plus the document and the probes', () => {
    const fromRoutes = ROUTES.map((route) => [
      openApiPath(route.path),
      Object.keys(route.methods).map((m) => m.toLowerCase()).sort(),
    ]);
    const fromDoc = Object.entries(doc.paths)
      .filter(([path]) => !OUTSIDE_TABLE.includes(path))
      .map(([path, item]) => [path, Object.keys(item).sort()]);
    expect(Object.fromEntries(fromDoc)).toEqual(Object.fromEntries(fromRoutes));
    for (const path of OUTSIDE_TABLE) expect(Object.keys(doc.paths[path] ?? {})).toEqual(['get']);
  });

  it('lists per operation exactly the Svc-* headers and query parameters accepted', () => {
    for (const route of ROUTES) {
      for (const [method, operation] of Object.entries(route.methods)) {
        const documented = doc.paths[openApiPath(route.path)]?.[method.toLowerCase()];
        const where = `${method} ${route.path}`;
        expect(documented, where).toBeDefined();
        const params = documented?.parameters ?? [];
        const svc = params
          .filter((param) => param.in === 'header' && param.name.toLowerCase().startsWith('svc-'))
          .map((param) => param.name.toLowerCase());
        expect(svc.sort(), where).toEqual([...operation.svcHeaders].sort());
        const query = params.filter((param) => param.in === 'query').map((param) => param.name);
        expect(query.sort(), where).toEqual(Object.keys(operation.query).sort());
      }
    }
  });

  it('is served at GET /v1/openapi.json without a key, and 405 for another method', async () => {
    const app = createGatewayApp(new FakeService());
    const response = await app.request('/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe(openApiJson());
    const post = await app.request('/v1/openapi.json', { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });

  it('is the text of docs/openapi.json (MQ_WRITE_OPENAPI=1 rewrites the file)', () => {
    if (process.env['MQ_WRITE_OPENAPI'] === '1') writeFileSync(repoDoc, openApiJson());
    expect(readFileSync(repoDoc, 'utf8')).toBe(openApiJson());
  });
});
