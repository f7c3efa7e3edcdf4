// The layout of a format 2 snapshot file (see snapshot-files.ts), all integers big-endian:
//   header:  "MQSNAPSH" | u32 format (2) | u32 crc32c of the 12 bytes before it
//   frames:  u32 length (1..SNAPSHOT_FRAME_BYTES_MAX) | u32 crc32c of the bytes | bytes
//   trailer: u32 0 | u32 crc32c of the 12 bytes after it | u64 data bytes | u32 crc32c of data
// A frame's own checksum lets a reader hand each frame on once it is read; the trailer tells a
// whole file from a cut one, and the length bound keeps a flipped length bit from making a
// reader allocate gigabytes.

import { crc32c } from './crc32c.js';

export const SNAPSHOT_FILE_FORMAT = 2;
/** The largest frame written or accepted: the most a reader allocates at a time. */
export const SNAPSHOT_FRAME_BYTES_MAX = 1024 * 1024;
export const HEADER_BYTES = 16;
export const FRAME_HEAD_BYTES = 8;
/** Bytes of the trailer after its frame head (whose length is 0). */
export const TRAILER_BYTES = 12;

const MAGIC = Buffer.from('MQSNAPSH', 'ascii');

export function encodeHeader(): Uint8Array {
  const out = Buffer.alloc(HEADER_BYTES);
  MAGIC.copy(out, 0);
  out.writeUInt32BE(SNAPSHOT_FILE_FORMAT, 8);
  out.writeUInt32BE(crc32c(out, 0, 12), 12);
  return out;
}

/** Null for a good header; `format` for a whole header of another format; else what is wrong. */
export function decodeHeader(header: Uint8Array): string | null {
  const view = Buffer.from(header.buffer, header.byteOffset, header.byteLength);
  if (!view.subarray(0, 8).equals(MAGIC)) return 'not a snapshot file';
  if (view.readUInt32BE(12) !== crc32c(view, 0, 12)) return 'checksum';
  return view.readUInt32BE(8) === SNAPSHOT_FILE_FORMAT ? null : 'format';
}

export function encodeFrameHead(length: number, crc: number): Uint8Array {
  const out = Buffer.allocUnsafe(FRAME_HEAD_BYTES);
  out.writeUInt32BE(length, 0);
  out.writeUInt32BE(crc, 4);
  return out;
}

/** The trailer with its frame head (length 0). */
export function encodeTrailer(dataBytes: number, dataCrc: number): Uint8Array {
  const out = Buffer.alloc(FRAME_HEAD_BYTES + TRAILER_BYTES);
  out.writeUInt32BE(Math.floor(dataBytes / 0x1_0000_0000), FRAME_HEAD_BYTES);
  out.writeUInt32BE(dataBytes >>> 0, FRAME_HEAD_BYTES + 4);
  out.writeUInt32BE(dataCrc, FRAME_HEAD_BYTES + 8);
  out.writeUInt32BE(crc32c(out, FRAME_HEAD_BYTES), 4);
  return out;
}

/** The trailer's data length and CRC, from its 12 bytes and its head's checksum; null if bad. */
export function decodeTrailer(
  body: Uint8Array,
  bodyCrc: number,
): { dataBytes: number; dataCrc: number } | null {
  if (body.length !== TRAILER_BYTES || crc32c(body) !== bodyCrc) return null;
  const view = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const dataBytes = view.readUInt32BE(0) * 0x1_0000_0000 + view.readUInt32BE(4);
  return { dataBytes, dataCrc: view.readUInt32BE(8) };
}
