// Binary wire encoding of Raft messages, from proto/raft.proto (loaded at runtime with
// protobufjs, so the .proto stays the single source of truth). No JSON on the wire.
// Decoded `data`/`chunk` bytes are views into the received frame, not copies.

import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import {
  MessageType,
  type ClusterConfig,
  type Entry,
  type EntryType,
  type GroupId,
  type Message,
  type SnapshotMeta,
} from '../types.js';

/** proto/raft.proto, found from this file in src/transport/ and in dist/transport/ alike. */
export const RAFT_PROTO_PATH = fileURLToPath(new URL('../../../../proto/raft.proto', import.meta.url));

const root = protobuf.loadSync(RAFT_PROTO_PATH);
const FrameType = root.lookupType('mq.raft.Frame');

/** Messages of one group, in send order. */
export interface FrameBatch {
  readonly group: GroupId;
  readonly messages: readonly Message[];
}

const EMPTY_BODY = {};
const EMPTY_BYTES = new Uint8Array(0);

/**
 * Encodes batches as one `Frame`. Message objects are handed to protobufjs as they are: its
 * encoder reads only the fields the .proto declares, so each variant is its own body.
 */
export function encodeFrame(batches: readonly FrameBatch[]): Uint8Array {
  const wire = batches.map((batch) => ({ group: batch.group, messages: batch.messages.map(toWire) }));
  return FrameType.encode({ batches: wire }).finish();
}

function toWire(message: Message): object {
  const { from, to, term } = message;
  // One literal shape per variant (no computed keys): V8 keeps these objects fast.
  switch (message.type) {
    case MessageType.AppendEntries:
      return { from, to, term, appendEntries: message };
    case MessageType.AppendEntriesResponse:
      return { from, to, term, appendEntriesResponse: message };
    case MessageType.RequestVote:
      return { from, to, term, requestVote: message };
    case MessageType.RequestVoteResponse:
      return { from, to, term, requestVoteResponse: message };
    case MessageType.InstallSnapshot:
      return { from, to, term, installSnapshot: message };
    case MessageType.InstallSnapshotResponse:
      return { from, to, term, installSnapshotResponse: message };
    case MessageType.TimeoutNow:
      return { from, to, term, timeoutNow: EMPTY_BODY };
  }
}

/** A decoded uint64: protobufjs yields a Long when the `long` package is present. */
type WireNumber = number | { toNumber(): number };

/** Shape of decoded protobuf objects (fields at proto3 defaults when absent). */
interface WireMessage {
  from: string;
  to: string;
  term: WireNumber;
  body?: string;
  [field: string]: unknown;
}

interface WireFrame {
  batches: Array<{ group: string; messages: WireMessage[] }>;
}

/**
 * Decodes a `Frame`. Throws on bytes that are not a valid frame, on a message without a body,
 * and on a number past 2^53 (never produced by this code: such a frame is garbage).
 */
export function decodeFrame(bytes: Uint8Array): FrameBatch[] {
  const frame = FrameType.decode(bytes) as unknown as WireFrame;
  return frame.batches.map((batch) => ({
    group: batch.group,
    messages: batch.messages.map(fromWire),
  }));
}

function num(value: unknown): number {
  const n = typeof value === 'number' ? value : (value as { toNumber(): number }).toNumber();
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`raft codec: number out of range: ${String(value)}`);
  return n;
}

function bytesOf(value: unknown): Uint8Array {
  return value instanceof Uint8Array ? value : EMPTY_BYTES;
}

// Objects are built as literals, field by field: spreading a shared base object costs
// microseconds per message in V8, which matters at tens of thousands of messages a second.
function fromWire(wire: WireMessage): Message {
  const { from, to } = wire;
  const term = num(wire.term);
  const body = wire.body === undefined ? undefined : (wire[wire.body] as Record<string, unknown>);
  switch (wire.body) {
    case 'appendEntries':
      return {
        type: MessageType.AppendEntries,
        from,
        to,
        term,
        prevLogIndex: num(body!.prevLogIndex),
        prevLogTerm: num(body!.prevLogTerm),
        entries: (body!.entries as Array<Record<string, unknown>>).map(entryFromWire),
        leaderCommit: num(body!.leaderCommit),
        leaderTick: num(body!.leaderTick),
      };
    case 'appendEntriesResponse':
      return {
        type: MessageType.AppendEntriesResponse,
        from,
        to,
        term,
        success: body!.success === true,
        matchIndex: num(body!.matchIndex),
        conflictIndex: num(body!.conflictIndex),
        conflictTerm: num(body!.conflictTerm),
        leaderTick: num(body!.leaderTick),
      };
    case 'requestVote':
      return {
        type: MessageType.RequestVote,
        from,
        to,
        term,
        preVote: body!.preVote === true,
        lastLogIndex: num(body!.lastLogIndex),
        lastLogTerm: num(body!.lastLogTerm),
        transfer: body!.transfer === true,
      };
    case 'requestVoteResponse':
      return {
        type: MessageType.RequestVoteResponse,
        from,
        to,
        term,
        preVote: body!.preVote === true,
        granted: body!.granted === true,
      };
    case 'installSnapshot':
      return {
        type: MessageType.InstallSnapshot,
        from,
        to,
        term,
        meta: metaFromWire(body!.meta as Record<string, unknown> | null),
        offset: num(body!.offset),
        chunk: bytesOf(body!.chunk),
        done: body!.done === true,
      };
    case 'installSnapshotResponse':
      return {
        type: MessageType.InstallSnapshotResponse,
        from,
        to,
        term,
        snapshotIndex: num(body!.snapshotIndex),
        nextOffset: num(body!.nextOffset),
        done: body!.done === true,
        success: body!.success === true,
      };
    case 'timeoutNow':
      return { type: MessageType.TimeoutNow, from, to, term };
    default:
      throw new Error(`raft codec: message without a known body (${String(wire.body)})`);
  }
}

function entryFromWire(wire: Record<string, unknown>): Entry {
  return {
    index: num(wire.index),
    term: num(wire.term),
    type: wire.type as EntryType,
    data: bytesOf(wire.data),
  };
}

function metaFromWire(wire: Record<string, unknown> | null): SnapshotMeta {
  const config = (wire?.config ?? null) as { voters?: string[]; learners?: string[] } | null;
  const cluster: ClusterConfig = {
    voters: [...(config?.voters ?? [])],
    learners: [...(config?.learners ?? [])],
  };
  return { index: num(wire?.index ?? 0), term: num(wire?.term ?? 0), config: cluster };
}
