import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { CursorCodec, CursorKind } from '../../src/host/cursors.js';

const codec = new CursorCodec(new Uint8Array(32).fill(1), new Uint8Array(16).fill(2));

function expectBadCursor(fn: () => unknown): void {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(MqError);
    expect((error as MqError).kind).toBe('invalid_argument');
    expect((error as MqError).details).toEqual({ field: 'after' });
    return;
  }
  throw new Error('cursor accepted');
}

describe('cursors', () => {
  it('round-trip names and seqs, within 1-256 url-safe chars', () => {
    const name = 'a'.repeat(63);
    const cursor = codec.sealName('default', CursorKind.Queues, name);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]{1,256}$/);
    expect(codec.openName('default', CursorKind.Queues, cursor)).toBe(name);
    const seqCursor = codec.sealSeq('default', 4, 'failed', 2 ** 45 + 3);
    expect(codec.openSeq('default', 4, 'failed', seqCursor)).toBe(2 ** 45 + 3);
    expect(codec.openSeq('default', 4, undefined, codec.sealSeq('default', 4, undefined, 9))).toBe(9);
  });

  it('refuses another listing, spool, queue generation or state filter', () => {
    const queues = codec.sealName('default', CursorKind.Queues, 'q');
    expectBadCursor(() => codec.openName('default', CursorKind.Stats, queues));
    expectBadCursor(() => codec.openName('other', CursorKind.Queues, queues));
    expectBadCursor(() => codec.openSeq('default', 1, undefined, queues));
    const messages = codec.sealSeq('default', 4, 'visible', 10);
    expectBadCursor(() => codec.openSeq('default', 5, 'visible', messages));
    expectBadCursor(() => codec.openSeq('default', 4, undefined, messages));
    expectBadCursor(() => codec.openName('default', CursorKind.Queues, messages));
  });

  it('refuses tampered, truncated, padded and over-long cursors', () => {
    const cursor = codec.sealSeq('default', 4, undefined, 10);
    const flipped = `${cursor[0] === 'A' ? 'B' : 'A'}${cursor.slice(1)}`;
    for (const bad of [flipped, cursor.slice(0, -1), `${cursor}A`, `${cursor}=`, 'x'.repeat(257), '', 'A']) {
      expectBadCursor(() => codec.openSeq('default', 4, undefined, bad));
    }
  });
});
