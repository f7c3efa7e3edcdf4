import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { RAFT_SERVICE, RAFT_STREAM_PATH, frameBuffer } from '../../src/transport/raft-service.js';

describe('raft gRPC service definition', () => {
  it('is a client stream at the path the .proto names', () => {
    expect(RAFT_STREAM_PATH).toBe('/mq.raft.Raft/Stream');
    expect(RAFT_SERVICE.stream).toMatchObject({ path: RAFT_STREAM_PATH, requestStream: true, responseStream: false });
  });

  it('passes frames through as Buffers over the same memory', () => {
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    const frame = backing.subarray(1, 4);
    const buffer = frameBuffer(frame);
    expect(Buffer.isBuffer(buffer)).toBe(true);
    expect([...buffer]).toEqual([1, 2, 3]);
    backing[2] = 7;
    expect(buffer[1]).toBe(7);
  });
});
