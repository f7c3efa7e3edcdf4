import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { writeFrame } from '../../src/transport/frame-writer.js';
import { RAFT_PROTO_PATH } from '../../src/transport/message-codec.js';
import { MessageType, type Message } from '../../src/types.js';
import { sampleMessages } from './sample-messages.js';

const Frame = protobuf.loadSync(RAFT_PROTO_PATH).lookupType('mq.raft.Frame');

type ProtoObject = Record<string, unknown>;

/** What protobufjs, reading the .proto, makes of our bytes (defaults filled in, longs as numbers). */
function viaProto(bytes: Uint8Array): Array<{ group: string; messages: ProtoObject[] }> {
  const frame = Frame.toObject(Frame.decode(bytes), { longs: Number, defaults: true, oneofs: true, bytes: Array });
  return (frame as { batches: Array<{ group: string; messages: ProtoObject[] }> }).batches;
}

describe('frame writer', () => {
  it('writes every variant so that protobufjs reads the same fields back', () => {
    const messages = sampleMessages('n2', 'n3');
    const [batch] = viaProto(writeFrame([{ group: 'spool:w', messages }]));
    expect(batch!.group).toBe('spool:w');
    const decoded = batch!.messages;
    const bodyNames = ['appendEntries', 'appendEntriesResponse', 'requestVote', 'requestVoteResponse', 'installSnapshot', 'installSnapshotResponse', 'timeoutNow', 'repairRequest'];
    expect(decoded.map((m) => m.body)).toEqual(messages.map((m) => bodyNames[m.type]));
    expect(decoded.map((m) => [m.from, m.to, m.term])).toEqual(messages.map((m) => [m.from, m.to, m.term]));
    const first = messages[0]!;
    if (first.type !== MessageType.AppendEntries) throw new Error('expected AppendEntries first');
    const append = decoded[0]!.appendEntries as { prevLogIndex: number; leaderTick: number; entries: ProtoObject[] };
    expect(append.prevLogIndex).toBe(first.prevLogIndex);
    expect(append.leaderTick).toBe(first.leaderTick);
    expect(append.entries).toEqual(
      first.entries.map((e) => ({ index: e.index, term: e.term, type: e.type, data: [...e.data] })),
    );
    const snapshot = messages.find((m) => m.type === MessageType.InstallSnapshot)!;
    if (snapshot.type !== MessageType.InstallSnapshot) throw new Error('expected InstallSnapshot');
    const snapshotWire = decoded[messages.indexOf(snapshot)]!.installSnapshot as ProtoObject;
    expect(snapshotWire).toEqual({
      meta: { index: snapshot.meta.index, term: snapshot.meta.term, config: { voters: [...snapshot.meta.config.voters], learners: [...snapshot.meta.config.learners] } },
      offset: snapshot.offset,
      chunk: [...snapshot.chunk],
      done: snapshot.done,
      repair: false,
    });
    for (const [i, message] of messages.entries()) {
      if (message.type !== MessageType.AppendEntries && message.type !== MessageType.InstallSnapshot) continue;
      const body = (decoded[i]!.appendEntries ?? decoded[i]!.installSnapshot) as ProtoObject;
      expect(body.repair).toBe(message.repair === true);
    }
    const request = messages.find((m) => m.type === MessageType.RepairRequest)!;
    if (request.type !== MessageType.RepairRequest) throw new Error('expected RepairRequest');
    expect(decoded[messages.indexOf(request)]!.repairRequest).toEqual({
      origin: request.origin,
      damageIndex: request.damageIndex,
      damageTerm: request.damageTerm,
      lastLogIndex: request.lastLogIndex,
      lastLogTerm: request.lastLogTerm,
      snapshotIndex: request.snapshotIndex,
      snapshotOffset: request.snapshotOffset,
    });
  });

  it('leaves proto3 defaults out but always writes the oneof body', () => {
    const empty: Message = { type: MessageType.RequestVoteResponse, from: 'a', to: 'b', term: 0, preVote: false, granted: false };
    // Frame.batches(1) { group(1) "g", messages(2) { from "a", to "b", request_vote_response(7) {} } }
    expect(Buffer.from(writeFrame([{ group: 'g', messages: [empty] }])).toString('hex')).toBe('0a0d0a016712080a01611201623a00');
    const [batch] = viaProto(writeFrame([{ group: 'g', messages: [empty] }]));
    expect(batch!.messages[0]!.body).toBe('requestVoteResponse');
  });

  it('keeps empty member ids in a snapshot config (repeated strings are elements)', () => {
    const message: Message = {
      type: MessageType.InstallSnapshot, from: 'a', to: 'b', term: 1,
      meta: { index: 1, term: 1, config: { voters: ['', 'n1'], learners: [''] } }, offset: 0, chunk: new Uint8Array(0), done: true,
    };
    const [batch] = viaProto(writeFrame([{ group: 'g', messages: [message] }]));
    const meta = (batch!.messages[0]!.installSnapshot as { meta: { config: ProtoObject } }).meta;
    expect(meta.config).toEqual({ voters: ['', 'n1'], learners: [''] });
  });

  it('encodes numbers up to 2^53 - 1 and non-ASCII group names exactly (property)', () => {
    const n = fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER });
    fc.assert(
      fc.property(n, n, fc.string({ maxLength: 12, unit: 'binary' }), (term, index, group) => {
        const message: Message = { type: MessageType.AppendEntriesResponse, from: 'x', to: 'y', term, success: true, matchIndex: index, conflictIndex: 0, conflictTerm: 0, leaderTick: index };
        const [batch] = viaProto(writeFrame([{ group, messages: [message] }]));
        expect(batch!.group).toBe(group);
        expect(batch!.messages[0]!.term).toBe(term);
        expect((batch!.messages[0]!.appendEntriesResponse as { matchIndex: number }).matchIndex).toBe(index);
      }),
      { numRuns: 200 },
    );
  });
});
