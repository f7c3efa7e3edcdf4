// The recorder's classification of answers: ok, fail (certainly changed nothing), info (may
// have acted), and the completion fields it keeps from an error body.

import { MqClientError, MqTransportError } from '@spoolmq/client';
import { describe, expect, it } from 'vitest';
import { History } from '../../src/chaos/history.js';
import { Recorder, isDefiniteFailure } from '../../src/chaos/recorder.js';

function setup(): { history: History; recorder: Recorder } {
  const history = new History();
  return { history, recorder: new Recorder(history, 'c0', 1_000) };
}

describe('Recorder', () => {
  it('records an ok answer with the fields the caller derives', async () => {
    const { history, recorder } = setup();
    const done = (id: string): { status: number; messageId: string } => ({
      status: 201,
      messageId: id,
    });
    const fields = { queue: 'q', payload: 'p' };
    const result = await recorder.call('send', fields, async () => 'm1', done);
    expect(result).toEqual({ outcome: 'ok', value: 'm1' });
    const op = history.operations()[0]!;
    expect(op.invoke).toMatchObject({ client: 'c0', kind: 'send', queue: 'q', payload: 'p' });
    expect(op.completion).toMatchObject({ type: 'ok', status: 201, messageId: 'm1' });
  });

  it('records a 410 as fail with its reason, and dedup_claimed with the original id', async () => {
    const { history, recorder } = setup();
    const gone = new MqClientError(410, 'gone', 'settled', { reason: 'primary_changed' });
    await recorder.call('ack', { lease: 'L' }, () => Promise.reject(gone), () => ({}));
    const claimed = new MqClientError(409, 'dedup_claimed', 'hit', { messageId: 'm9' });
    await recorder.call('ackAndSend', { lease: 'L' }, () => Promise.reject(claimed), () => ({}));
    const [first, second] = history.operations();
    expect(first?.completion).toMatchObject({ type: 'fail', status: 410 });
    expect(first?.completion?.reason).toBe('primary_changed');
    expect(second?.completion).toMatchObject({ type: 'fail', status: 409, messageId: 'm9' });
    expect(second?.completion?.errorKind).toBe('dedup_claimed');
  });

  it('records 500 operation_unconfirmed, a transport error and a timeout as info', async () => {
    const { history, recorder } = setup();
    const unconfirmed = new MqClientError(500, 'operation_unconfirmed', 'unknown');
    await recorder.call('send', {}, () => Promise.reject(unconfirmed), () => ({}));
    const reset = new MqTransportError('reset');
    await recorder.call('send', {}, () => Promise.reject(reset), () => ({}));
    await recorder.call(
      'recv',
      {},
      (signal) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      () => ({}),
    );
    const completions = history.operations().map((o) => o.completion);
    expect(completions[0]).toMatchObject({ type: 'info', status: 500 });
    expect(completions[0]?.errorKind).toBe('operation_unconfirmed');
    expect(completions[1]).toMatchObject({ type: 'info', error: 'MqTransportError: reset' });
    expect(completions[2]?.type).toBe('info');
    expect(completions[2]?.error).toMatch(/TimeoutError/);
  });

  it('treats 503 as definite for a send only', () => {
    const unavailable = new MqClientError(503, 'unavailable', 'no primary');
    expect(isDefiniteFailure('send', unavailable)).toBe(true);
    expect(isDefiniteFailure('ack', unavailable)).toBe(false);
    expect(isDefiniteFailure('ack', new MqClientError(429, 'rate_limited', 'slow'))).toBe(true);
  });
});
