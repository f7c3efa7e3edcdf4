// Lease, failure-lease and handle tokens: base64url of a compact binary payload plus a truncated
// HMAC-SHA256. The MAC key is derived per spool (secret + instance salt + spool name), so a token
// cannot be forged, altered, or moved to another spool; the payload names the queue generation,
// so it cannot be moved to another queue or to a queue recreated under the same name either.
//
// Payload (26 bytes, big-endian): u8 version<<4|kind | u32 term | u32 queueGen | u32 seqHigh |
// u32 seqLow | u32 gen | u32 delivery | u8 flags. Then 16 bytes of MAC: 42 bytes, 56 chars.

import { createHmac, hash, timingSafeEqual } from 'node:crypto';

export const TokenKind = {
  /** A delivery lease from receive. */
  Lease: 1,
  /** A failure lease from the failure-queue head: accepted by recover and discard only. */
  FailureLease: 2,
  /** A handle: a reference to one delivery generation of a message. */
  Handle: 3,
} as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

export interface TokenClaims {
  readonly kind: TokenKind;
  /** Term of the primary that minted it. */
  readonly term: number;
  readonly queueGen: number;
  readonly seq: number;
  /** Replicated message generation when minted. */
  readonly gen: number;
  /** Lease: its delivery number. Handle: the message's delivery count when minted. */
  readonly delivery: number;
  /** Handle: minted while the message was pending. */
  readonly leased: boolean;
}

const VERSION = 1;
const PAYLOAD_BYTES = 26;
const MAC_BYTES = 16;
const TOKEN_BYTES = PAYLOAD_BYTES + MAC_BYTES;
/** base64url length of a token: 42 bytes -> 56 chars, no padding. */
export const TOKEN_LENGTH = 56;
const U32 = 0x1_0000_0000;
/** Spools whose derived keys are cached. */
const KEY_CACHE_MAX = 4096;

/** HMAC-SHA256 block size: keys are padded to it. */
const BLOCK_BYTES = 64;
const DIGEST_BYTES = 32;

/**
 * HMAC-SHA256 under one key, computed as two one-shot hashes over preallocated buffers (the
 * definition of HMAC with the key pads precomputed): the same bytes as `createHmac`, without
 * creating hash objects per call, which dominate the cost at this message size.
 */
class Hmac {
  private readonly inner: Buffer;
  private readonly outer: Buffer;

  constructor(key: Uint8Array, private readonly dataBytes: number) {
    if (key.byteLength > BLOCK_BYTES) throw new Error('hmac: key longer than a block');
    this.inner = Buffer.alloc(BLOCK_BYTES + dataBytes, 0x36);
    this.outer = Buffer.alloc(BLOCK_BYTES + DIGEST_BYTES, 0x5c);
    for (let i = 0; i < key.byteLength; i++) {
      this.inner[i]! ^= key[i]!;
      this.outer[i]! ^= key[i]!;
    }
  }

  /** HMAC of exactly `dataBytes` bytes. Not re-entrant (shared buffers; JS is single-threaded). */
  digest(data: Uint8Array): Buffer {
    if (data.byteLength !== this.dataBytes) throw new Error('hmac: unexpected data length');
    this.inner.set(data, BLOCK_BYTES);
    this.outer.set(hash('sha256', this.inner, 'buffer'), BLOCK_BYTES);
    return hash('sha256', this.outer, 'buffer');
  }
}

/** Derives per-spool MAC keys for one domain (tokens, cursors) from the secret and salt. */
export class KeyRing {
  private readonly keys = new Map<string, Buffer>();
  private readonly fixed = new Map<string, Hmac>();

  /** `secret`: at least 16 bytes. `salt`: distinguishes service instances (any bytes). */
  constructor(
    private readonly secret: Uint8Array,
    private readonly salt: Uint8Array,
    private readonly domain: string,
    /** Length of the data `mac` is called with most (tokens): that length takes a fast path. */
    private readonly fixedBytes = -1,
  ) {
    if (secret.byteLength < 16) throw new Error('token secret must be at least 16 bytes');
  }

  keyFor(spool: string): Buffer {
    let key = this.keys.get(spool);
    if (key === undefined) {
      if (this.keys.size >= KEY_CACHE_MAX) {
        this.keys.clear();
        this.fixed.clear();
      }
      key = createHmac('sha256', this.secret)
        .update(this.domain)
        .update('\0')
        .update(this.salt)
        .update('\0')
        .update(spool)
        .digest();
      this.keys.set(spool, key);
    }
    return key;
  }

  /** First `bytes` bytes of HMAC-SHA256(key of spool, data). */
  mac(spool: string, data: Uint8Array, bytes: number): Buffer {
    if (data.byteLength === this.fixedBytes) {
      let hmac = this.fixed.get(spool);
      if (hmac === undefined) {
        hmac = new Hmac(this.keyFor(spool), this.fixedBytes);
        this.fixed.set(spool, hmac);
      }
      return hmac.digest(data).subarray(0, bytes);
    }
    return createHmac('sha256', this.keyFor(spool)).update(data).digest().subarray(0, bytes);
  }
}

export class TokenCodec {
  private readonly ring: KeyRing;

  constructor(secret: Uint8Array, salt: Uint8Array) {
    this.ring = new KeyRing(secret, salt, 'mq-token-v1', PAYLOAD_BYTES);
  }

  /** Mints a token for `spool`. Seq must be a safe integer; other numbers u32. */
  mint(spool: string, claims: TokenClaims): string {
    const out = Buffer.allocUnsafe(TOKEN_BYTES);
    out[0] = (VERSION << 4) | claims.kind;
    out.writeUInt32BE(claims.term, 1);
    out.writeUInt32BE(claims.queueGen, 5);
    out.writeUInt32BE(Math.floor(claims.seq / U32), 9);
    out.writeUInt32BE(claims.seq % U32, 13);
    out.writeUInt32BE(claims.gen, 17);
    out.writeUInt32BE(claims.delivery, 21);
    out[25] = claims.leased ? 1 : 0;
    this.ring.mac(spool, out.subarray(0, PAYLOAD_BYTES), MAC_BYTES).copy(out, PAYLOAD_BYTES);
    return out.toString('base64url');
  }

  /**
   * Verifies a token presented to `spool`: its claims, or null when it does not verify (forged,
   * tampered, truncated, minted for another spool or service instance).
   */
  open(spool: string, token: string): TokenClaims | null {
    if (token.length !== TOKEN_LENGTH) return null;
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length !== TOKEN_BYTES) return null;
    const expected = this.ring.mac(spool, bytes.subarray(0, PAYLOAD_BYTES), MAC_BYTES);
    if (!timingSafeEqual(expected, bytes.subarray(PAYLOAD_BYTES))) return null;
    const version = bytes[0]! >> 4;
    const kind = bytes[0]! & 0x0f;
    const known = kind >= TokenKind.Lease && kind <= TokenKind.Handle;
    if (version !== VERSION || !known || bytes[25]! > 1) {
      return null;
    }
    return {
      kind: kind as TokenKind,
      term: bytes.readUInt32BE(1),
      queueGen: bytes.readUInt32BE(5),
      seq: bytes.readUInt32BE(9) * U32 + bytes.readUInt32BE(13),
      gen: bytes.readUInt32BE(17),
      delivery: bytes.readUInt32BE(21),
      leased: bytes[25] === 1,
    };
  }
}
