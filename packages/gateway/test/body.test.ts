import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { declaredJsonBytes, declaredPayloadBytes, readBody } from '../src/body.js';

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function failureOf(promise: Promise<unknown>): Promise<MqError> {
  try {
    await promise;
  } catch (error) {
    return error as MqError;
  }
  throw new Error('expected a failure');
}

describe('declaredPayloadBytes', () => {
  it('takes the size from Content-Length alone', () => {
    expect(declaredPayloadBytes('0', undefined, 10)).toBe(0);
    expect(declaredPayloadBytes('10', undefined, 10)).toBe(10);
  });

  it('answers 411 without Content-Length or with a chunked body', () => {
    for (const [length, encoding] of [[undefined, undefined], [undefined, 'chunked'], ['5', 'chunked']] as const) {
      let error: unknown;
      try {
        declaredPayloadBytes(length, encoding, 10);
      } catch (caught) {
        error = caught;
      }
      expect((error as MqError).kind).toBe('length_required');
      expect((error as MqError).status).toBe(411);
    }
  });

  it('answers 413 with limitBytes above the limit, 400 for a malformed length', () => {
    expect(() => declaredPayloadBytes('11', undefined, 10)).toThrow(MqError);
    try {
      declaredPayloadBytes('11', undefined, 10);
    } catch (error) {
      expect((error as MqError).kind).toBe('message_too_large');
      expect((error as MqError).details).toEqual({ limitBytes: 10 });
    }
    try {
      declaredPayloadBytes('1e3', undefined, 10);
    } catch (error) {
      expect((error as MqError).kind).toBe('invalid_argument');
    }
  });

  it('tells whether a JSON request carries a body', () => {
    expect(declaredJsonBytes(undefined, undefined, 10)).toEqual({ present: false, exactBytes: undefined });
    expect(declaredJsonBytes('0', undefined, 10)).toEqual({ present: false, exactBytes: 0 });
    expect(declaredJsonBytes('4', undefined, 10)).toEqual({ present: true, exactBytes: 4 });
    expect(declaredJsonBytes(undefined, 'chunked', 10)).toEqual({ present: true, exactBytes: undefined });
    expect(() => declaredJsonBytes('11', undefined, 10)).toThrow(MqError);
  });
});

describe('readBody from a stream', () => {
  it('keeps every byte value across chunks', async () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const bytes = await readBody(undefined, () => streamOf([all.subarray(0, 100), all.subarray(100)]), { exactBytes: 256, maxBytes: 256 });
    expect(Buffer.from(bytes)).toEqual(Buffer.from(all));
  });

  it('refuses a body longer or shorter than declared', async () => {
    const three = new Uint8Array([1, 2, 3]);
    expect((await failureOf(readBody(undefined, () => streamOf([three]), { exactBytes: 2, maxBytes: 2 }))).kind).toBe('invalid_argument');
    expect((await failureOf(readBody(undefined, () => streamOf([three]), { exactBytes: 4, maxBytes: 4 }))).kind).toBe('invalid_argument');
  });

  it('stops at maxBytes with 413 when the length is not declared', async () => {
    const error = await failureOf(readBody(undefined, () => streamOf([new Uint8Array(6), new Uint8Array(6)]), { exactBytes: undefined, maxBytes: 10 }));
    expect(error.kind).toBe('message_too_large');
  });

  it('reads an absent body as empty', async () => {
    expect(await readBody(undefined, () => null, { exactBytes: 0, maxBytes: 0 })).toHaveLength(0);
    expect((await failureOf(readBody(undefined, () => null, { exactBytes: 1, maxBytes: 1 }))).kind).toBe('invalid_argument');
  });

  it('ignores an object that is not a Node IncomingMessage', async () => {
    const fake = Object.assign(new EventEmitter(), { rawHeaders: [] });
    const bytes = await readBody(fake, () => streamOf([new Uint8Array([7])]), { exactBytes: 1, maxBytes: 1 });
    expect([...bytes]).toEqual([7]);
  });
});
