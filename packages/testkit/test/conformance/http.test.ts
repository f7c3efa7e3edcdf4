// The conformance suite's verdicts on 411, 413 and repeated headers are only as good as the
// bytes its client puts on the wire. These tests capture those bytes with a raw TCP server.

import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  header,
  headersOnlyRequest,
  jsonBody,
  rawRequest,
  startRequest,
} from '../../src/conformance/http.js';

/** Request heads (and whatever body bytes arrived with them) seen by the capture server. */
const captured: string[] = [];
let server: net.Server;
let baseUrl = '';

/** Answers every request as soon as its head arrives, never reading a body it does not need. */
function answerOnHead(socket: net.Socket): void {
  let buffer = '';
  socket.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('latin1');
    if (!buffer.includes('\r\n\r\n')) return;
    const head = buffer;
    buffer = '';
    // Let a body sent with the head arrive before recording, so framing is visible.
    setImmediate(() => {
      captured.push(head);
      const body = '{"ok":true}';
      socket.end(
        'HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n' +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  });
  socket.on('error', () => socket.destroy());
}

beforeAll(async () => {
  server = net.createServer(answerOnHead);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  baseUrl = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function lastHead(): string {
  const head = captured.at(-1);
  expect(head).toBeDefined();
  return (head ?? '').toLowerCase();
}

describe('rawRequest', () => {
  it('length framing sends Content-Length, including an explicit 0 for an empty body', async () => {
    const response = await rawRequest({
      method: 'POST',
      url: `${baseUrl}/a`,
      body: new Uint8Array(0),
    });
    expect(response.status).toBe(413);
    expect(lastHead()).toContain('\r\ncontent-length: 0\r\n');
    expect(lastHead()).not.toContain('transfer-encoding');
  });

  it('none framing sends neither Content-Length nor Transfer-Encoding', async () => {
    await rawRequest({ method: 'POST', url: `${baseUrl}/b`, framing: 'none' });
    expect(lastHead()).not.toContain('content-length');
    expect(lastHead()).not.toContain('transfer-encoding');
  });

  it('chunked framing sends Transfer-Encoding: chunked and no Content-Length', async () => {
    await rawRequest({ method: 'POST', url: `${baseUrl}/c`, body: 'abc', framing: 'chunked' });
    expect(lastHead()).toContain('\r\ntransfer-encoding: chunked\r\n');
    expect(lastHead()).not.toContain('content-length');
  });

  it('an array header value is sent as a repeated header', async () => {
    const headers = { 'Svc-Dedup-String': ['x', 'y'] };
    await rawRequest({ method: 'GET', url: `${baseUrl}/d`, headers });
    const head = lastHead();
    expect(head).toContain('\r\nsvc-dedup-string: x\r\n');
    expect(head).toContain('\r\nsvc-dedup-string: y\r\n');
  });

  it('reads the status, headers and body', async () => {
    const response = await rawRequest({ method: 'GET', url: `${baseUrl}/e?q=1` });
    expect(lastHead().startsWith('get /e?q=1 http/1.1\r\n')).toBe(true);
    expect(header(response, 'Content-Type')).toBe('application/json');
    expect(jsonBody(response)).toEqual({ ok: true });
  });
});

describe('startRequest', () => {
  it('abort() drops the connection and rejects the response', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const closed = new Promise<void>((resolve) => {
      silent.on('connection', (socket) => socket.on('close', () => resolve()));
    });
    const exchange = startRequest({ method: 'POST', url: `http://127.0.0.1:${port}/recv` });
    // Wait until the server holds the connection, then abandon it.
    await new Promise<void>((resolve) => silent.once('connection', () => resolve()));
    exchange.abort();
    await expect(exchange.response).rejects.toThrow();
    await closed;
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });
});

describe('headersOnlyRequest', () => {
  it('sends the Content-Length it is given and no body, and returns the answer', async () => {
    const response = await headersOnlyRequest({
      method: 'POST',
      url: `${baseUrl}/f`,
      headers: { Authorization: 'Bearer k' },
      contentLength: 1_048_577,
    });
    expect(response.status).toBe(413);
    const head = lastHead();
    expect(head).toContain('\r\ncontent-length: 1048577\r\n');
    expect(head.endsWith('\r\n\r\n')).toBe(true);
  });
});
