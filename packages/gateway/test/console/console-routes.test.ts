import { describe, expect, it } from 'vitest';
import { createAdminApp } from '../../src/admin/admin-app.js';
import type { AdminBackend } from '@spoolmq/protocol';
import { createGatewayApp } from '../../src/app.js';
import { CONSOLE_CSP, CONSOLE_FILES } from '../../src/console/console-assets.js';
import { consoleResponse } from '../../src/console/console-routes.js';
import { FakeService } from '../fake-service.js';

const TOKEN = 'admin-token-0123456789';
/** The console routes never reach the backend. */
const NO_BACKEND = {} as AdminBackend;

describe('console routes', () => {
  it('serve every console file with its type, the CSP and no inline script', async () => {
    for (const [name, type] of Object.entries(CONSOLE_FILES)) {
      const response = consoleResponse('GET', `/console/${name}`, 'public');
      expect(response.status, name).toBe(200);
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      const text = await response.text();
      if (name.endsWith('.html')) {
        // Every script is a file of the console's own: no inline code, no other origin.
        expect(text).not.toMatch(/<script(?![^>]*\bsrc="[a-z-]+\.js")[^>]*>/);
        expect(text).not.toMatch(/https?:\/\//);
        expect(text).not.toMatch(/\son[a-z]+=/);
      }
      expect(text, name).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    }
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
  });

  it('serve index.html at /console/, redirect /console, and 404 anything else', async () => {
    const index = consoleResponse('GET', '/console/', 'public');
    expect(await index.text()).toContain('<script type="module" src="console.js">');
    const redirect = consoleResponse('GET', '/console', 'public');
    expect([redirect.status, redirect.headers.get('location')]).toEqual([301, '/console/']);
    for (const path of ['/console/nope.js', '/console/../package.json', '/console/dom.js/x']) {
      expect(consoleResponse('GET', path, 'public').status, path).toBe(404);
    }
    expect(consoleResponse('POST', '/console/', 'public').status).toBe(405);
    const head = consoleResponse('HEAD', '/console/', 'public');
    expect([head.status, head.body]).toEqual([200, null]);
  });

  it('tell the page which listener served it', async () => {
    expect(await consoleResponse('GET', '/console/config.json', 'admin').json()).toEqual({
      listener: 'admin',
    });
  });

  it('are served by the public app without a key', async () => {
    const app = createGatewayApp(new FakeService());
    const response = await app.request('http://gw.test/console/');
    expect(response.status).toBe(200);
    expect(await (await app.request('http://gw.test/console/config.json')).json()).toEqual({
      listener: 'public',
    });
  });
});

describe('admin listener hooks', () => {
  const app = createAdminApp(NO_BACKEND, {
    token: TOKEN,
    metrics: async () => 'mq_queue_series_dropped 0\n',
    memberStatus: () => ({ id: 'n1' }),
  });
  const auth = { authorization: `Bearer ${TOKEN}` };

  it('serve the console without the token', async () => {
    expect((await app.request('http://admin.test/console/')).status).toBe(200);
    expect(await (await app.request('http://admin.test/console/config.json')).json()).toEqual({
      listener: 'admin',
    });
  });

  it('serve /metrics and the member status only with the token', async () => {
    expect((await app.request('http://admin.test/metrics')).status).toBe(401);
    const wrong = { authorization: 'Bearer not-the-admin-token' };
    expect((await app.request('http://admin.test/metrics', { headers: wrong })).status).toBe(401);
    const metrics = await app.request('http://admin.test/metrics', { headers: auth });
    expect(await metrics.text()).toBe('mq_queue_series_dropped 0\n');
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect((await app.request('http://admin.test/admin/v1/member-status')).status).toBe(401);
    const status = await app.request('http://admin.test/admin/v1/member-status', { headers: auth });
    expect(await status.json()).toEqual({ id: 'n1' });
  });

  it('have no /metrics when no metrics are given', async () => {
    const bare = createAdminApp(NO_BACKEND, { token: TOKEN });
    expect((await bare.request('http://admin.test/metrics', { headers: auth })).status).toBe(404);
  });
});
