import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { readFrame } from '../../src/transport/frame-reader.js';
import { RAFT_PROTO_PATH, encodeFrame } from '../../src/transport/message-codec.js';
import { MessageType } from '../../src/types.js';
import { plain, sampleMessages } from './sample-messages.js';

const root = protobuf.loadSync(RAFT_PROTO_PATH);
const Frame = root.lookupType('mq.raft.Frame');

/** A Frame holding one batch of group `g` with the given encoded Message bodies. */
function frameOf(...messages: Uint8Array[]): Uint8Array {
  const Batch = root.lookupType('mq.raft.Batch');
  const batch = Batch.encode({ group: 'g' }).finish();
  const parts: number[] = [...batch];
  for (const m of messages) parts.push(0x12, m.length, ...m);
  return Uint8Array.from([0x0a, parts.length, ...parts]);
}

describe('frame reader', () => {
  it('reads every variant exactly as protobufjs encodes it from the .proto', () => {
    const messages = sampleMessages('n3', 'n1');
    const [batch] = readFrame(encodeFrame([{ group: 'spool:x', messages }]));
    expect(batch!.group).toBe('spool:x');
    expect(batch!.messages.map(plain)).toEqual(messages.map(plain));
  });

  it('returns entry data as a view into the frame, not a copy', () => {
    const frame = encodeFrame([{ group: 'g', messages: sampleMessages().slice(0, 1) }]);
    const [batch] = readFrame(frame);
    const message = batch!.messages[0]!;
    if (message.type !== MessageType.AppendEntries) throw new Error('expected AppendEntries');
    expect(message.entries[0]!.data.buffer).toBe(frame.buffer);
  });

  it('skips unknown fields, as proto3 requires', () => {
    // Message { from "a", to "b", term 2, field 15 varint 300, field 14 bytes "zz", timeout_now {} }
    const message = Uint8Array.from([0x0a, 1, 0x61, 0x12, 1, 0x62, 0x18, 2, 0x78, 0xac, 0x02, 0x72, 2, 0x7a, 0x7a, 0x52, 0]);
    expect(readFrame(frameOf(message))[0]!.messages.map(plain)).toEqual([
      { type: MessageType.TimeoutNow, from: 'a', to: 'b', term: 2 },
    ]);
  });

  it('reads the body even when the envelope fields come after it', () => {
    // Message { request_vote_response { granted true }, term 4, to "b", from "a" }
    const message = Uint8Array.from([0x3a, 2, 0x10, 1, 0x18, 4, 0x12, 1, 0x62, 0x0a, 1, 0x61]);
    expect(readFrame(frameOf(message))[0]!.messages.map(plain)).toEqual([
      { type: MessageType.RequestVoteResponse, from: 'a', to: 'b', term: 4, preVote: false, granted: true },
    ]);
  });

  it('rejects truncated fields, numbers past 2^53 and known fields of the wrong wire type', () => {
    const good = encodeFrame([{ group: 'g', messages: sampleMessages().slice(0, 1) }]);
    expect(() => readFrame(good.subarray(0, good.length - 1))).toThrow(/truncated/);
    // term = 2^63 (a 10-byte varint)
    const huge = Uint8Array.from([0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x52, 0]);
    expect(() => readFrame(frameOf(huge))).toThrow(/out of range/);
    // append_entries (field 4) sent as a varint
    expect(() => readFrame(frameOf(Uint8Array.from([0x20, 1])))).toThrow(/wire type/);
    // Entry.index (field 1) sent as a length-delimited field inside append_entries
    const badEntry = Uint8Array.from([0x22, 5, 0x1a, 3, 0x0a, 1, 0x00]);
    expect(() => readFrame(frameOf(badEntry))).toThrow(/wire type/);
    expect(() => readFrame(Uint8Array.from([0x17]))).toThrow(/unknown wire type/);
  });

  it('agrees with protobufjs decoding on what it encodes', () => {
    const messages = sampleMessages();
    const bytes = encodeFrame([{ group: 'a', messages }]);
    const viaProto = Frame.toObject(Frame.decode(bytes), { longs: Number }) as {
      batches: Array<{ messages: Array<{ term: number }> }>;
    };
    expect(readFrame(bytes)[0]!.messages.map((m) => m.term)).toEqual(viaProto.batches[0]!.messages.map((m) => m.term));
  });
});
