import { EventEmitter } from 'node:events';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { ManualClock, settle } from '@spoolmq/protocol';
import { BodyBudget } from '../src/body-budget.js';
import { bodyDeadlineMs, declaredJsonBytes, declaredPayloadBytes, readBody } from '../src/body.js';

/** Reading from a stream arms no timer; the clock only stands in for the gateway's. */
const clock = new ManualClock();

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
    const bytes = await readBody(undefined, () => streamOf([all.subarray(0, 100), all.subarray(100)]), { exactBytes: 256, maxBytes: 256 }, clock);
    expect(Buffer.from(bytes)).toEqual(Buffer.from(all));
  });

  it('refuses a body longer or shorter than declared', async () => {
    const three = new Uint8Array([1, 2, 3]);
    expect((await failureOf(readBody(undefined, () => streamOf([three]), { exactBytes: 2, maxBytes: 2 }, clock))).kind).toBe('invalid_argument');
    expect((await failureOf(readBody(undefined, () => streamOf([three]), { exactBytes: 4, maxBytes: 4 }, clock))).kind).toBe('invalid_argument');
  });

  it('stops at maxBytes with 413 when the length is not declared', async () => {
    const error = await failureOf(readBody(undefined, () => streamOf([new Uint8Array(6), new Uint8Array(6)]), { exactBytes: undefined, maxBytes: 10 }, clock));
    expect(error.kind).toBe('message_too_large');
  });

  it('reads an absent body as empty', async () => {
    expect(await readBody(undefined, () => null, { exactBytes: 0, maxBytes: 0 }, clock)).toHaveLength(0);
    expect((await failureOf(readBody(undefined, () => null, { exactBytes: 1, maxBytes: 1 }, clock))).kind).toBe('invalid_argument');
  });

  it('ignores an object that is not a Node IncomingMessage', async () => {
    const fake = Object.assign(new EventEmitter(), { rawHeaders: [] });
    const bytes = await readBody(fake, () => streamOf([new Uint8Array([7])]), { exactBytes: 1, maxBytes: 1 }, clock);
    expect([...bytes]).toEqual([7]);
  });
});

/** A Node request on an unconnected socket: the test pushes its body bytes by hand. */
function nodeRequest(): IncomingMessage {
  return new IncomingMessage(new Socket());
}

/** The promise's outcome so far: 'pending', 'resolved' or the rejection's kind. */
function outcomeOf(promise: Promise<unknown>): () => string {
  let outcome = 'pending';
  promise.then(
    () => (outcome = 'resolved'),
    (error: unknown) => (outcome = (error as MqError).kind),
  );
  return () => outcome;
}

describe('readBody from a Node request, on a manual clock', () => {
  it('cuts a slow upload at its deadline, not before, and gives its bytes back', async () => {
    const clock = new ManualClock();
    const budget = new BodyBudget({ totalBytesMax: 1_000_000, accountBytesMax: 1_000_000 });
    const incoming = nodeRequest();
    const limits = { exactBytes: 10_000, maxBytes: 10_000, budget: { budget, account: 'acme' } };
    const outcome = outcomeOf(readBody(incoming, () => null, limits, clock));
    incoming.push(Buffer.alloc(100, 7));
    await settle();
    expect(budget.inFlightBytes).toBe(100);
    expect(clock.pendingTimers).toBe(1); // armed by the first chunk that left the body short
    await clock.advance(bodyDeadlineMs(10_000) - 1);
    expect(outcome()).toBe('pending');
    expect(incoming.socket.destroyed).toBe(false);
    await clock.advance(1);
    expect(outcome()).toBe('invalid_argument');
    expect(incoming.socket.destroyed).toBe(true);
    expect(budget.inFlightBytes).toBe(0);
  });

  it('takes its deadline from the limits when given', async () => {
    const clock = new ManualClock();
    const incoming = nodeRequest();
    const outcome = outcomeOf(
      readBody(incoming, () => null, { exactBytes: 2, maxBytes: 2, deadlineMs: 300 }, clock),
    );
    incoming.push(Buffer.from([1]));
    await settle();
    await clock.advance(299);
    expect(outcome()).toBe('pending');
    await clock.advance(1);
    expect(outcome()).toBe('invalid_argument');
  });

  it('arms no timer for a body whole in its first chunk; a slow one done in time clears it', async () => {
    const clock = new ManualClock();
    const whole = nodeRequest();
    const wholeOutcome = outcomeOf(readBody(whole, () => null, { exactBytes: 2, maxBytes: 2 }, clock));
    whole.push(Buffer.from([1, 2]));
    whole.push(null);
    await settle();
    expect(wholeOutcome()).toBe('resolved');
    expect(clock.pendingTimers).toBe(0);

    const slow = nodeRequest();
    const read = readBody(slow, () => null, { exactBytes: 2, maxBytes: 2, deadlineMs: 300 }, clock);
    slow.push(Buffer.from([1]));
    await settle();
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(299);
    slow.push(Buffer.from([2]));
    slow.push(null);
    expect([...(await read)]).toEqual([1, 2]);
    expect(clock.pendingTimers).toBe(0);
  });
});
