import { describe, expect, it } from 'vitest';
import { crc32c, crc32cUpdate } from '../../src/storage/crc32c.js';

const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('crc32c', () => {
  it('matches the published check values (RFC 3720 B.4)', () => {
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('is the same computed in pieces, at any split, as in one go', () => {
    const bytes = Uint8Array.from({ length: 100 }, (_, i) => (i * 37 + 11) & 0xff);
    const whole = crc32c(bytes);
    for (let split = 0; split <= bytes.length; split += 7) {
      expect(crc32cUpdate(crc32c(bytes, 0, split), bytes, split)).toBe(whole);
    }
  });

  it('changes when any single bit changes', () => {
    const bytes = ascii('raft entry payload');
    const original = crc32c(bytes);
    for (let i = 0; i < bytes.length; i++) {
      const copy = bytes.slice();
      copy[i]! ^= 0x10;
      expect(crc32c(copy)).not.toBe(original);
    }
  });
});
