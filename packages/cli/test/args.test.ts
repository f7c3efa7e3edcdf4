import { describe, expect, it } from 'vitest';
import { UsageError, parseFlags, parseHost, parsePort } from '../src/index.js';

describe('parseFlags', () => {
  it('parses known flags and refuses unknown ones and positionals', () => {
    expect(parseFlags(['--port', '1'], { port: { type: 'string' } })).toMatchObject({ port: '1' });
    expect(() => parseFlags(['--nope'], { port: { type: 'string' } })).toThrow(UsageError);
    expect(() => parseFlags(['extra'], { port: { type: 'string' } })).toThrow(UsageError);
    expect(() => parseFlags(['--port'], { port: { type: 'string' } })).toThrow(UsageError);
  });
});

describe('parsePort', () => {
  it('accepts 0-65535 in plain digits only', () => {
    expect(parsePort('0', 'x')).toBe(0);
    expect(parsePort('65535', 'x')).toBe(65_535);
    for (const bad of ['65536', '-1', '8080a', '', '1e3', ' 80']) expect(() => parsePort(bad, 'x')).toThrow(UsageError);
  });
});

describe('parseHost', () => {
  it('refuses empty and spaced hosts', () => {
    expect(parseHost('::1', 'x')).toBe('::1');
    expect(() => parseHost('', 'x')).toThrow(UsageError);
    expect(() => parseHost('a b', 'x')).toThrow(UsageError);
  });
});
