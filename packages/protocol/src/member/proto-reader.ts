// Protocol-buffers wire reader for the member protocol: reads one buffer in place, entering and
// leaving nested messages by moving its end (no reader object per message). Varints, nested
// messages and skipping are the engine's WireReader, shared with Raft's frame reader; this adds
// strings, bytes and doubles. Numbers come back as plain JS numbers; anything past 2^53, a
// truncated field or an unknown wire type throws `WireError`: the frame is garbage and is
// dropped whole.

import { Buffer } from 'node:buffer';
import { WireReader } from '@spoolmq/engine';

/** A frame that does not decode. Never an `MqError`: the stream carrying it is broken. */
export class WireError extends Error {
  constructor(message: string) {
    super(`member wire: ${message}`);
    this.name = 'WireError';
  }
}

export class ProtoReader extends WireReader<Buffer> {
  /** Reads `bytes` (not copied; results of `bytesView` point into it). */
  constructor(bytes: Uint8Array) {
    const { buffer, byteOffset, byteLength } = bytes;
    super(Buffer.isBuffer(bytes) ? bytes : Buffer.from(buffer, byteOffset, byteLength));
  }

  protected wireError(message: string): Error {
    return new WireError(message);
  }

  /** The next field's tag: field number * 8 + wire type. */
  tag(): number {
    return this.varint();
  }

  bool(): boolean {
    return this.varint() !== 0;
  }

  double(): number {
    if (this.pos + 8 > this.limit) throw new WireError('truncated double');
    const value = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /**
   * A packed run of varints (a repeated field as proto3 writers send it; its tag was just
   * read), appended to `into`; throws WireError once `into` would hold more than `max`.
   */
  packedVarints(into: number[], max = Number.POSITIVE_INFINITY): void {
    const outer = this.enter();
    while (this.more()) {
      if (into.length >= max) throw new WireError(`more than ${max} repeated values`);
      into.push(this.varint());
    }
    this.leave(outer);
  }

  string(): string {
    const length = this.lengthPrefix();
    const value = this.buf.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return value;
  }

  /** A bytes field as a view into the frame (no copy): for data used and dropped at once. */
  bytesView(): Uint8Array {
    const length = this.lengthPrefix();
    const view = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return view;
  }

  /**
   * A bytes field copied out of the frame: for data kept (a stored payload must not pin the
   * frame). Unpooled and not zero-filled, as the gateway's own body buffers: no shared slab
   * stays alive behind a small stored payload.
   */
  bytesCopy(): Uint8Array {
    const length = this.lengthPrefix();
    const copy = Buffer.allocUnsafeSlow(length);
    this.buf.copy(copy, 0, this.pos, this.pos + length);
    this.pos += length;
    return copy;
  }
}
