import { describe, expect, it } from 'vitest';
import { decodeClientFrame, writeCall, writeCancel } from '../../src/member/call-codec.js';
import { ProtoWriter } from '../../src/member/proto-writer.js';
import { WireError } from '../../src/member/proto-reader.js';
import type { Call } from '../../src/member/calls.js';
import { ClientFrameType, referenceDecode, referenceEncode } from './proto-wire.js';
import { ALL_BYTES, DEDUP_KEY, LEASE, sampleCalls } from './samples.js';
import { plain } from '../plain.js';

function encode(entries: ReadonlyArray<readonly [number, Call]>, cancels: readonly number[] = []): Buffer {
  const w = new ProtoWriter(64);
  for (const [id, call] of entries) writeCall(w, id, call);
  for (const id of cancels) writeCancel(w, id);
  return w.take();
}


describe('call codec', () => {
  it('round-trips every operation, optional fields present and absent', () => {
    const calls = sampleCalls();
    expect(new Set(calls.map((c) => c.op)).size).toBe(21);
    calls.forEach((call, index) => {
      const frame = decodeClientFrame(encode([[index + 1, call]]));
      expect(frame.cancels).toEqual([]);
      expect(frame.calls).toHaveLength(1);
      expect(frame.calls[0]!.id).toBe(index + 1);
      expect(plain(frame.calls[0]!.call), call.op).toStrictEqual(plain(call));
    });
  });

  it('keeps every byte value of a payload and copies it out of the frame', () => {
    const call: Call = { op: 'send', spool: 'default', queue: 'jobs', request: { payload: ALL_BYTES, delayMs: 0, wantHandle: false } };
    const bytes = encode([[1, call]]);
    const decoded = decodeClientFrame(bytes).calls[0]!.call;
    if (decoded.op !== 'send') throw new Error('expected a send');
    expect([...decoded.request.payload]).toEqual([...ALL_BYTES]);
    bytes.fill(0); // the frame is reused or dropped; the stored payload must not change
    expect([...decoded.request.payload]).toEqual([...ALL_BYTES]);
  });

  it('decodes concatenated calls and cancels in order (frames concatenate)', () => {
    const calls = sampleCalls();
    const one = encode([[7, calls[0]!]], [3]);
    const two = encode([[8, calls[1]!], [9, calls[2]!]], [4, 5]);
    const frame = decodeClientFrame(Buffer.concat([one, two]));
    expect(frame.calls.map((c) => c.id)).toEqual([7, 8, 9]);
    expect(frame.cancels).toEqual([3, 4, 5]);
  });

  it('agrees with protobufjs reading proto/member.proto, both ways', () => {
    const calls = sampleCalls();
    const entries = calls.map((call, index) => [1000 + index, call] as const);
    const mine = encode(entries, [11, 12]);
    const reference = referenceDecode(ClientFrameType, mine);
    expect(reference['cancels']).toEqual([11, 12]);
    // Re-encoded by protobufjs (which packs the cancels) and read back by this codec.
    const back = decodeClientFrame(referenceEncode(ClientFrameType, reference));
    expect(back.cancels).toEqual([11, 12]);
    expect(plain(back.calls)).toStrictEqual(plain(entries.map(([id, call]) => ({ id, call }))));
  });

  it('uses the .proto field names for the operations', () => {
    const calls: Call[] = [
      { op: 'send', spool: 'default', queue: 'jobs', request: { payload: ALL_BYTES, delayMs: 5, dedupKey: DEDUP_KEY, wantHandle: true } },
      { op: 'listMessages', spool: 's', queue: 'jobs', query: { state: 'unavailable', limit: 1000, after: 'cur', withHandles: true } },
      { op: 'spoolStats', spool: 's', query: { limit: 3, after: 'a', match: 'm', queues: ['x', 'y'] } },
      { op: 'recover', spool: 's', token: { lease: LEASE }, delayMs: 9 },
      { op: 'deleteQueue', spool: 's', queue: 'q', mode: 'drain' },
      { op: 'updateQueue', spool: 's', queue: 'q', settings: { maxRetries: 0, recvRateLimit: null } },
      { op: 'receive', spool: 's', queue: 'q', waitMs: 20_000 },
      { op: 'ackAndSend', spool: 's', lease: LEASE, queue: 'next', request: { payload: new Uint8Array([1]), delayMs: 0, wantHandle: false } },
    ];
    const object = referenceDecode(ClientFrameType, encode(calls.map((c, i) => [i + 1, c] as const)));
    expect(plain(object['calls'])).toEqual(
      plain([
        { id: 1, spool: 'default', op: 'send', send: { queue: 'jobs', message: { payload: ALL_BYTES, delayMs: 5, dedupKey: DEDUP_KEY, wantHandle: true, _dedupKey: 'dedupKey' } } },
        { id: 2, spool: 's', op: 'listMessages', listMessages: { queue: 'jobs', state: 'MESSAGE_STATE_UNAVAILABLE', limit: 1000, after: 'cur', withHandles: true, _after: 'after' } },
        { id: 3, spool: 's', op: 'spoolStats', spoolStats: { list: { limit: 3, after: 'a', match: 'm', _after: 'after', _match: 'match' }, queues: ['x', 'y'], queuesGiven: true } },
        { id: 4, spool: 's', op: 'recover', recover: { token: { lease: LEASE, _lease: 'lease' }, delayMs: 9 } },
        { id: 5, spool: 's', op: 'deleteQueue', deleteQueue: { queue: 'q', mode: 'DELETE_MODE_DRAIN' } },
        { id: 6, spool: 's', op: 'updateQueue', updateQueue: { queue: 'q', patch: { maxRetries: 0, recvRateLimitNull: true, _maxRetries: 'maxRetries' } } },
        { id: 7, spool: 's', op: 'receive', receive: { queue: 'q', waitMs: 20_000 } },
        { id: 8, spool: 's', op: 'ackAndSend', ackAndSend: { lease: LEASE, queue: 'next', message: { payload: new Uint8Array([1]) } } },
      ]),
    );
  });

  it('refuses frames that do not decode', () => {
    const good = encode([[1, sampleCalls()[0]!]]);
    expect(() => decodeClientFrame(good.subarray(0, good.length - 1))).toThrow(WireError);
    // A call without an id, and one without an operation.
    const noId = encode([[1, sampleCalls()[0]!]]);
    const w = new ProtoWriter();
    const mark = w.begin(1);
    w.string(2, 'default');
    w.end(mark);
    expect(() => decodeClientFrame(w.take())).toThrow(/without an id/);
    const mark2 = w.begin(1);
    w.uint(1, 5);
    w.end(mark2);
    expect(() => decodeClientFrame(w.take())).toThrow(/without an operation/);
    expect(decodeClientFrame(noId).calls).toHaveLength(1);
  });

  it('refuses enum values it does not know', () => {
    const object = referenceDecode(ClientFrameType, encode([[1, { op: 'deleteQueue', spool: 's', queue: 'q', mode: 'force' }]]));
    const calls = object['calls'] as Array<Record<string, Record<string, unknown>>>;
    calls[0]!['deleteQueue']!['mode'] = 'DELETE_MODE_UNSPECIFIED';
    expect(() => decodeClientFrame(referenceEncode(ClientFrameType, object))).toThrow(/delete mode 0/);
  });
});
