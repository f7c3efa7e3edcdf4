import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { QUERY_PARAMS_MAX } from '../src/options.js';
import { parseQuery } from '../src/query.js';

function errorOf(run: () => unknown): MqError {
  try {
    run();
  } catch (error) {
    return error as MqError;
  }
  throw new Error('expected a failure');
}

describe('parseQuery', () => {
  it('reads single and repeated parameters', () => {
    const query = parseQuery('http://h/p?limit=5&queue=a&queue=b', { limit: 1, queue: 10 });
    expect(query.one('limit')).toBe('5');
    expect(query.many('queue')).toEqual(['a', 'b']);
    expect(query.one('after')).toBeUndefined();
    expect(query.many('missing')).toEqual([]);
  });

  it('is empty without a query string', () => {
    expect(parseQuery('http://h/p', {}).one('x')).toBeUndefined();
    expect(parseQuery('http://h/p?', {}).one('x')).toBeUndefined();
  });

  it('decodes percent-encoding', () => {
    expect(parseQuery('http://h/p?match=%5Ea%2B%24', { match: 1 }).one('match')).toBe('^a+$');
  });

  it('refuses unknown parameters, repeats of scalars and too many values', () => {
    expect(errorOf(() => parseQuery('http://h/p?limt=5', { limit: 1 })).details).toEqual({ field: 'limt' });
    expect(errorOf(() => parseQuery('http://h/p?limit=1&limit=2', { limit: 1 })).details).toEqual({ field: 'limit' });
    expect(errorOf(() => parseQuery('http://h/p?q=a&q=b&q=c', { q: 2 })).details).toEqual({ field: 'q' });
    expect(errorOf(() => parseQuery('http://h/p?constructor=1', {})).details).toEqual({ field: 'constructor' });
    const many = Array.from({ length: QUERY_PARAMS_MAX + 1 }, (_, i) => `q=${i}`).join('&');
    expect(errorOf(() => parseQuery(`http://h/p?${many}`, { q: QUERY_PARAMS_MAX + 5 })).details).toEqual({ field: 'query' });
  });
});
