// Answers for the web console's paths (/console, /console/, /console/<file>, and
// /console/config.json which tells the page which listener served it). Static, no auth: the page
// holds no data; every number it shows comes from the API with the key or token typed in it.

import { MqError } from '@spoolmq/engine';
import { mqErrorResponse } from '../error-response.js';
import { CONSOLE_CSP, consoleAssets } from './console-assets.js';

/** The public API's listener (an API key signs in) or the admin listener (the admin token). */
export type ConsoleListener = 'public' | 'admin';

export const CONSOLE_PATH = '/console';

function securityHeaders(contentType: string): Headers {
  return new Headers({
    'content-type': contentType,
    'content-security-policy': CONSOLE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    // Small files: revalidate each load so an upgraded server never runs an old page.
    'cache-control': 'no-cache',
  });
}

/**
 * The response to `method` `path` (a path at or under CONSOLE_PATH) on `listener`: the file,
 * a redirect from /console to /console/, 405 for a method other than GET or HEAD, 404 for a name
 * the console does not have.
 */
export function consoleResponse(method: string, path: string, listener: ConsoleListener): Response {
  if (method !== 'GET' && method !== 'HEAD') {
    const refusal = new MqError('method_not_allowed', 'method not allowed; use GET');
    const response = mqErrorResponse(refusal);
    response.headers.set('allow', 'GET, HEAD');
    return response;
  }
  if (path === CONSOLE_PATH) {
    return new Response(null, { status: 301, headers: { location: `${CONSOLE_PATH}/` } });
  }
  const name = path === `${CONSOLE_PATH}/` ? 'index.html' : path.slice(CONSOLE_PATH.length + 1);
  if (name === 'config.json') {
    const headers = securityHeaders('application/json');
    headers.set('cache-control', 'no-store');
    return new Response(JSON.stringify({ listener }), { status: 200, headers });
  }
  const asset = consoleAssets().get(name);
  if (asset === undefined) return mqErrorResponse(new MqError('not_found', 'no such console file'));
  const body = method === 'HEAD' ? null : asset.body;
  return new Response(body, { status: 200, headers: securityHeaders(asset.contentType) });
}
