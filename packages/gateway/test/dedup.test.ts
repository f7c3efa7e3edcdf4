import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { dedupKeyFrom, fingerprintOf } from '../src/dedup.js';

function kindOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as MqError).kind;
  }
  return 'none';
}

describe('dedup keys', () => {
  it('hashes Svc-Dedup-String with sha256 truncated to 16 bytes', () => {
    const expected = createHash('sha256').update('order-42').digest().subarray(0, 16);
    expect(Buffer.from(fingerprintOf('order-42'))).toEqual(expected);
    expect(Buffer.from(dedupKeyFrom('order-42', undefined)!)).toEqual(expected);
  });

  it('takes Svc-Dedup-Hash verbatim, hex in either case, so both forms agree', () => {
    const hex = Buffer.from(fingerprintOf('order-42')).toString('hex');
    expect(dedupKeyFrom(undefined, hex)).toEqual(fingerprintOf('order-42'));
    expect(dedupKeyFrom(undefined, hex.toUpperCase())).toEqual(fingerprintOf('order-42'));
  });

  it('is absent without either header', () => {
    expect(dedupKeyFrom(undefined, undefined)).toBeUndefined();
  });

  it('refuses both headers together, bad strings and bad hashes', () => {
    expect(kindOf(() => dedupKeyFrom('a', '0'.repeat(32)))).toBe('invalid_argument');
    for (const bad of ['', 'a b', 'x'.repeat(129), 'é', 'tab\t']) {
      expect(kindOf(() => dedupKeyFrom(bad, undefined)), bad).toBe('invalid_argument');
    }
    expect(kindOf(() => dedupKeyFrom('~'.repeat(128), undefined))).toBe('none');
    for (const bad of ['0'.repeat(31), '0'.repeat(33), 'g'.repeat(32), '']) {
      expect(kindOf(() => dedupKeyFrom(undefined, bad)), bad).toBe('invalid_argument');
    }
  });
});
