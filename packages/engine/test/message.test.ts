import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MESSAGE_ID_LENGTH, messageIdOf, seqOfMessageId } from '../src/message.js';

describe('message ids', () => {
  it('are fixed width and sort byte-wise in seq order (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (a, b) => {
        const ia = messageIdOf(a);
        const ib = messageIdOf(b);
        expect(ia.length).toBe(MESSAGE_ID_LENGTH);
        expect(Buffer.compare(Buffer.from(ia), Buffer.from(ib))).toBe(Math.sign(a - b));
        expect(seqOfMessageId(ia)).toBe(a);
      }),
    );
  });

  it('parsing refuses anything that is not an id', () => {
    for (const bad of ['', '1', '000000000000000G', '00000000000000001', '0000000000000000', 'FFFFFFFFFFFFFFFF']) {
      expect(seqOfMessageId(bad)).toBe(-1);
    }
  });
});
