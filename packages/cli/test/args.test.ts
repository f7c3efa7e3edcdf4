import { describe, expect, it } from 'vitest';
import { parseIntegerIn } from '../src/args.js';
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

describe('parseIntegerIn', () => {
  it('accepts plain digits within the bounds, naming the source otherwise', () => {
    expect(parseIntegerIn('11', 'x', 11, 99)).toBe(11);
    expect(parseIntegerIn('0', 'x', 0, 5)).toBe(0);
    for (const bad of ['10', '100', '011', '-20', '1e2', '50.5', '', ' 50', 'fifty']) {
      expect(() => parseIntegerIn(bad, '--n', 11, 99)).toThrow(/--n must be an integer 11-99/);
    }
  });
});

describe('parseHost', () => {
  it('refuses empty and spaced hosts', () => {
    expect(parseHost('::1', 'x')).toBe('::1');
    expect(() => parseHost('', 'x')).toThrow(UsageError);
    expect(() => parseHost('a b', 'x')).toThrow(UsageError);
  });
});
