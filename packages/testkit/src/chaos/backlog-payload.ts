// Backlog payloads and how the history names payloads (see backlog.ts): message n of a seed is
// `mq-backlog:<n>:` then a keystream of AES-256-CTR under a key derived from the seed, so its
// bytes follow from (seed, n, size); a payload is described by its number, size and digest. Pure
// (deterministic functions of their arguments).

import { createCipheriv, createHash } from 'node:crypto';
import type { Operation } from './history.js';

/** What every backlog payload starts with, before its number and a colon. */
export const BACKLOG_MAGIC = 'mq-backlog:';
/** Payloads not of the backlog up to this size are described by their text. */
const TEXT_BYTES_MAX = 1024;
/** Hex digits of the SHA-256 kept in a description (128 bits). */
const DIGEST_HEX_CHARS = 32;
/** Backlog payload size bounds, bytes (the default plan's message size limit is 1 MiB). */
export const BACKLOG_PAYLOAD_BYTES_MIN = 1024;
export const BACKLOG_PAYLOAD_BYTES_MAX = 1024 * 1024;

/**
 * The bytes of backlog message `n` (>= 0) of `seed`: `mq-backlog:<n>:` then a keystream, `bytes`
 * long in all (BACKLOG_PAYLOAD_BYTES_MIN..MAX). Deterministic and incompressible.
 */
export function backlogPayload(seed: number, n: number, bytes: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`backlog: bad message number ${n}`);
  if (!(bytes >= BACKLOG_PAYLOAD_BYTES_MIN && bytes <= BACKLOG_PAYLOAD_BYTES_MAX)) {
    throw new RangeError(`backlog: payload of ${bytes} bytes out of range`);
  }
  const key = createHash('sha256').update(`mq chaos backlog ${seed | 0}`).digest();
  // The counter block starts at n << 64: messages never share keystream.
  const iv = Buffer.alloc(16);
  iv.writeBigUInt64BE(BigInt(n), 0);
  const out = Buffer.alloc(bytes);
  const header = out.write(`${BACKLOG_MAGIC}${n}:`, 'latin1');
  const cipher = createCipheriv('aes-256-ctr', key, iv);
  const stream = cipher.update(out.subarray(header));
  stream.copy(out, header);
  return out;
}

/**
 * How the history names a payload. A backlog payload: `b:<n>:<bytes>:<sha-256 prefix>`; another
 * payload up to TEXT_BYTES_MAX: its text (the workload's `p:<client>:<n>`); anything else:
 * `?:<bytes>:<sha-256 prefix>`. Pure; two payloads share a description only if they are equal
 * (up to a 128-bit digest collision).
 */
export function describePayload(body: Uint8Array): string {
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 32));
  const match = /^mq-backlog:(\d+):/.exec(head.toString('latin1'));
  if (match !== null) return `b:${match[1]}:${body.byteLength}:${digestHex(body)}`;
  if (body.byteLength <= TEXT_BYTES_MAX) return new TextDecoder().decode(body);
  return `?:${body.byteLength}:${digestHex(body)}`;
}

/**
 * Distinct backlog messages (by message id) that `operations` received intact: a receive
 * answered ok whose payload is the description its message's send carried. Pure.
 */
export function backlogReadBack(operations: readonly Operation[]): number {
  const sent = new Map<string, string>();
  for (const op of operations) {
    const payload = op.invoke.payload;
    const id = op.completion?.messageId;
    if (op.invoke.kind !== 'send' || op.completion?.type !== 'ok') continue;
    if (payload?.startsWith('b:') === true && id !== undefined) sent.set(id, payload);
  }
  const intact = new Set<string>();
  for (const op of operations) {
    const id = op.completion?.messageId;
    if (op.invoke.kind !== 'recv' || op.completion?.type !== 'ok' || id === undefined) continue;
    if (sent.has(id) && sent.get(id) === op.completion.payload) intact.add(id);
  }
  return intact.size;
}

function digestHex(body: Uint8Array): string {
  return createHash('sha256').update(body).digest('hex').slice(0, DIGEST_HEX_CHARS);
}

