// Hand-written decoder of `mq.raft.Frame` (proto/raft.proto). It reads the received buffer in
// place and builds each Message as one literal: no intermediate wire objects and no Long per
// uint64, which protobufjs allocates for every index and term (the `long` package is installed,
// so its readers return Long objects). This is the follower's hot path: every AppendEntries
// with its entries passes here. Field numbers must match proto/raft.proto; the tests check this
// decoder against protobufjs encoding the .proto.

import { Buffer } from 'node:buffer';
import { WIRE_LEN, WIRE_VARINT, WireReader } from '@spoolmq/engine';
import {
  MessageType,
  RAFT_TERM_MAX,
  type ClusterConfig,
  type Entry,
  type EntryType,
  type GroupId,
  type Message,
  type NodeId,
  type SnapshotMeta,
} from '../types.js';


// Message.body field numbers (oneof body).
const BODY_APPEND_ENTRIES = 4;
const BODY_APPEND_ENTRIES_RESPONSE = 5;
const BODY_REQUEST_VOTE = 6;
const BODY_REQUEST_VOTE_RESPONSE = 7;
const BODY_INSTALL_SNAPSHOT = 8;
const BODY_INSTALL_SNAPSHOT_RESPONSE = 9;
const BODY_TIMEOUT_NOW = 10;
const BODY_REPAIR_REQUEST = 11;

const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

/** Messages of one group, in send order. */
export interface DecodedBatch {
  readonly group: GroupId;
  readonly messages: Message[];
}

/**
 * Decodes a Frame. Bytes fields (`data`, `chunk`) are views into `bytes`, not copies. Throws on
 * a truncated field, an unknown wire type, a known field of the wrong wire type, a number past
 * 2^53, and a message without a body. Unknown fields are skipped, as proto3 requires.
 */
export function readFrame(bytes: Uint8Array): DecodedBatch[] {
  const reader = new FrameReader(bytes);
  const batches: DecodedBatch[] = [];
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_LEN)) {
      const outer = reader.enter();
      batches.push(readBatch(reader));
      reader.leave(outer);
    } else {
      reader.skipUnknown(tag, 1);
    }
  }
  return batches;
}

function readBatch(reader: FrameReader): DecodedBatch {
  let group = '';
  const messages: Message[] = [];
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_LEN)) group = reader.string();
    else if (tag === ((2 << 3) | WIRE_LEN)) {
      const outer = reader.enter();
      messages.push(readMessage(reader));
      reader.leave(outer);
    } else reader.skipUnknown(tag, 2);
  }
  return { group, messages };
}

/** Reads the envelope first, then the body (its fields may come in any order on the wire). */
function readMessage(reader: FrameReader): Message {
  let from = '';
  let to = '';
  let term = 0;
  let bodyField = 0;
  let bodyStart = 0;
  let bodyEnd = 0;
  while (reader.more()) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (tag === ((1 << 3) | WIRE_LEN)) from = reader.string();
    else if (tag === ((2 << 3) | WIRE_LEN)) to = reader.string();
    else if (tag === ((3 << 3) | WIRE_VARINT)) term = reader.term();
    else if (field >= BODY_APPEND_ENTRIES && field <= BODY_REPAIR_REQUEST) {
      reader.expect(tag, WIRE_LEN);
      // Oneof: the last body on the wire wins.
      const length = reader.lengthPrefix();
      bodyField = field;
      bodyStart = reader.position();
      bodyEnd = bodyStart + length;
      reader.seek(bodyEnd);
    } else reader.skipUnknown(tag, 3);
  }
  const outer = reader.range(bodyStart, bodyEnd);
  const message = readBody(reader, bodyField, from, to, term);
  reader.leave(outer);
  return message;
}

function readBody(
  reader: FrameReader,
  bodyField: number,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  switch (bodyField) {
    case BODY_APPEND_ENTRIES:
      return readAppendEntries(reader, from, to, term);
    case BODY_APPEND_ENTRIES_RESPONSE:
      return readAppendEntriesResponse(reader, from, to, term);
    case BODY_REQUEST_VOTE:
      return readRequestVote(reader, from, to, term);
    case BODY_REQUEST_VOTE_RESPONSE:
      return readRequestVoteResponse(reader, from, to, term);
    case BODY_INSTALL_SNAPSHOT:
      return readInstallSnapshot(reader, from, to, term);
    case BODY_INSTALL_SNAPSHOT_RESPONSE:
      return readInstallSnapshotResponse(reader, from, to, term);
    case BODY_TIMEOUT_NOW:
      return { type: MessageType.TimeoutNow, from, to, term };
    case BODY_REPAIR_REQUEST:
      return readRepairRequest(reader, from, to, term);
    default:
      throw new Error('raft codec: message without a known body');
  }
}

function readAppendEntries(
  reader: FrameReader,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  let prevLogIndex = 0;
  let prevLogTerm = 0;
  const entries: Entry[] = [];
  let leaderCommit = 0;
  let leaderTick = 0;
  let repair = false;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) prevLogIndex = reader.varint();
    else if (tag === ((2 << 3) | WIRE_VARINT)) prevLogTerm = reader.term();
    else if (tag === ((3 << 3) | WIRE_LEN)) {
      const outer = reader.enter();
      entries.push(readEntry(reader));
      reader.leave(outer);
    } else if (tag === ((4 << 3) | WIRE_VARINT)) leaderCommit = reader.varint();
    else if (tag === ((5 << 3) | WIRE_VARINT)) leaderTick = reader.varint();
    else if (tag === ((6 << 3) | WIRE_VARINT)) repair = reader.varint() !== 0;
    else reader.skipUnknown(tag, 6);
  }
  const type = MessageType.AppendEntries as const;
  const message = {
    type,
    from,
    to,
    term,
    prevLogIndex,
    prevLogTerm,
    entries,
    leaderCommit,
    leaderTick,
  };
  // Rare (a repair): a copy then, so a leader's message keeps one shape.
  return repair ? { ...message, repair } : message;
}

function readEntry(reader: FrameReader): Entry {
  let index = 0;
  let term = 0;
  let type = 0;
  let data = EMPTY_BYTES;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) index = reader.varint();
    else if (tag === ((2 << 3) | WIRE_VARINT)) term = reader.term();
    else if (tag === ((3 << 3) | WIRE_VARINT)) type = reader.varint();
    else if (tag === ((4 << 3) | WIRE_LEN)) data = reader.bytesView();
    else reader.skipUnknown(tag, 4);
  }
  return { index, term, type: type as EntryType, data };
}

function readAppendEntriesResponse(
  reader: FrameReader,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  let success = false;
  let matchIndex = 0;
  let conflictIndex = 0;
  let conflictTerm = 0;
  let leaderTick = 0;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) success = reader.varint() !== 0;
    else if (tag === ((2 << 3) | WIRE_VARINT)) matchIndex = reader.varint();
    else if (tag === ((3 << 3) | WIRE_VARINT)) conflictIndex = reader.varint();
    else if (tag === ((4 << 3) | WIRE_VARINT)) conflictTerm = reader.term();
    else if (tag === ((5 << 3) | WIRE_VARINT)) leaderTick = reader.varint();
    else reader.skipUnknown(tag, 5);
  }
  const type = MessageType.AppendEntriesResponse;
  return { type, from, to, term, success, matchIndex, conflictIndex, conflictTerm, leaderTick };
}

function readRequestVote(
  reader: FrameReader,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  let preVote = false;
  let lastLogIndex = 0;
  let lastLogTerm = 0;
  let transfer = false;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) preVote = reader.varint() !== 0;
    else if (tag === ((2 << 3) | WIRE_VARINT)) lastLogIndex = reader.varint();
    else if (tag === ((3 << 3) | WIRE_VARINT)) lastLogTerm = reader.term();
    else if (tag === ((4 << 3) | WIRE_VARINT)) transfer = reader.varint() !== 0;
    else reader.skipUnknown(tag, 4);
  }
  const type = MessageType.RequestVote;
  return { type, from, to, term, preVote, lastLogIndex, lastLogTerm, transfer };
}

function readRequestVoteResponse(
  reader: FrameReader,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  let preVote = false;
  let granted = false;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) preVote = reader.varint() !== 0;
    else if (tag === ((2 << 3) | WIRE_VARINT)) granted = reader.varint() !== 0;
    else reader.skipUnknown(tag, 2);
  }
  return { type: MessageType.RequestVoteResponse, from, to, term, preVote, granted };
}

function readInstallSnapshot(
  reader: FrameReader,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  let meta: SnapshotMeta = { index: 0, term: 0, config: { voters: [], learners: [] } };
  let offset = 0;
  let chunk = EMPTY_BYTES;
  let done = false;
  let repair = false;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_LEN)) {
      const outer = reader.enter();
      meta = readSnapshotMeta(reader);
      reader.leave(outer);
    } else if (tag === ((2 << 3) | WIRE_VARINT)) offset = reader.varint();
    else if (tag === ((3 << 3) | WIRE_LEN)) chunk = reader.bytesView();
    else if (tag === ((4 << 3) | WIRE_VARINT)) done = reader.varint() !== 0;
    else if (tag === ((5 << 3) | WIRE_VARINT)) repair = reader.varint() !== 0;
    else reader.skipUnknown(tag, 5);
  }
  const type = MessageType.InstallSnapshot as const;
  const message = { type, from, to, term, meta, offset, chunk, done };
  return repair ? { ...message, repair } : message;
}

function readSnapshotMeta(reader: FrameReader): SnapshotMeta {
  let index = 0;
  let term = 0;
  let config: ClusterConfig = { voters: [], learners: [] };
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) index = reader.varint();
    else if (tag === ((2 << 3) | WIRE_VARINT)) term = reader.term();
    else if (tag === ((3 << 3) | WIRE_LEN)) {
      const outer = reader.enter();
      config = readClusterConfig(reader);
      reader.leave(outer);
    } else reader.skipUnknown(tag, 3);
  }
  return { index, term, config };
}

function readClusterConfig(reader: FrameReader): ClusterConfig {
  const voters: NodeId[] = [];
  const learners: NodeId[] = [];
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_LEN)) voters.push(reader.string());
    else if (tag === ((2 << 3) | WIRE_LEN)) learners.push(reader.string());
    else reader.skipUnknown(tag, 2);
  }
  return { voters, learners };
}

function readInstallSnapshotResponse(
  reader: FrameReader,
  from: NodeId,
  to: NodeId,
  term: number,
): Message {
  let snapshotIndex = 0;
  let nextOffset = 0;
  let done = false;
  let success = false;
  while (reader.more()) {
    const tag = reader.varint();
    if (tag === ((1 << 3) | WIRE_VARINT)) snapshotIndex = reader.varint();
    else if (tag === ((2 << 3) | WIRE_VARINT)) nextOffset = reader.varint();
    else if (tag === ((3 << 3) | WIRE_VARINT)) done = reader.varint() !== 0;
    else if (tag === ((4 << 3) | WIRE_VARINT)) success = reader.varint() !== 0;
    else reader.skipUnknown(tag, 4);
  }
  const type = MessageType.InstallSnapshotResponse;
  return { type, from, to, term, snapshotIndex, nextOffset, done, success };
}

function readRepairRequest(reader: FrameReader, from: NodeId, to: NodeId, term: number): Message {
  let origin = '';
  const numbers = [0, 0, 0, 0, 0, 0];
  while (reader.more()) {
    const tag = reader.varint();
    const field = tag >>> 3;
    if (tag === ((1 << 3) | WIRE_LEN)) origin = reader.string();
    else if (field >= 2 && field <= 7 && (tag & 7) === WIRE_VARINT) {
      // Terms go through the term bound, like every other term on the wire.
      numbers[field - 2] = field === 3 || field === 5 ? reader.term() : reader.varint();
    } else reader.skipUnknown(tag, 7);
  }
  const [damageIndex, damageTerm, lastLogIndex, lastLogTerm, snapshotIndex, snapshotOffset] =
    numbers as [number, number, number, number, number, number];
  return {
    type: MessageType.RepairRequest,
    from,
    to,
    term,
    origin,
    damageIndex,
    damageTerm,
    lastLogIndex,
    lastLogTerm,
    snapshotIndex,
    snapshotOffset,
  };
}

/** A cursor over one buffer; nested messages are entered by narrowing `limit`. */
class FrameReader extends WireReader<Buffer> {
  constructor(bytes: Uint8Array) {
    const { buffer, byteOffset, byteLength } = bytes;
    super(Buffer.isBuffer(bytes) ? bytes : Buffer.from(buffer, byteOffset, byteLength));
  }

  protected wireError(message: string): Error {
    return new Error(`raft codec: ${message}`);
  }

  position(): number {
    return this.pos;
  }

  seek(pos: number): void {
    this.pos = pos;
  }

  /**
   * A term: a varint no larger than RAFT_TERM_MAX. A larger one comes only from a broken or
   * hostile peer; refusing the frame here keeps it out of the core, the log and every token.
   */
  term(): number {
    const value = this.varint();
    if (value > RAFT_TERM_MAX) throw new Error('raft codec: term out of range');
    return value;
  }

  string(): string {
    const length = this.lengthPrefix();
    const start = this.pos;
    this.pos += length;
    return this.buf.toString('utf8', start, start + length);
  }

  bytesView(): Uint8Array {
    const length = this.lengthPrefix();
    const start = this.pos;
    this.pos += length;
    return this.buf.subarray(start, start + length);
  }

  /** Enters the already-checked range [start, end); returns the outer limit for `leave`. */
  range(start: number, end: number): number {
    const outer = this.limit;
    this.pos = start;
    this.limit = end;
    return outer;
  }

  expect(tag: number, wireType: number): void {
    if ((tag & 7) !== wireType) {
      throw new Error(`raft codec: field ${tag >>> 3} has wire type ${tag & 7}`);
    }
  }

  /** Skips a field not matched above: known numbers (<= `knownMax`) had the wrong wire type. */
  skipUnknown(tag: number, knownMax: number): void {
    const field = tag >>> 3;
    if (field >= 1 && field <= knownMax) {
      throw new Error(`raft codec: field ${field} has wire type ${tag & 7}`);
    }
    this.skip(tag & 7);
  }
}
