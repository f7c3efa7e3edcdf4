// One payload record of a segment file: a 16-byte header, then the payload.
//   u32 payload length | u32 CRC-32 of (seq bytes, payload) | f64 seq | payload
// All big-endian. The checksum covers the seq too, so a location that points at the wrong record
// (a bug, a stale location) fails as surely as a flipped bit. CRC-32 is zlib's (native, so
// checking a 64 KiB payload costs microseconds), distinct from the log's CRC-32C.

import { crc32 } from 'node:zlib';

export const RECORD_HEADER_BYTES = 16;

/** The header of the record of `seq` holding `payload`. */
export function encodeRecordHeader(seq: number, payload: Uint8Array): Buffer {
  const header = Buffer.allocUnsafe(RECORD_HEADER_BYTES);
  header.writeUInt32BE(payload.byteLength, 0);
  header.writeDoubleBE(seq, 8);
  header.writeUInt32BE(recordChecksum(header, payload), 4);
  return header;
}

/**
 * Checks a record read whole into `record` (header and payload) against what the state expects.
 * Returns null when it holds the payload of `seq` with `byteLength` bytes intact, else why not.
 */
export function checkRecord(record: Buffer, seq: number, byteLength: number): string | null {
  if (record.byteLength !== RECORD_HEADER_BYTES + byteLength) return 'short read';
  if (record.readUInt32BE(0) !== byteLength) return 'length differs';
  if (record.readDoubleBE(8) !== seq) return 'record of another message';
  const payload = record.subarray(RECORD_HEADER_BYTES);
  if (record.readUInt32BE(4) !== recordChecksum(record, payload)) return 'checksum mismatch';
  return null;
}

function recordChecksum(header: Buffer, payload: Uint8Array): number {
  return crc32(payload, crc32(header.subarray(8, 16)));
}

/**
 * The checksum a record of `seq` holding `payload` carries: every replica computes it alike from
 * the payload as logged, so replicas agree on it (a payload fetched from a peer is checked
 * against the one the peer sends).
 */
export function payloadChecksum(seq: number, payload: Uint8Array): number {
  const seqBytes = Buffer.allocUnsafe(8);
  seqBytes.writeDoubleBE(seq, 0);
  return crc32(payload, crc32(seqBytes));
}
