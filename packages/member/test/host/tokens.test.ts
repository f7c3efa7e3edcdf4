import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOKEN_LENGTH, type TokenClaims, TokenCodec, TokenKind } from '../../src/host/tokens.js';

const secret = new Uint8Array(32).fill(3);
const salt = new Uint8Array(16).fill(9);
const claims: TokenClaims = { kind: TokenKind.Lease, term: 7, queueGen: 3, seq: 2 ** 40 + 5, gen: 11, delivery: 4, leased: true };

describe('tokens', () => {
  it('round-trip their claims, within the token charset and length', () => {
    const codec = new TokenCodec(secret, salt);
    fc.assert(
      fc.property(
        fc.record({
          kind: fc.constantFrom(TokenKind.Lease, TokenKind.FailureLease, TokenKind.Handle),
          term: fc.nat({ max: 0xffff_ffff }),
          queueGen: fc.nat({ max: 0xffff_ffff }),
          seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
          gen: fc.nat({ max: 0xffff_ffff }),
          delivery: fc.nat({ max: 0xffff_ffff }),
          leased: fc.boolean(),
        }),
        (c) => {
          const token = codec.mint('default', c);
          expect(token).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
          expect(token.length).toBe(TOKEN_LENGTH);
          expect(codec.open('default', token)).toEqual(c);
        },
      ),
    );
  });

  it('any single-character change makes it fail verification', () => {
    const codec = new TokenCodec(secret, salt);
    const token = codec.mint('default', claims);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      const replacement = alphabet[(alphabet.indexOf(token[i]!) + 1) % alphabet.length]!;
      const tampered = token.slice(0, i) + replacement + token.slice(i + 1);
      // The last char carries 2 padding bits: some edits decode to the same bytes.
      if (Buffer.from(tampered, 'base64url').equals(Buffer.from(token, 'base64url'))) continue;
      expect(codec.open('default', tampered)).toBeNull();
    }
  });

  it('does not verify for another spool, another salt or another secret', () => {
    const token = new TokenCodec(secret, salt).mint('default', claims);
    expect(new TokenCodec(secret, salt).open('other', token)).toBeNull();
    expect(new TokenCodec(secret, new Uint8Array(16)).open('default', token)).toBeNull();
    expect(new TokenCodec(new Uint8Array(32), salt).open('default', token)).toBeNull();
  });

  it('refuses wrong lengths and garbage', () => {
    const codec = new TokenCodec(secret, salt);
    const token = codec.mint('default', claims);
    for (const bad of ['', 'A'.repeat(16), token.slice(1), `${token}A`, 'A'.repeat(TOKEN_LENGTH)]) {
      expect(codec.open('default', bad)).toBeNull();
    }
  });

  it('refuses a short secret', () => {
    expect(() => new TokenCodec(new Uint8Array(8), salt)).toThrow(/at least 16 bytes/);
  });
});

describe('KeyRing', () => {
  it('the fast fixed-length MAC equals node HMAC-SHA256 under the derived key', async () => {
    const { createHmac } = await import('node:crypto');
    const { KeyRing } = await import('../../src/host/tokens.js');
    const fast = new KeyRing(secret, salt, 'domain', 26);
    const slow = new KeyRing(secret, salt, 'domain');
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 26, maxLength: 26 }), fc.constantFrom('a', 'b'), (data, spool) => {
        const expected = createHmac('sha256', slow.keyFor(spool)).update(data).digest();
        expect(fast.mac(spool, data, 32)).toEqual(expected);
        expect(slow.mac(spool, data, 16)).toEqual(expected.subarray(0, 16));
      }),
    );
  });
});
