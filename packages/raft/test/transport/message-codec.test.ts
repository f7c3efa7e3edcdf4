import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { RAFT_PROTO_PATH, decodeFrame, encodeFrame } from '../../src/transport/message-codec.js';
import { EntryType, MessageType, RAFT_TERM_MAX, type Entry, type Message } from '../../src/types.js';
import { plain, sampleMessages } from './sample-messages.js';

describe('message codec', () => {
  it('round-trips every message variant', () => {
    const messages = sampleMessages();
    const types = new Set(messages.map((m) => m.type));
    expect(types.size).toBe(8);
    const [batch] = decodeFrame(encodeFrame([{ group: 'spool:a', messages }]));
    expect(batch!.group).toBe('spool:a');
    expect(batch!.messages.map(plain)).toEqual(messages.map(plain));
  });

  it('keeps batches of several groups apart and in order', () => {
    const a = sampleMessages('n1', 'n2').slice(0, 3);
    const b = sampleMessages('n3', 'n2').slice(3, 6);
    const decoded = decodeFrame(encodeFrame([{ group: 'a', messages: a }, { group: 'meta', messages: b }]));
    expect(decoded.map((x) => x.group)).toEqual(['a', 'meta']);
    expect(decoded[1]!.messages.map(plain)).toEqual(b.map(plain));
  });

  it('pins the wire format of proto/raft.proto (field numbers, oneof)', () => {
    const frame = encodeFrame([{ group: 'g', messages: [{ type: MessageType.TimeoutNow, from: 'a', to: 'b', term: 1 }] }]);
    // Frame.batches(1) { group(1) "g", messages(2) { from(1) "a", to(2) "b", term(3) 1, timeout_now(10) {} } }
    expect(Buffer.from(frame).toString('hex')).toBe('0a0f0a0167120a0a01611201621801' + '5200');
  });

  it('decodes what the .proto itself encodes, and the reverse', () => {
    const Frame = protobuf.loadSync(RAFT_PROTO_PATH).lookupType('mq.raft.Frame');
    const viaProto = Frame.encode(
      Frame.fromObject({
        batches: [
          {
            group: 'g',
            messages: [
              { from: 'x', to: 'y', term: 3, requestVote: { preVote: true, lastLogIndex: 9, lastLogTerm: 2, transfer: false } },
            ],
          },
        ],
      }),
    ).finish();
    expect(decodeFrame(viaProto)[0]!.messages.map(plain)).toEqual([
      { type: MessageType.RequestVote, from: 'x', to: 'y', term: 3, preVote: true, lastLogIndex: 9, lastLogTerm: 2, transfer: false },
    ]);
    const ours = encodeFrame([{ group: 'g', messages: sampleMessages().slice(0, 1) }]);
    const object = Frame.toObject(Frame.decode(ours), { longs: Number }) as {
      batches: Array<{ messages: Array<{ appendEntries: { entries: Array<{ index: number }> } }> }>;
    };
    expect(object.batches[0]!.messages[0]!.appendEntries.entries.map((e) => e.index)).toEqual([2 ** 52 + 5, 2 ** 52 + 6, 2 ** 52 + 7]);
  });

  it('concatenated frames decode as one frame with both batch lists', () => {
    const one = encodeFrame([{ group: 'a', messages: sampleMessages().slice(0, 1) }]);
    const two = encodeFrame([{ group: 'b', messages: sampleMessages().slice(1, 2) }]);
    const joined = new Uint8Array(one.length + two.length);
    joined.set(one, 0);
    joined.set(two, one.length);
    expect(decodeFrame(joined).map((batch) => batch.group)).toEqual(['a', 'b']);
  });

  it('rejects garbage and messages without a body', () => {
    expect(() => decodeFrame(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f]))).toThrow();
    // A Message with from/to/term but no body field.
    const noBody = Uint8Array.from([0x0a, 0x07, 0x12, 0x05, 0x0a, 0x01, 0x61, 0x18, 0x01]);
    expect(() => decodeFrame(noBody)).toThrow(/without a known body/);
  });

  it('round-trips arbitrary AppendEntries (property)', () => {
    const index = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    const term = fc.integer({ min: 0, max: RAFT_TERM_MAX });
    const entry: fc.Arbitrary<Entry> = fc.record({
      index,
      term,
      type: fc.constantFrom(EntryType.Normal, EntryType.Noop, EntryType.ConfChange),
      data: fc.uint8Array({ maxLength: 64 }),
    });
    const message: fc.Arbitrary<Message> = fc.record({
      type: fc.constant(MessageType.AppendEntries as const),
      from: fc.string({ minLength: 1, maxLength: 8 }),
      to: fc.string({ minLength: 1, maxLength: 8 }),
      term,
      prevLogIndex: index,
      prevLogTerm: term,
      leaderCommit: index,
      leaderTick: index,
      entries: fc.array(entry, { maxLength: 5 }),
    });
    fc.assert(
      fc.property(fc.array(message, { minLength: 1, maxLength: 4 }), (messages) => {
        const [batch] = decodeFrame(encodeFrame([{ group: 'g', messages }]));
        expect(batch!.messages.map(plain)).toEqual(messages.map(plain));
      }),
      { numRuns: 200 },
    );
  });
});

describe('terms from the wire', () => {
  const vote = (term: number, lastLogTerm: number): Message => ({
    type: MessageType.RequestVote,
    from: 'n1',
    to: 'n2',
    term,
    preVote: false,
    lastLogIndex: 1,
    lastLogTerm,
    transfer: false,
  });

  it('accepts RAFT_TERM_MAX and refuses a frame carrying any term past it', () => {
    expect(decodeFrame(encodeFrame([{ group: 'g', messages: [vote(RAFT_TERM_MAX, 1)] }]))[0]!.messages[0]!.term).toBe(
      RAFT_TERM_MAX,
    );
    // The audit's attack: one RequestVote at term 2^32 made every later token unmintable.
    expect(() => decodeFrame(encodeFrame([{ group: 'g', messages: [vote(2 ** 32, 1)] }]))).toThrow(/term out of range/);
    expect(() => decodeFrame(encodeFrame([{ group: 'g', messages: [vote(1, 2 ** 32)] }]))).toThrow(/term out of range/);
    const append: Message = {
      type: MessageType.AppendEntries,
      from: 'n1',
      to: 'n2',
      term: 1,
      prevLogIndex: 0,
      prevLogTerm: 0,
      leaderCommit: 0,
      leaderTick: 0,
      entries: [{ index: 1, term: 2 ** 40, type: EntryType.Normal, data: new Uint8Array(0) }],
    };
    expect(() => decodeFrame(encodeFrame([{ group: 'g', messages: [append] }]))).toThrow(/term out of range/);
  });
});
