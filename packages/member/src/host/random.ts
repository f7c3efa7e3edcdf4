// The system's random source, injected into the cluster layer (MemberOptions.randomBytes) like the
// clock, so a simulation can replace it and the cluster code never reaches for node:crypto itself.

import { randomBytes } from 'node:crypto';

/** `bytes` cryptographically strong random bytes (node:crypto). */
export function systemRandomBytes(bytes: number): Uint8Array {
  return randomBytes(bytes);
}
