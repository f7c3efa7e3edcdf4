import { describe, expect, it } from 'vitest';
import { HttpTransport, normalizeBaseUrl, segment } from '../src/http.js';
import { MqClientError, MqTransportError } from '../src/index.js';
import { fakeFetch, noResponse, reply } from './fake-fetch.js';

describe('normalizeBaseUrl', () => {
  it('keeps a given path and adds /v1 to a bare origin', () => {
    expect(normalizeBaseUrl('http://127.0.0.1:8080/v1')).toBe('http://127.0.0.1:8080/v1');
    expect(normalizeBaseUrl('http://127.0.0.1:8080/v1/')).toBe('http://127.0.0.1:8080/v1');
    expect(normalizeBaseUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080/v1');
    expect(normalizeBaseUrl('http://h/prefix/v1')).toBe('http://h/prefix/v1');
  });
});

describe('segment', () => {
  it('keeps name characters and escapes the rest', () => {
    expect(segment('a-b_c:d')).toBe('a-b_c:d');
    expect(segment('a/b')).toBe('a%2Fb');
  });
});

describe('HttpTransport', () => {
  it('maps statuses and missing answers to typed errors', async () => {
    const fake = fakeFetch([reply(404, {}, '{"kind":"queue_not_found","message":"no"}'), noResponse()]);
    const http = new HttpTransport('http://h/v1', 'k', fake.fetch);
    await expect(http.request({ method: 'GET', path: '/x' })).rejects.toBeInstanceOf(MqClientError);
    await expect(http.request({ method: 'GET', path: '/x' })).rejects.toBeInstanceOf(MqTransportError);
  });

  it("rethrows the caller's abort reason rather than a transport error", async () => {
    const controller = new AbortController();
    const fake = fakeFetch([
      () => {
        controller.abort(new Error('caller stopped'));
        throw new DOMException('aborted', 'AbortError');
      },
    ]);
    const http = new HttpTransport('http://h/v1', 'k', fake.fetch);
    await expect(http.request({ method: 'POST', path: '/x', signal: controller.signal })).rejects.toThrow('caller stopped');
  });

  it('omits undefined query values', async () => {
    const fake = fakeFetch([reply(204)]);
    const http = new HttpTransport('http://h/v1', 'k', fake.fetch);
    const answer = await http.request({ method: 'GET', path: '/x', query: { a: undefined, b: 0, c: false } });
    expect(answer.status).toBe(204);
    expect(fake.requests[0]?.url).toBe('http://h/v1/x?b=0&c=false');
  });
});
