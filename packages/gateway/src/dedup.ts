// Dedup keys of send and ack-and-send. Both header forms become the same 16-byte fingerprint:
// `Svc-Dedup-String` is hashed (sha256, first 16 bytes), `Svc-Dedup-Hash` is that fingerprint
// in hex, so senders of either form deduplicate against each other.

import { createHash } from 'node:crypto';
import { invalidArgument } from '@spoolmq/engine';

export const DEDUP_KEY_BYTES = 16;
const DEDUP_STRING_PATTERN = /^[\x21-\x7E]{1,128}$/;
const DEDUP_HASH_PATTERN = /^[0-9a-fA-F]{32}$/;

/** sha256(`key` as UTF-8 — it is ASCII here) truncated to 16 bytes. */
export function fingerprintOf(key: string): Uint8Array {
  const digest = createHash('sha256').update(key, 'latin1').digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, DEDUP_KEY_BYTES).slice();
}

/**
 * The dedup fingerprint from the two optional header values, or undefined when neither is
 * present. Throws invalid_argument when both are given, when the string is not 1-128 printable
 * ASCII characters (0x21-0x7E), or when the hash is not 32 hex digits (either case).
 */
export function dedupKeyFrom(
  dedupString: string | undefined,
  dedupHash: string | undefined,
): Uint8Array | undefined {
  if (dedupString !== undefined && dedupHash !== undefined) {
    throw invalidArgument('Svc-Dedup-String', 'give Svc-Dedup-String or Svc-Dedup-Hash, not both');
  }
  if (dedupString !== undefined) {
    if (!DEDUP_STRING_PATTERN.test(dedupString)) {
      const message = 'Svc-Dedup-String must be 1-128 printable ASCII characters';
      throw invalidArgument('Svc-Dedup-String', message);
    }
    return fingerprintOf(dedupString);
  }
  if (dedupHash !== undefined) {
    if (!DEDUP_HASH_PATTERN.test(dedupHash)) {
      throw invalidArgument('Svc-Dedup-Hash', 'Svc-Dedup-Hash must be 32 hexadecimal digits');
    }
    return new Uint8Array(Buffer.from(dedupHash, 'hex'));
  }
  return undefined;
}
