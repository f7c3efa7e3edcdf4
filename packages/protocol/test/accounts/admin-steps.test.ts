// The member-to-member admin steps: every step and answer round-trips, agrees with protobufjs
// reading proto/member.proto, and what does not decode is refused with the reason.

import { Buffer } from 'node:buffer';
import { MqError } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import {
  type AdminAnswers,
  type AdminOp,
  type AdminStep,
  PAYLOAD_ITEMS_MAX,
  decodeAdminAnswer,
  decodeAdminStep,
  encodeAdminAnswer,
  encodeAdminStep,
} from '../../src/accounts/admin-steps.js';
import { WireError } from '../../src/member/proto-reader.js';
import { ProtoWriter } from '../../src/member/proto-writer.js';
import { memberProto, referenceDecode, referenceEncode } from '../member/proto-wire.js';
import { plain } from '../plain.js';

const AdminCallType = memberProto.lookupType('mq.member.AdminCall');
const AdminAnswerType = memberProto.lookupType('mq.member.AdminAnswer');

const STEPS: AdminStep[] = [
  { op: 'propose', command: new Uint8Array([1, 2, 3]) },
  { op: 'acked', index: 2 ** 40, waitMs: 1_500 },
  { op: 'transfer', spool: 'acme:jobs', to: 'n2' },
  { op: 'addMember', id: 'n4', address: '10.0.0.4:7000' },
  { op: 'removeMember', id: 'n3' },
  { op: 'moveOff', id: 'n3', allowShrink: true },
  { op: 'payloads', group: 'spool:acme:jobs#3', items: [[1, 2, 0], [7, 2 ** 33, 512]] },
  { op: 'acked', index: 3, waitMs: 0 }, // a wait of 0 (at once) is the field left out
];

const ANSWERS: { [O in AdminOp]: AdminAnswers[O] } = {
  propose: { result: { kind: 'conflict', why: 'a move runs' }, index: 42 },
  acked: { acked: true },
  transfer: {},
  addMember: {},
  removeMember: {},
  moveOff: {},
  payloads: { chunks: [new Uint8Array([9, 8]), null, new Uint8Array(0)], sums: [5, null, 0], missing: [1] },
};


function roundTrip<O extends AdminOp>(op: O): AdminAnswers[O] {
  return decodeAdminAnswer(op, encodeAdminAnswer(op, { answer: ANSWERS[op] }));
}

describe('admin steps', () => {
  it('round-trip every step and its answer', () => {
    for (const step of STEPS) {
      expect(plain(decodeAdminStep(encodeAdminStep(step)))).toEqual(plain(step));
      expect(plain(roundTrip(step.op))).toEqual(plain(ANSWERS[step.op]));
    }
    for (const kind of ['ok', 'exists', 'not_found', 'not_initialized'] as const) {
      const answer = { result: { kind }, index: 0 };
      expect(decodeAdminAnswer('propose', encodeAdminAnswer('propose', { answer }))).toEqual(answer);
    }
    const limit = { result: { kind: 'limit', what: 'keys' } as const, index: 1 };
    expect(decodeAdminAnswer('propose', encodeAdminAnswer('propose', { answer: limit }))).toEqual(limit);
  });

  it('send a fractional wait (a monotonic clock\'s) as whole milliseconds, rounded up', () => {
    const step = { op: 'acked', index: 7, waitMs: 1999.2 } as const;
    expect(decodeAdminStep(encodeAdminStep(step))).toEqual({ op: 'acked', index: 7, waitMs: 2000 });
  });

  it('agree with protobufjs reading proto/member.proto, both ways', () => {
    for (const step of STEPS) {
      const reference = referenceDecode(AdminCallType, encodeAdminStep(step));
      expect(reference['step']).toBe(step.op);
      expect(plain(decodeAdminStep(referenceEncode(AdminCallType, reference)))).toEqual(plain(step));
      const answer = encodeAdminAnswer(step.op, { answer: ANSWERS[step.op] });
      const back = referenceEncode(AdminAnswerType, referenceDecode(AdminAnswerType, answer));
      expect(plain(decodeAdminAnswer(step.op, back))).toEqual(plain(ANSWERS[step.op]));
    }
    const moveOff = referenceDecode(AdminCallType, encodeAdminStep(STEPS[5]!));
    expect(moveOff['moveOff']).toEqual({ id: 'n3', allowShrink: true });
  });

  it('carry a failed step as its MqError', () => {
    const error = new MqError('conflict', 'member n1 is the metadata only voter', { spools: 2 });
    const bytes = encodeAdminAnswer('removeMember', { error });
    expect(() => decodeAdminAnswer('removeMember', bytes)).toThrow(error);
  });

  it('refuse what does not decode, saying why', () => {
    const refused = (bytes: Uint8Array, why: RegExp): void => {
      expect(() => decodeAdminStep(bytes)).toThrow(WireError);
      expect(() => decodeAdminStep(bytes)).toThrow(why);
    };
    refused(new Uint8Array(0), /names no step/);
    refused(Buffer.from('{"op":"propose"}'), /admin step|truncated|wire type/);
    const two = Buffer.concat([encodeAdminStep(STEPS[1]!), encodeAdminStep(STEPS[4]!)]);
    refused(two, /more than one step/);
    const w = new ProtoWriter();
    w.end(w.begin(9));
    refused(w.take(), /unknown admin step 9/);
    refused(encodeAdminStep({ op: 'transfer', spool: 'a:b', to: '' }), /without a member/);
    refused(encodeAdminStep({ op: 'propose', command: new Uint8Array(0) }), /without a command/);
    const items = Array.from({ length: PAYLOAD_ITEMS_MAX + 1 }, () => [1, 1, 0] as const);
    refused(encodeAdminStep({ op: 'payloads', group: 'g', items }), /more than 256 items/);
    expect(PAYLOAD_ITEMS_MAX).toBe(256);
  });

  it('refuse answers that do not fit the step', () => {
    const acked = encodeAdminAnswer('acked', { answer: { acked: true } });
    expect(() => decodeAdminAnswer('propose', acked)).toThrow(/answer to propose holds field 2/);
    expect(() => decodeAdminAnswer('propose', new Uint8Array(0))).toThrow(/without its result/);
    const w = new ProtoWriter();
    const answer = w.begin(7);
    const chunk = w.begin(1);
    w.bytes(1, new Uint8Array([1]));
    w.end(chunk);
    w.end(answer);
    expect(() => decodeAdminAnswer('payloads', w.take())).toThrow(/with its checksum/);
    const odd = new ProtoWriter();
    const propose = odd.begin(1);
    const outcome = odd.begin(1);
    odd.string(1, 'maybe');
    odd.end(outcome);
    odd.end(propose);
    expect(() => decodeAdminAnswer('propose', odd.take())).toThrow(/unknown metadata outcome/);
  });

  it('bound the missing indexes of a payload answer, packed or one by one', () => {
    const answerOf = (packed: boolean): Uint8Array => {
      const w = new ProtoWriter();
      const answer = w.begin(7);
      const run = packed ? w.begin(2) : -1;
      for (let i = 0; i <= PAYLOAD_ITEMS_MAX; i++) {
        if (!packed) w.tag(2, 0);
        w.varint(i);
      }
      if (packed) w.end(run);
      w.end(answer);
      return w.take();
    };
    expect(() => decodeAdminAnswer('payloads', answerOf(true))).toThrow(/more than 256/);
    expect(() => decodeAdminAnswer('payloads', answerOf(false))).toThrow(/too many missing/);
  });
});
