// What a replica answers to a damaged one's RepairRequest (src/core/repair.ts): only a log that
// holds the damaged end answers, only ever extending the asker's log, never past that end.

import { describe, expect, it } from 'vitest';
import { RaftLog } from '../../src/core/log.js';
import { repairAnswer, repairRequest, type RepairSource } from '../../src/core/repair.js';
import {
  EntryType,
  MessageType,
  snapshotOf,
  type Entry,
  type RepairRequest,
  type Snapshot,
} from '../../src/types.js';

function entry(index: number, term: number): Entry {
  return { index, term, type: EntryType.Normal, data: new Uint8Array([index]) };
}

/** A source whose log is base (10, term 2) then entries 11-20: terms 2 up to 15, then 3. */
function source(options: { snapshotBytes?: number } = {}): RepairSource {
  const entries: Entry[] = [];
  for (let i = 11; i <= 20; i += 1) entries.push(entry(i, i <= 15 ? 2 : 3));
  const log = new RaftLog(10, 2, entries, 12);
  const meta = { index: 10, term: 2, config: { voters: ['a', 'b', 'c'], learners: [] } };
  const snapshot: Snapshot = snapshotOf(meta, [new Uint8Array(options.snapshotBytes ?? 10)]);
  return { id: 'b', term: 4, log, snapshot, appendBytesMax: 1 << 20, snapshotChunkBytes: 4 };
}

function ask(fields: Partial<RepairRequest>): RepairRequest {
  return {
    type: MessageType.RepairRequest,
    from: 'a',
    to: 'b',
    term: 3,
    origin: 'a',
    damageIndex: 18,
    damageTerm: 3,
    lastLogIndex: 12,
    lastLogTerm: 2,
    snapshotIndex: 0,
    snapshotOffset: 0,
    ...fields,
  };
}

describe('repairAnswer', () => {
  it('sends the entries after the asker\'s last one, up to the damaged end only', () => {
    const answer = repairAnswer(source(), ask({}));
    if (answer.kind !== 'entries') throw new Error(`expected entries, got ${answer.kind}`);
    const m = answer.message;
    expect([m.to, m.from, m.term, m.repair]).toEqual(['a', 'b', 4, true]);
    expect([m.prevLogIndex, m.prevLogTerm]).toEqual([12, 2]);
    expect(m.entries.map((e) => e.index)).toEqual([13, 14, 15, 16, 17, 18]);
  });

  it('answers a relayed request to its origin', () => {
    const answer = repairAnswer(source(), ask({ from: 'c', origin: 'a' }));
    expect(answer.kind === 'entries' && answer.message.to).toBe('a');
  });

  it('passes the request on when its log lacks the damaged end (or has it in another term)', () => {
    expect(repairAnswer(source(), ask({ damageIndex: 25 })).kind).toBe('relay');
    expect(repairAnswer(source(), ask({ damageIndex: 18, damageTerm: 4 })).kind).toBe('relay');
  });

  it('never replaces what the asker holds: a disagreeing log gets nothing', () => {
    expect(repairAnswer(source(), ask({ lastLogIndex: 14, lastLogTerm: 1 })).kind).toBe('none');
    // Nothing left to give: the asker reached the damaged end already.
    expect(repairAnswer(source(), ask({ lastLogIndex: 18, lastLogTerm: 3 })).kind).toBe('none');
  });

  it('sends its snapshot in chunks, resuming at the asker\'s offset, when the asker is behind', () => {
    const first = repairAnswer(source(), ask({ lastLogIndex: 4, lastLogTerm: 1 }));
    if (first.kind !== 'snapshot') throw new Error(`expected snapshot, got ${first.kind}`);
    expect([first.send.offset, first.send.end, first.send.done]).toEqual([0, 4, false]);
    expect([first.send.to, first.send.repair]).toEqual(['a', true]);
    const last = repairAnswer(
      source(),
      ask({ lastLogIndex: 4, lastLogTerm: 1, snapshotIndex: 10, snapshotOffset: 8 }),
    );
    if (last.kind !== 'snapshot') throw new Error(`expected snapshot, got ${last.kind}`);
    expect([last.send.offset, last.send.end, last.send.done]).toEqual([8, 10, true]);
    // An offset into another snapshot starts this one over.
    const other = repairAnswer(
      source(),
      ask({ lastLogIndex: 4, lastLogTerm: 1, snapshotIndex: 7, snapshotOffset: 8 }),
    );
    expect(other.kind === 'snapshot' && other.send.offset).toBe(0);
  });

  it('does not send a snapshot past the damaged end', () => {
    const s = source();
    const beyond = { ...s, log: new RaftLog(19, 3, [entry(20, 3)], 19) };
    const meta = { index: 19, term: 3, config: { voters: ['a'], learners: [] } };
    const late = { ...beyond, snapshot: snapshotOf(meta, [new Uint8Array(4)]) };
    // The log holds index 18 no more: it cannot vouch for the damaged end.
    expect(repairAnswer(late, ask({ lastLogIndex: 4, lastLogTerm: 1 })).kind).toBe('relay');
  });
});

describe('repairRequest', () => {
  it('names the damage, the end of the log and the snapshot under way', () => {
    const log = new RaftLog(0, 0, [entry(1, 1), entry(2, 1)], 0);
    const damage = { lastIndex: 9, lastTerm: 2 };
    const request = repairRequest('a', 'b', 5, damage, log, { index: 7, offset: 3 });
    expect(request).toEqual({
      type: MessageType.RepairRequest,
      from: 'a',
      to: 'b',
      term: 5,
      origin: 'a',
      damageIndex: 9,
      damageTerm: 2,
      lastLogIndex: 2,
      lastLogTerm: 1,
      snapshotIndex: 7,
      snapshotOffset: 3,
    });
  });
});
