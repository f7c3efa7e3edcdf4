import { describe, expect, it } from 'vitest';
import { systemRandomBytes } from '../../src/host/random.js';

describe('systemRandomBytes', () => {
  it('gives the bytes asked for, different each call', () => {
    const a = systemRandomBytes(32);
    const b = systemRandomBytes(32);
    expect(a.byteLength).toBe(32);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(false);
  });
});
