// The checker on hand-made exchanges: what it accepts, and each kind of drift it must catch
// (a response header, status or body the document does not list, a request it does not describe
// that succeeds, and a request it does describe that the server refuses).

import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@spoolmq/gateway';
import type { JsonRecord } from '../../src/openapi/document-index.js';
import type { Exchange, ExchangeRequest, ExchangeResponse } from '../../src/openapi/exchange.js';
import { OpenApiChecker } from '../../src/openapi/openapi-checker.js';

const BASE = 'http://127.0.0.1:1';
const AUTH = { Authorization: 'Bearer k' };
const LEASE = 'L'.repeat(32);
const QUEUE = '/v1/spools/default/queues/jobs';

function documentCopy(): JsonRecord {
  return structuredClone(buildOpenApiDocument()) as unknown as JsonRecord;
}

function exchange(
  request: Partial<ExchangeRequest> & { method: string; path: string },
  response: Partial<ExchangeResponse> & { status: number },
): Exchange {
  const body = request.body ?? new Uint8Array(0);
  return {
    request: {
      method: request.method,
      url: `${BASE}${request.path}`,
      headers: request.headers ?? AUTH,
      body,
      contentLength: 'contentLength' in request ? request.contentLength : body.byteLength,
    },
    response: {
      status: response.status,
      headers: response.headers ?? {},
      body: response.body ?? new Uint8Array(0),
    },
  };
}

type Answer = Partial<ExchangeResponse> & { status: number };

function jsonResponse(status: number, body: unknown): Answer {
  const headers = { 'content-type': 'application/json' };
  return { status, headers, body: Buffer.from(JSON.stringify(body)) };
}

function error(status: number, kind: string, details: object = {}): Answer {
  return jsonResponse(status, { kind, message: 'm', details });
}

const send = { method: 'POST', path: `${QUEUE}/send`, body: Buffer.from('hello') };
const sent = { status: 201, headers: { 'svc-message-id': 'm1', 'content-length': '0' } };

describe('OpenApiChecker', () => {
  const checker = new OpenApiChecker(documentCopy());

  it('accepts a send the document describes, answered as it lists', () => {
    expect(checker.check(exchange(send, sent))).toEqual([]);
    expect(checker.unexercised()).not.toContain('send');
    expect(checker.unexercised()).toContain('ack');
  });

  it('catches a response header, status or body the document does not list', () => {
    const extra = { ...sent, headers: { ...sent.headers, 'svc-trace': 'x' } };
    expect(checker.check(exchange(send, extra))).toEqual(['header svc-trace is not listed']);
    expect(checker.check(exchange(send, { status: 202 }))).toEqual([
      'status 202 is not listed for send',
    ]);
    const recv = { method: 'POST', path: `${QUEUE}/recv?waitSeconds=0` };
    const delivery = {
      status: 200,
      headers: {
        'content-type': 'application/octet-stream',
        'svc-lease': LEASE,
        'svc-message-id': 'm1',
      },
      body: Buffer.from('x'),
    };
    expect(checker.check(exchange(recv, delivery))).toEqual([
      'header Svc-Message-Retries is missing',
    ]);
    const queue = { name: 'jobs', createdAt: '2026-11-21T10:00:00.000Z', state: 'active' };
    const described = exchange({ method: 'GET', path: QUEUE }, jsonResponse(200, queue));
    const problems = checker.check(described);
    expect(problems.join()).toContain("must have required property 'settings'");
  });

  it('wants 404 not_found for a path it does not list, and 405 with Allow for a method', () => {
    const nowhere = { method: 'GET', path: '/v1/nothing' };
    expect(checker.check(exchange(nowhere, error(404, 'not_found')))).toEqual([]);
    expect(checker.check(exchange(nowhere, jsonResponse(200, {})))).toContain(
      'expected 404 for a path or method not listed, got 200',
    );
    const wrong = { method: 'POST', path: QUEUE };
    const allowed = { ...error(405, 'method_not_allowed') };
    const allow = (value: string): Answer => ({
      ...allowed,
      headers: { ...allowed.headers, allow: value },
    });
    expect(checker.check(exchange(wrong, allow('GET, PUT, PATCH, DELETE')))).toEqual([]);
    expect(checker.check(exchange(wrong, allow('GET, PUT')))).toEqual(['Allow is GET,PUT']);
  });

  it('wants a request it does not describe refused with a listed error', () => {
    const bogus = { ...send, headers: { ...AUTH, 'Svc-Bogus': '1' } };
    expect(checker.check(exchange(bogus, error(400, 'unknown_header', { header: 'Svc-Bogus' }))))
      .toEqual([]);
    expect(checker.check(exchange(bogus, sent)).join()).toContain(
      'a request the document does not describe (header Svc-Bogus is not listed) was answered 201',
    );
    const anonymous = { ...send, headers: {} };
    expect(checker.check(exchange(anonymous, sent)).join()).toContain('no Authorization');
    const unframed = { ...send, body: new Uint8Array(0), contentLength: undefined };
    expect(checker.check(exchange(unframed, error(411, 'length_required')))).toEqual([]);
  });

  it('catches a request it describes being refused as malformed', () => {
    const headers = { ...AUTH, 'Svc-Delay-Seconds': '5' };
    const refused = error(400, 'unknown_header', { header: 'Svc-Delay-Seconds' });
    expect(checker.check(exchange({ ...send, headers }, refused))).toEqual([
      'the document describes this request, yet it was refused: 400 unknown_header',
    ]);
    const cursor = error(400, 'invalid_argument', { field: 'after' });
    const listing = { method: 'GET', path: `${QUEUE}/messages?after=forged` };
    expect(checker.check(exchange(listing, cursor))).toEqual([]);
  });

  it('catches a limit the document states but the server does not keep', () => {
    const drifted = documentCopy() as unknown as {
      paths: Record<string, { post: { parameters: Array<{ name: string; schema: JsonRecord }> } }>;
    };
    const wait = drifted.paths[`/v1/spools/{spool}/queues/{queue}/recv`]?.post.parameters.find(
      (parameter) => parameter.name === 'waitSeconds',
    );
    if (wait === undefined) throw new Error('receive lists waitSeconds');
    wait.schema = { ...wait.schema, maximum: 30 };
    const recv = { method: 'POST', path: `${QUEUE}/recv?waitSeconds=25` };
    const refused = error(400, 'invalid_argument', { field: 'waitSeconds' });
    expect(checker.check(exchange(recv, refused))).toEqual([]);
    const driftedChecker = new OpenApiChecker(drifted as unknown as JsonRecord);
    expect(driftedChecker.check(exchange(recv, refused))).toEqual([
      'the document describes this request, yet waitSeconds was refused (invalid_argument)',
    ]);
  });
});
