// Hand-written encoder of `mq.raft.Frame` (proto/raft.proto), the leader's hot path: every
// AppendEntries with its entries passes here. protobufjs would build a wire object per message,
// split each uint64 into LongBits and grow its buffer in chunks; this writes one exactly sized
// buffer in two passes (sizes, then bytes), with the engine's WireWriter (the field primitives
// the member protocol's writer shares). Fields at their proto3 default (0, false, empty) are
// left out, as proto3 allows; a oneof body is always written, even when empty. Field numbers
// must match proto/raft.proto; the tests decode this output with protobufjs.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { WireWriter, varintLength } from '@spoolmq/engine';
import {
  MessageType,
  type ClusterConfig,
  type Entry,
  type Message,
  type SnapshotMeta,
} from '../types.js';
import type { FrameBatch } from './frame-batch.js';

/**
 * Encodes batches as one Frame. Numbers must be integers in [0, 2^53) (Raft indexes, terms,
 * offsets; asserted by the core, and by the writer's `uint` again).
 */
export function writeFrame(batches: readonly FrameBatch[]): Uint8Array {
  // Pre-order sizes of every nested message: the write pass consumes them in the same order.
  const sizes: number[] = [];
  let total = 0;
  for (const batch of batches) total += lenField(1, sizeBatch(batch, sizes));
  const writer = new FrameWriter(total, sizes);
  for (const batch of batches) writeBatch(writer, batch);
  return writer.finish();
}

// ---- sizes ---------------------------------------------------------------------------------

/** Bytes of a length-delimited field with a one-byte tag (field numbers here are all < 16). */
function lenField(_field: number, length: number): number {
  return 1 + varintLength(length) + length;
}

function uintField(value: number): number {
  return value === 0 ? 0 : 1 + varintLength(value);
}

function boolField(value: boolean): number {
  return value ? 2 : 0;
}

function stringField(value: string): number {
  return value.length === 0 ? 0 : lenField(0, Buffer.byteLength(value, 'utf8'));
}

function bytesField(value: Uint8Array): number {
  return value.length === 0 ? 0 : lenField(0, value.length);
}

function reserve(sizes: number[]): number {
  sizes.push(0);
  return sizes.length - 1;
}

function sizeBatch(batch: FrameBatch, sizes: number[]): number {
  const slot = reserve(sizes);
  let size = stringField(batch.group);
  for (const message of batch.messages) size += lenField(2, sizeMessage(message, sizes));
  sizes[slot] = size;
  return size;
}

function sizeMessage(message: Message, sizes: number[]): number {
  const slot = reserve(sizes);
  const envelope = stringField(message.from) + stringField(message.to) + uintField(message.term);
  const size = envelope + lenField(4, sizeBody(message, sizes));
  sizes[slot] = size;
  return size;
}

function sizeBody(message: Message, sizes: number[]): number {
  const slot = reserve(sizes);
  let size = 0;
  switch (message.type) {
    case MessageType.AppendEntries:
      size = uintField(message.prevLogIndex) + uintField(message.prevLogTerm);
      for (const entry of message.entries) size += lenField(3, sizeEntry(entry, sizes));
      size += uintField(message.leaderCommit) + uintField(message.leaderTick);
      size += boolField(message.repair === true);
      break;
    case MessageType.AppendEntriesResponse:
      size =
        boolField(message.success) +
        uintField(message.matchIndex) +
        uintField(message.conflictIndex);
      size += uintField(message.conflictTerm) + uintField(message.leaderTick);
      break;
    case MessageType.RequestVote:
      size =
        boolField(message.preVote) +
        uintField(message.lastLogIndex) +
        uintField(message.lastLogTerm);
      size += boolField(message.transfer);
      break;
    case MessageType.RequestVoteResponse:
      size = boolField(message.preVote) + boolField(message.granted);
      break;
    case MessageType.InstallSnapshot:
      size = lenField(1, sizeMeta(message.meta, sizes)) + uintField(message.offset);
      size += bytesField(message.chunk) + boolField(message.done);
      size += boolField(message.repair === true);
      break;
    case MessageType.InstallSnapshotResponse:
      size = uintField(message.snapshotIndex) + uintField(message.nextOffset);
      size += boolField(message.done) + boolField(message.success);
      break;
    case MessageType.TimeoutNow:
      break;
    case MessageType.RepairRequest:
      size = stringField(message.origin) + uintField(message.damageIndex);
      size += uintField(message.damageTerm) + uintField(message.lastLogIndex);
      size += uintField(message.lastLogTerm) + uintField(message.snapshotIndex);
      size += uintField(message.snapshotOffset);
      break;
  }
  sizes[slot] = size;
  return size;
}

function sizeEntry(entry: Entry, sizes: number[]): number {
  const size =
    uintField(entry.index) + uintField(entry.term) + uintField(entry.type) + bytesField(entry.data);
  sizes.push(size);
  return size;
}

function sizeMeta(meta: SnapshotMeta, sizes: number[]): number {
  const slot = reserve(sizes);
  const configSize = lenField(3, sizeConfig(meta.config, sizes));
  const size = uintField(meta.index) + uintField(meta.term) + configSize;
  sizes[slot] = size;
  return size;
}

function sizeConfig(config: ClusterConfig, sizes: number[]): number {
  let size = 0;
  // Repeated strings are written even when empty: an empty id is still an element.
  for (const id of config.voters) size += lenField(1, Buffer.byteLength(id, 'utf8'));
  for (const id of config.learners) size += lenField(2, Buffer.byteLength(id, 'utf8'));
  sizes.push(size);
  return size;
}

// ---- bytes ---------------------------------------------------------------------------------

/**
 * The write pass: the field primitives into a buffer the size pass sized exactly (no growth, no
 * copy but the one of each entry's data), nested lengths taken from the size pass in pre-order.
 */
class FrameWriter extends WireWriter<Buffer> {
  private slot = 0;

  constructor(
    totalBytes: number,
    private readonly sizes: readonly number[],
  ) {
    super(Buffer.allocUnsafe(totalBytes));
  }

  /** Opens a nested message: its tag and its pre-computed length. */
  nested(field: number): void {
    this.prefix(field, this.sizes[this.slot++]!);
  }

  /** The frame, once the write pass filled exactly what the size pass measured. */
  finish(): Buffer {
    const message = 'raft codec: the write pass disagrees with the size pass';
    assert.equal(this.pos, this.buf.length, message);
    return this.buf;
  }

  /** Room is there: the size pass sized the buffer; `finish` checks that the passes agree. */
  protected grow(): void {}

  protected utf8Length(value: string): number {
    return Buffer.byteLength(value, 'utf8');
  }

  protected putUtf8(value: string, length: number): void {
    this.buf.write(value, this.pos, length, 'utf8');
  }
}

function writeBatch(w: FrameWriter, batch: FrameBatch): void {
  w.nested(1);
  w.string(1, batch.group);
  for (const message of batch.messages) writeMessage(w, message);
}

function writeMessage(w: FrameWriter, message: Message): void {
  w.nested(2);
  w.string(1, message.from);
  w.string(2, message.to);
  w.uint(3, message.term);
  writeBody(w, message);
}

/** Body field numbers: append_entries 4 ... repair_request 11, in MessageType order. */
function writeBody(w: FrameWriter, message: Message): void {
  w.nested(4 + message.type);
  switch (message.type) {
    case MessageType.AppendEntries:
      w.uint(1, message.prevLogIndex);
      w.uint(2, message.prevLogTerm);
      for (const entry of message.entries) writeEntry(w, entry);
      w.uint(4, message.leaderCommit);
      w.uint(5, message.leaderTick);
      w.bool(6, message.repair === true);
      return;
    case MessageType.AppendEntriesResponse:
      w.bool(1, message.success);
      w.uint(2, message.matchIndex);
      w.uint(3, message.conflictIndex);
      w.uint(4, message.conflictTerm);
      w.uint(5, message.leaderTick);
      return;
    case MessageType.RequestVote:
      w.bool(1, message.preVote);
      w.uint(2, message.lastLogIndex);
      w.uint(3, message.lastLogTerm);
      w.bool(4, message.transfer);
      return;
    case MessageType.RequestVoteResponse:
      w.bool(1, message.preVote);
      w.bool(2, message.granted);
      return;
    case MessageType.InstallSnapshot:
      writeMeta(w, message.meta);
      w.uint(2, message.offset);
      w.bytes(3, message.chunk);
      w.bool(4, message.done);
      w.bool(5, message.repair === true);
      return;
    case MessageType.InstallSnapshotResponse:
      w.uint(1, message.snapshotIndex);
      w.uint(2, message.nextOffset);
      w.bool(3, message.done);
      w.bool(4, message.success);
      return;
    case MessageType.TimeoutNow:
      return;
    case MessageType.RepairRequest:
      w.string(1, message.origin);
      w.uint(2, message.damageIndex);
      w.uint(3, message.damageTerm);
      w.uint(4, message.lastLogIndex);
      w.uint(5, message.lastLogTerm);
      w.uint(6, message.snapshotIndex);
      w.uint(7, message.snapshotOffset);
      return;
  }
}

function writeEntry(w: FrameWriter, entry: Entry): void {
  w.nested(3);
  w.uint(1, entry.index);
  w.uint(2, entry.term);
  w.uint(3, entry.type);
  w.bytes(4, entry.data);
}

function writeMeta(w: FrameWriter, meta: SnapshotMeta): void {
  w.nested(1);
  w.uint(1, meta.index);
  w.uint(2, meta.term);
  w.nested(3);
  for (const id of meta.config.voters) w.stringAlways(1, id);
  for (const id of meta.config.learners) w.stringAlways(2, id);
}
