// Health and metrics endpoints outside /v1: /healthz, /readyz (no auth) and /metrics in the
// Prometheus text format.

import { describe, expect, it } from 'vitest';
import type { Api } from './api.js';
import { header } from './http.js';
import { expectStatus } from './expectations.js';

/** A Prometheus sample line: name, optional labels, a value. */
const samplePattern =
  /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? +(-?[0-9.]+([eE][-+]?[0-9]+)?|NaN|[-+]Inf)( +-?[0-9]+)?$/;

export function defineHealthTests(getApi: () => Api): void {
  describe('health and metrics', () => {
    it('GET /healthz answers 200 without credentials', async () => {
      const api = getApi();
      expectStatus(await api.callUrl('GET', api.rootUrl('/healthz'), { auth: false }), 200);
    });

    it('GET /readyz answers 200 without credentials when the process can serve', async () => {
      const api = getApi();
      expectStatus(await api.callUrl('GET', api.rootUrl('/readyz'), { auth: false }), 200);
    });

    it('GET /metrics answers the Prometheus text format', async () => {
      const api = getApi();
      const response = await api.callUrl('GET', api.rootUrl('/metrics'), {
        auth: !api.capabilities.metricsOpen,
      });
      expectStatus(response, 200);
      expect(header(response, 'content-type') ?? '').toMatch(/^text\/plain\b/);
      const lines = response.body.toString('utf8').split('\n').filter((line) => line.length > 0);
      expect(lines.some((line) => line.startsWith('# TYPE '))).toBe(true);
      const samples = lines.filter((line) => !line.startsWith('#'));
      expect(samples.length).toBeGreaterThan(0);
      for (const line of samples) expect(line).toMatch(samplePattern);
    });
  });
}
