import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { checkCursor, checkName, checkToken, parseBoolean, parseEnum, parseInteger } from '../src/scalars.js';

function failure(run: () => unknown): MqError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(MqError);
    return error as MqError;
  }
  throw new Error('expected a failure');
}

describe('parseInteger', () => {
  it('accepts plain digits within range', () => {
    expect(parseInteger('n', '0', 0, 10)).toBe(0);
    expect(parseInteger('n', '10', 0, 10)).toBe(10);
    expect(parseInteger('n', '007', 0, 10)).toBe(7);
    expect(parseInteger('n', '604800', 0, 604_800)).toBe(604_800);
  });

  it('refuses signs, spaces, exponents, points, empty and out of range', () => {
    for (const text of ['', '+5', '-1', ' 5', '5 ', '1e3', '1.5', '0x10', '11', '5a', '１', '99999999999999999']) {
      const error = failure(() => parseInteger('limit', text, 0, 10));
      expect(error.kind, text).toBe('invalid_argument');
      expect(error.details).toEqual({ field: 'limit' });
    }
  });
});

describe('parseBoolean', () => {
  it('accepts exactly true and false', () => {
    expect(parseBoolean('handle', 'true')).toBe(true);
    expect(parseBoolean('handle', 'false')).toBe(false);
  });

  it('refuses anything else', () => {
    for (const text of ['True', 'FALSE', '1', '0', 'yes', '', ' true']) {
      expect(failure(() => parseBoolean('handle', text)).details).toEqual({ field: 'handle' });
    }
  });
});

describe('parseEnum', () => {
  it('accepts exact lower-case members only', () => {
    expect(parseEnum('mode', 'drain', ['force', 'drain'])).toBe('drain');
    for (const text of ['Drain', 'FORCE', 'drain ', '']) {
      expect(failure(() => parseEnum('mode', text, ['force', 'drain'])).kind).toBe('invalid_argument');
    }
  });
});

describe('names, tokens and cursors', () => {
  it('checks names: 1-63 of [A-Za-z0-9_:-]', () => {
    expect(checkName('queue', 'a')).toBe('a');
    expect(checkName('queue', 'Jobs_1:x-y')).toBe('Jobs_1:x-y');
    expect(checkName('queue', 'q'.repeat(63))).toBe('q'.repeat(63));
    for (const text of ['', 'q'.repeat(64), 'a b', 'a/b', 'a.b', 'é']) {
      expect(failure(() => checkName('queue', text)).details).toEqual({ field: 'queue' });
    }
  });

  it('checks tokens: 16-128 of [A-Za-z0-9_-]', () => {
    expect(checkToken('Svc-Lease', 'a'.repeat(16))).toBe('a'.repeat(16));
    expect(checkToken('Svc-Lease', 'A-_9'.repeat(32))).toBe('A-_9'.repeat(32));
    for (const text of ['a'.repeat(15), 'a'.repeat(129), `${'a'.repeat(16)}=`, `${'a'.repeat(16)}:`]) {
      expect(failure(() => checkToken('Svc-Lease', text)).details).toEqual({ field: 'Svc-Lease' });
    }
  });

  it('checks cursors: 1-256 characters', () => {
    expect(checkCursor('after', 'x'.repeat(256))).toHaveLength(256);
    expect(failure(() => checkCursor('after', '')).kind).toBe('invalid_argument');
    expect(failure(() => checkCursor('after', 'x'.repeat(257))).kind).toBe('invalid_argument');
  });
});
