// Listing cursors (`next` / `after`): opaque and tamper-evident. base64url of a small payload and
// a 12-byte truncated HMAC keyed per spool, so a cursor from another spool, another listing, or
// another queue (generation) or state filter of a message listing is refused, as is any edit.
//
// Payload: u8 version<<4|kind, then for queue listings u8 length + name, for message listings
// u32 queueGen | u8 state | u32 seqHigh | u32 seqLow.

import { MqError, type MessageState } from '@spoolmq/engine';
import { KeyRing } from './tokens.js';

export const CursorKind = { Queues: 1, Stats: 2, Messages: 3 } as const;
export type CursorKind = (typeof CursorKind)[keyof typeof CursorKind];

const VERSION = 1;
const MAC_BYTES = 12;
const U32 = 0x1_0000_0000;
const STATE_CODES: Readonly<Record<MessageState | 'all', number>> = {
  all: 0,
  delayed: 1,
  visible: 2,
  pending: 3,
  failed: 4,
  unavailable: 5,
};

function badCursor(): MqError {
  const message = 'cursor is not valid for this listing';
  return new MqError('invalid_argument', message, { field: 'after' });
}

export class CursorCodec {
  private readonly ring: KeyRing;

  constructor(secret: Uint8Array, salt: Uint8Array) {
    this.ring = new KeyRing(secret, salt, 'mq-cursor-v1');
  }

  /** Cursor resuming a queue or stats listing of `spool` after `name`. */
  sealName(spool: string, kind: CursorKind, name: string): string {
    const payload = Buffer.alloc(2 + name.length);
    payload[0] = (VERSION << 4) | kind;
    payload[1] = name.length;
    payload.write(name, 2, 'latin1');
    return this.seal(spool, payload);
  }

  /** The name a queue or stats cursor resumes after. Throws 400 invalid_argument (field after). */
  openName(spool: string, kind: CursorKind, cursor: string): string {
    const payload = this.open(spool, cursor);
    const header = (VERSION << 4) | kind;
    if (payload.length < 2 || payload[0] !== header || payload[1] !== payload.length - 2) {
      throw badCursor();
    }
    return payload.toString('latin1', 2);
  }

  /** Cursor resuming a message listing of queue generation `queueGen` with `state` after `seq`. */
  sealSeq(spool: string, queueGen: number, state: MessageState | undefined, seq: number): string {
    const payload = Buffer.alloc(14);
    payload[0] = (VERSION << 4) | CursorKind.Messages;
    payload.writeUInt32BE(queueGen, 1);
    payload[5] = STATE_CODES[state ?? 'all'];
    payload.writeUInt32BE(Math.floor(seq / U32), 6);
    payload.writeUInt32BE(seq % U32, 10);
    return this.seal(spool, payload);
  }

  /** The seq a message cursor resumes after. Throws 400 invalid_argument (field after). */
  openSeq(
    spool: string,
    queueGen: number,
    state: MessageState | undefined,
    cursor: string,
  ): number {
    const payload = this.open(spool, cursor);
    if (payload.length !== 14 || payload[0] !== ((VERSION << 4) | CursorKind.Messages)) {
      throw badCursor();
    }
    if (payload.readUInt32BE(1) !== queueGen || payload[5] !== STATE_CODES[state ?? 'all']) {
      throw badCursor();
    }
    return payload.readUInt32BE(6) * U32 + payload.readUInt32BE(10);
  }

  private seal(spool: string, payload: Buffer): string {
    return Buffer.concat([payload, this.ring.mac(spool, payload, MAC_BYTES)]).toString('base64url');
  }

  private open(spool: string, cursor: string): Buffer {
    if (cursor.length === 0 || cursor.length > 256) throw badCursor();
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.length <= MAC_BYTES || bytes.toString('base64url') !== cursor) throw badCursor();
    const payload = bytes.subarray(0, bytes.length - MAC_BYTES);
    const mac = this.ring.mac(spool, payload, MAC_BYTES);
    if (!mac.equals(bytes.subarray(bytes.length - MAC_BYTES))) throw badCursor();
    return payload;
  }
}
