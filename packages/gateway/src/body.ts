// Reading request bodies as raw bytes with a bound. Under @hono/node-server the body is read
// straight from Node's IncomingMessage (no web-stream layers on the send path); elsewhere
// (app.request in tests) from the Request's stream. Memory follows the bytes that arrived, never
// the declared Content-Length, and every byte held counts against the BodyBudget while the body
// is being received; a body slower than BODY_BYTES_PER_SECOND_MIN (after a grace) is cut.

import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { MqError, invalidArgument } from '@spoolmq/engine';
import type { Clock, TimerHandle } from '@spoolmq/protocol';
import type { BodyBudget } from './body-budget.js';

export interface BodyLimits {
  /** Bytes the body must have exactly (the Content-Length), when declared. */
  readonly exactBytes: number | undefined;
  /** Bytes beyond which reading stops with 413 message_too_large. */
  readonly maxBytes: number;
  /** How long the whole body may take; default bodyDeadlineMs of its size. */
  readonly deadlineMs?: number;
  /** Where the bytes held are counted, and for which account. */
  readonly budget?: { readonly budget: BodyBudget; readonly account: string | undefined };
}

/** A body has this long before its transfer rate is judged at all. */
export const BODY_GRACE_MS = 10_000;
/** The slowest body transfer kept after the grace: a 1 MiB body has 10 s + 64 s. */
export const BODY_BYTES_PER_SECOND_MIN = 16_384;

function tooSlow(): MqError {
  return invalidArgument(
    'Content-Length',
    `the body arrived slower than ${BODY_BYTES_PER_SECOND_MIN} bytes per second`,
  );
}

function tooLarge(maxBytes: number): MqError {
  const message = `the body exceeds ${maxBytes} bytes`;
  return new MqError('message_too_large', message, { limitBytes: maxBytes });
}

function lengthMismatch(): MqError {
  return invalidArgument('Content-Length', 'the body does not match its Content-Length');
}

/**
 * Collects chunks as they arrive (a declared length allocates nothing up front), counting them
 * against the budget; `release` gives the count back once, when reading ended either way.
 */
class Collector {
  private readonly chunks: Uint8Array[] = [];
  received = 0;
  private held = 0;

  constructor(private readonly limits: BodyLimits) {
    const exactBytes = limits.exactBytes;
    assert(exactBytes === undefined || exactBytes <= limits.maxBytes, 'exact within max');
  }

  /** Adds a chunk; throws invalid_argument beyond exactBytes, 413 beyond maxBytes, 429/503. */
  add(chunk: Uint8Array): void {
    const total = this.received + chunk.length;
    if (this.limits.exactBytes !== undefined) {
      if (total > this.limits.exactBytes) throw lengthMismatch();
    } else if (total > this.limits.maxBytes) {
      throw tooLarge(this.limits.maxBytes);
    }
    const budget = this.limits.budget;
    if (budget !== undefined) {
      budget.budget.take(budget.account, chunk.length);
      this.held += chunk.length;
    }
    this.chunks.push(chunk);
    this.received = total;
  }

  /** The whole body; throws invalid_argument when fewer than exactBytes arrived. */
  finish(): Uint8Array {
    if (this.limits.exactBytes !== undefined && this.received !== this.limits.exactBytes) {
      throw lengthMismatch();
    }
    return this.chunks.length === 1 ? (this.chunks[0] as Uint8Array) : Buffer.concat(this.chunks);
  }

  release(): void {
    this.limits.budget?.budget.give(this.limits.budget.account, this.held);
    this.held = 0;
  }
}

/** How long a body of `bytes` may take to arrive: the grace plus the slowest rate kept. */
export function bodyDeadlineMs(bytes: number): number {
  return BODY_GRACE_MS + Math.ceil((bytes * 1_000) / BODY_BYTES_PER_SECOND_MIN);
}

function readIncoming(
  incoming: IncomingMessage,
  limits: BodyLimits,
  clock: Clock,
): Promise<Uint8Array> {
  const collector = new Collector(limits);
  if (incoming.readableEnded) return Promise.resolve(collector.finish());
  return new Promise<Uint8Array>((resolve, reject) => {
    // A body trickling in holds its connection and its bytes: past its deadline it is cut. The
    // timer is armed only when a body does not arrive whole in its first chunk, so the common
    // small send costs none; one that sends nothing after its headers holds no bytes, and
    // Node's request timeout ends it.
    let slow: TimerHandle | undefined;
    const deadlineMs = limits.deadlineMs ?? bodyDeadlineMs(limits.exactBytes ?? limits.maxBytes);
    const armDeadline = (): void => {
      slow = clock.setTimer(() => {
        fail(tooSlow());
        incoming.socket.destroy();
      }, deadlineMs);
    };
    const cleanup = (): void => {
      if (slow !== undefined) clock.clearTimer(slow);
      collector.release();
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onFail);
      incoming.off('close', onClose);
    };
    const fail = (error: unknown): void => {
      cleanup();
      incoming.pause();
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      try {
        collector.add(chunk);
      } catch (error) {
        fail(error);
        return;
      }
      if (slow === undefined && collector.received !== limits.exactBytes) armDeadline();
    };
    const onEnd = (): void => {
      cleanup();
      try {
        resolve(collector.finish());
      } catch (error) {
        reject(error);
      }
    };
    const onFail = (): void => fail(lengthMismatch());
    const onClose = (): void => {
      if (!incoming.readableEnded) fail(lengthMismatch());
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onFail);
    incoming.on('close', onClose);
  });
}

async function readStream(
  stream: ReadableStream<Uint8Array> | null,
  limits: BodyLimits,
): Promise<Uint8Array> {
  const collector = new Collector(limits);
  if (stream === null) return collector.finish();
  const reader = stream.getReader();
  const release = collector.release.bind(collector);
  try {
    // Each read either ends the stream or delivers bytes counted against maxBytes, which ends
    // the loop by an exception; empty chunks are bounded separately.
    for (let emptyReads = 0; emptyReads <= limits.maxBytes + 1024; ) {
      const { done, value } = await reader.read();
      if (done) return collector.finish();
      if (value.length === 0) emptyReads += 1;
      else collector.add(value);
    }
    throw lengthMismatch();
  } finally {
    release();
    reader.releaseLock();
  }
}

/**
 * Reads a request body as bytes: all 256 byte values survive. With `incoming` (Node) the bytes
 * come from it, else from the stream `stream()` returns (only asked for then: under
 * @hono/node-server, touching `Request.body` builds a whole web Request). Rejects with 413
 * message_too_large (details.limitBytes) past `maxBytes` when no exact length is declared, and
 * invalid_argument (field Content-Length) when the body is shorter or longer than `exactBytes`
 * or the connection ends early, or (from `incoming`) arrives slower than its deadline on `clock`.
 */
export function readBody(
  incoming: unknown,
  stream: () => ReadableStream<Uint8Array> | null,
  limits: BodyLimits,
  clock: Clock,
): Promise<Uint8Array> {
  if (incoming instanceof IncomingMessage) return readIncoming(incoming, limits, clock);
  return readStream(stream(), limits);
}

const CONTENT_LENGTH_PATTERN = /^[0-9]{1,16}$/;

/**
 * The payload length a send or ack-and-send declares, judged from headers alone before any body
 * byte is read: 411 length_required without Content-Length or with a chunked body, 400
 * invalid_argument for a Content-Length that is not plain digits, 413 message_too_large
 * (details.limitBytes) above `maxBytes`.
 */
export function declaredPayloadBytes(
  contentLength: string | undefined,
  transferEncoding: string | undefined,
  maxBytes: number,
): number {
  if (transferEncoding !== undefined || contentLength === undefined) {
    throw new MqError('length_required', 'Content-Length is required (chunked bodies are refused)');
  }
  if (!CONTENT_LENGTH_PATTERN.test(contentLength)) {
    throw invalidArgument('Content-Length', 'Content-Length must be plain digits');
  }
  const bytes = Number(contentLength);
  if (bytes > maxBytes) throw tooLarge(maxBytes);
  return bytes;
}

/**
 * Whether a JSON operation's request carries a body, and its declared length: absent or 0
 * Content-Length without Transfer-Encoding means no body. Throws 400 for a malformed
 * Content-Length and 413 above `maxBytes`.
 */
export function declaredJsonBytes(
  contentLength: string | undefined,
  transferEncoding: string | undefined,
  maxBytes: number,
): { readonly present: boolean; readonly exactBytes: number | undefined } {
  if (contentLength === undefined) {
    return { present: transferEncoding !== undefined, exactBytes: undefined };
  }
  if (!CONTENT_LENGTH_PATTERN.test(contentLength)) {
    throw invalidArgument('Content-Length', 'Content-Length must be plain digits');
  }
  const bytes = Number(contentLength);
  if (bytes > maxBytes) throw tooLarge(maxBytes);
  return { present: bytes > 0 || transferEncoding !== undefined, exactBytes: bytes };
}
