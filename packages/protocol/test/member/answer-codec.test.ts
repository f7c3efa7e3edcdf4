import { MqError, STATUS_OF_KIND, type ErrorKind } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { decodeServerFrame, resultOf, writeAnswer, writeErrorAnswer } from '../../src/member/answer-codec.js';
import { ProtoWriter } from '../../src/member/proto-writer.js';
import { WireError } from '../../src/member/proto-reader.js';
import { NotPrimaryError, notPrimaryError } from '../../src/member/not-primary.js';
import { ServerFrameType, referenceDecode, referenceEncode } from './proto-wire.js';
import { ALL_BYTES, HANDLE, LEASE, T0_MS, sampleResults } from './samples.js';
import { plain } from '../plain.js';


function encodeResults(): Buffer {
  const w = new ProtoWriter(32);
  sampleResults().forEach(({ op, value }, index) => writeAnswer(w, index + 1, op, value as never));
  return w.take();
}

describe('answer codec', () => {
  it('round-trips the result of every operation', () => {
    const samples = sampleResults();
    expect(new Set(samples.map((s) => s.op)).size).toBe(21);
    const answers = decodeServerFrame(encodeResults());
    expect(answers).toHaveLength(samples.length);
    samples.forEach(({ op, value }, index) => {
      const answer = answers[index]!;
      expect(answer.id).toBe(index + 1);
      expect(answer.error).toBeUndefined();
      expect(plain(resultOf(op, answer)), op).toStrictEqual(plain(value));
    });
  });

  it('keeps all 256 byte values of delivered and peeked payloads', () => {
    const w = new ProtoWriter();
    writeAnswer(w, 1, 'receive', { payload: ALL_BYTES, lease: LEASE, messageId: 'm', retries: 0 });
    writeAnswer(w, 2, 'peek', { payload: ALL_BYTES, messageId: 'm', state: 'pending', retries: 1 });
    const [delivery, peek] = decodeServerFrame(w.take());
    expect([...resultOf('receive', delivery!)!.payload]).toEqual([...ALL_BYTES]);
    expect([...resultOf('peek', peek!).payload]).toEqual([...ALL_BYTES]);
  });

  it('carries errors with their kind, message and typed details', () => {
    const errors = [
      new MqError('gone', 'token no longer settles anything (settled)', { reason: 'settled' }),
      new MqError('dedup_claimed', 'claimed', { messageId: 'm-1' }),
      new MqError('message_too_large', 'too large', { limitBytes: 1_048_576 }),
      new MqError('unavailable', 'not primary', { notPrimary: true, leaderId: 'm2' }),
      new MqError('rate_limited', 'slow down', { retryAfterMs: 1500.5, negative: -3, off: false }),
      new MqError('operation_unconfirmed', ''),
      new MqError('invalid_argument', 'ünïcødé ✓', { field: 'Svc-Lease', 'key with spaces': 'v' }),
    ];
    const w = new ProtoWriter();
    errors.forEach((error, index) => writeErrorAnswer(w, index + 10, error));
    const answers = decodeServerFrame(w.take());
    answers.forEach((answer, index) => {
      const expected = errors[index]!;
      expect(answer.id).toBe(index + 10);
      expect(answer.result).toBeUndefined();
      expect(answer.error).toBeInstanceOf(MqError);
      expect(answer.error!.kind).toBe(expected.kind);
      expect(answer.error!.status).toBe(expected.status);
      expect(answer.error!.message).toBe(expected.message);
      expect(answer.error!.details).toStrictEqual(expected.details);
    });
  });

  it('carries a not-primary answer with its hint as fields', () => {
    const w = new ProtoWriter();
    writeErrorAnswer(w, 1, notPrimaryError('default', 'm2'));
    writeErrorAnswer(w, 2, notPrimaryError('default', null, ['m3', 'm4']));
    writeErrorAnswer(w, 3, new MqError('unavailable', 'busy'));
    const [named, replicas, plainError] = decodeServerFrame(w.take());
    expect(named!.error).toBeInstanceOf(NotPrimaryError);
    expect(named!.error).toMatchObject({ kind: 'unavailable', leaderId: 'm2', replicas: [] });
    expect(named!.error!.message).toBe('this member is not the primary of spool default (primary is m2)');
    expect(replicas!.error).toMatchObject({ leaderId: null, replicas: ['m3', 'm4'] });
    expect(plainError!.error).not.toBeInstanceOf(NotPrimaryError);
  });

  it('carries every error kind', () => {
    const kinds = Object.keys(STATUS_OF_KIND) as ErrorKind[];
    const w = new ProtoWriter();
    kinds.forEach((kind, index) => writeErrorAnswer(w, index + 1, new MqError(kind, kind)));
    expect(decodeServerFrame(w.take()).map((a) => a.error!.kind)).toEqual(kinds);
  });

  it('turns a kind this build does not know into 500 internal, keeping the kind', () => {
    const object = {
      answers: [{ id: 3, error: { kind: 'brand_new_kind', message: 'hm', details: { a: { text: 'b' } } } }],
    };
    const [answer] = decodeServerFrame(referenceEncode(ServerFrameType, object));
    expect(answer!.error!.kind).toBe('internal');
    expect(answer!.error!.details).toStrictEqual({ a: 'b', kind: 'brand_new_kind' });
  });

  it('refuses an answer of the wrong variant for the operation', () => {
    const w = new ProtoWriter();
    writeAnswer(w, 1, 'ack', undefined);
    const [answer] = decodeServerFrame(w.take());
    expect(() => resultOf('send', answer!)).toThrow(WireError);
    expect(resultOf('nack', answer!)).toBeUndefined();
  });

  it('agrees with protobufjs reading proto/member.proto, both ways', () => {
    const mine = encodeResults();
    const reference = referenceDecode(ServerFrameType, mine);
    const back = decodeServerFrame(referenceEncode(ServerFrameType, reference));
    const direct = decodeServerFrame(mine);
    expect(plain(back)).toStrictEqual(plain(direct));
  });

  it('uses the .proto field names for the results', () => {
    const w = new ProtoWriter();
    writeAnswer(w, 1, 'receive', { payload: new Uint8Array([0, 255]), lease: LEASE, messageId: 'm-1', retries: 2, leaseExpiresAtMs: T0_MS });
    writeAnswer(w, 2, 'receive', null);
    writeAnswer(w, 3, 'listMessages', { items: [{ id: 'm', state: 'pending', retries: 1, createdAtMs: T0_MS, handle: HANDLE }] });
    writeAnswer(w, 4, 'deleteQueue', 'accepted');
    writeErrorAnswer(w, 5, new MqError('unavailable', 'np', { notPrimary: true, leaderId: 'b' }));
    writeAnswer(w, 6, 'send', { messageId: 'm-2', duplicate: true });
    writeErrorAnswer(w, 7, notPrimaryError('s', 'n2', ['n2', 'n3']));
    const object = referenceDecode(ServerFrameType, w.take());
    expect(plain(object['answers'])).toEqual(
      plain([
        { id: 1, result: 'delivery', delivery: { payload: new Uint8Array([0, 255]), lease: LEASE, messageId: 'm-1', retries: 2, leaseExpiresAtMs: T0_MS, _leaseExpiresAtMs: 'leaseExpiresAtMs' } },
        { id: 2, result: 'noDelivery', noDelivery: {} },
        { id: 3, result: 'messagePage', messagePage: { items: [{ id: 'm', state: 'MESSAGE_STATE_PENDING', retries: 1, createdAtMs: T0_MS, handle: HANDLE, _handle: 'handle' }] } },
        { id: 4, result: 'deleted', deleted: { outcome: 'DELETE_OUTCOME_ACCEPTED' } },
        { id: 5, result: 'error', error: { kind: 'unavailable', message: 'np', details: { notPrimary: { flag: true, value: 'flag' }, leaderId: { text: 'b', value: 'text' } } } },
        { id: 6, result: 'sent', sent: { messageId: 'm-2', duplicate: true } },
        { id: 7, result: 'error', error: { kind: 'unavailable', message: 'this member is not the primary of spool s (primary is n2)', notPrimary: { leaderId: 'n2', _leaderId: 'leaderId', replicas: ['n2', 'n3'] } } },
      ]),
    );
  });
});
