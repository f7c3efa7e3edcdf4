// Binary form of a spool's Raft log entry: the primary's entry time, then the engine command.
//
//   f64 entryTimeMs (big-endian, 8 bytes) | encodeCommand(command)
//
// An entry of the 8 time bytes alone is a barrier: a new primary proposes one when it wins an
// election, and opens the spool once it is applied (every entry of earlier terms is then applied
// too). Replicas apply a barrier as nothing, so the engine state stays the same everywhere.

import { type Command, decodeCommand, encodeCommand } from '@spoolmq/engine';

export const ENTRY_TIME_BYTES = 8;

/**
 * Encodes `command` at entry time `atMs` (epoch ms, finite). The engine codec leaves room for
 * the time, so the command (a send's payload included) is written once.
 */
export function encodeEntry(atMs: number, command: Command): Uint8Array {
  const out = encodeCommand(command, ENTRY_TIME_BYTES);
  writeTime(out, atMs);
  return out;
}

/** A barrier entry at `atMs` (epoch ms, finite). */
export function encodeBarrier(atMs: number): Uint8Array {
  const out = new Uint8Array(ENTRY_TIME_BYTES);
  writeTime(out, atMs);
  return out;
}

/** Entry time (epoch ms) of an entry. Throws RangeError when shorter than the time field. */
export function entryTimeMs(data: Uint8Array): number {
  if (data.byteLength < ENTRY_TIME_BYTES) throw new RangeError('spool entry: too short');
  return new DataView(data.buffer, data.byteOffset, ENTRY_TIME_BYTES).getFloat64(0);
}

export function isBarrier(data: Uint8Array): boolean {
  return data.byteLength === ENTRY_TIME_BYTES;
}

/** The command of a non-barrier entry. Throws CodecError when it does not decode. */
export function entryCommand(data: Uint8Array): Command {
  return decodeCommand(data.subarray(ENTRY_TIME_BYTES));
}

function writeTime(out: Uint8Array, atMs: number): void {
  if (!Number.isFinite(atMs)) throw new RangeError('spool entry: time must be finite');
  new DataView(out.buffer, out.byteOffset, ENTRY_TIME_BYTES).setFloat64(0, atMs);
}
