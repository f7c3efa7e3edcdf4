import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { API_KEY_MAX_CHARS, authenticateRequest, bearerKey } from '../src/auth.js';

describe('bearerKey', () => {
  it('extracts the key of a Bearer header, scheme in any case', () => {
    expect(bearerKey('Bearer abc')).toBe('abc');
    expect(bearerKey('bearer   abc')).toBe('abc');
    expect(bearerKey('BEARER a.b-c_d~e+f/g=')).toBe('a.b-c_d~e+f/g=');
  });

  it('refuses missing, other schemes, empty, spaced or oversized keys with 401', () => {
    for (const header of [undefined, '', 'Basic abc', 'Bearer', 'Bearer ', 'Bearer a b', 'Bearerabc', `Bearer ${'k'.repeat(API_KEY_MAX_CHARS + 1)}`]) {
      let error: unknown;
      try {
        bearerKey(header);
      } catch (caught) {
        error = caught;
      }
      expect((error as MqError).kind, String(header)).toBe('unauthenticated');
    }
  });
});

describe('authenticateRequest', () => {
  it('accepts any well-formed key without an authenticator', async () => {
    await authenticateRequest('Bearer anything', undefined);
  });

  it('passes the key to the authenticator and propagates its verdict', async () => {
    const seen: string[] = [];
    await authenticateRequest('Bearer k1', async (key) => void seen.push(key));
    expect(seen).toEqual(['k1']);
    await expect(authenticateRequest('Bearer k2', () => Promise.reject(new MqError('account_suspended', 's')))).rejects.toMatchObject({ kind: 'account_suspended' });
  });
});
