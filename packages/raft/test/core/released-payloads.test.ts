// With releaseAppliedPayloads a leader drops the payloads of applied entries every follower
// holds and keeps the rest; a follower keeps only a tail of its newest applied ones; a replica
// that needs dropped ones gets a snapshot.

import { describe, expect, it } from 'vitest';
import { ConfChangeType } from '../../src/core/conf-change.js';
import { EntryType, MessageType, type Message } from '../../src/types.js';
import { Harness } from './harness.js';

const RELEASE = { config: { releaseAppliedPayloads: true } } as const;

/** Payload bytes the normal entries of `id`'s in-memory log hold, index by index. */
function heldBytes(h: Harness, id: string): number[] {
  const core = h.core(id);
  const out: number[] = [];
  for (let index = core.logBaseIndex() + 1; index <= core.lastIndex(); index += 1) {
    const entry = core.entryAt(index);
    if (entry.type === EntryType.Normal) out.push(entry.data.byteLength);
  }
  return out;
}

/** Normal entries with no payload that reached `to` in an AppendEntries. */
function emptySent(h: Harness, to: string): number {
  let count = 0;
  for (const m of h.delivered as Message[]) {
    if (m.type !== MessageType.AppendEntries || m.to !== to) continue;
    for (const e of m.entries) if (e.type === EntryType.Normal && e.data.byteLength === 0) count++;
  }
  return count;
}

/**
 * `leader` proposes `texts`; they commit and every replica applies them (followers learn the
 * commit index with the next heartbeat, a tick later).
 */
function commitEverywhere(h: Harness, leader: string, ...texts: string[]): void {
  h.propose(leader, ...texts);
  h.stabilize();
  h.tickAll(2);
}

describe('released payloads', () => {
  it('a sole leader holds no payload once applied; without the setting it keeps them', () => {
    for (const release of [true, false]) {
      const h = new Harness(['n1'], release ? RELEASE : {});
      h.elect('n1');
      h.propose('n1', 'alpha', 'beta');
      h.stabilize();
      expect(h.appliedTexts('n1')).toEqual(['alpha', 'beta']);
      expect(heldBytes(h, 'n1')).toEqual(release ? [0, 0] : [5, 4]);
      expect(h.core('n1').snapshotWanted()).toBe(false);
    }
  });

  it('keeps what a follower lacks; a follower keeps its newest applied payloads', () => {
    const tail = { payloadTailEntries: 2, payloadTailBytes: 1_000 };
    const h = new Harness(['n1', 'n2', 'n3'], { config: { ...RELEASE.config, ...tail } });
    h.elect('n1');
    h.propose('n1', 'a');
    h.stabilize();
    expect(heldBytes(h, 'n1')).toEqual([0]);
    h.cutLink('n1', 'n3');
    h.propose('n1', 'bb');
    h.stabilize();
    expect(h.appliedTexts('n1')).toEqual(['a', 'bb']); // committed by n1 and n2
    expect(heldBytes(h, 'n1')).toEqual([0, 2]); // n3 still lacks it
    expect(heldBytes(h, 'n2')).toEqual([1, 2]);
    h.heal();
    h.tickAll(3);
    commitEverywhere(h, 'n1', 'ccc');
    expect(h.appliedTexts('n3')).toEqual(['a', 'bb', 'ccc']);
    expect(heldBytes(h, 'n1')).toEqual([0, 0, 0]);
    // The two newest applied entries (the no-op of n1's term counts among them).
    expect(heldBytes(h, 'n3')).toEqual([0, 2, 3]);
    expect(emptySent(h, 'n3')).toBe(0);
  });

  it('a follower keeps at most payloadTailBytes of payloads', () => {
    const tail = { payloadTailEntries: 100, payloadTailBytes: 4 };
    const h = new Harness(['n1', 'n2'], { config: { ...RELEASE.config, ...tail } });
    h.elect('n1');
    commitEverywhere(h, 'n1', 'a', 'bb', 'ccc');
    expect(h.appliedTexts('n2')).toEqual(['a', 'bb', 'ccc']);
    expect(heldBytes(h, 'n2')).toEqual([0, 0, 3]);
  });

  it('a follower that leads next sends its tail, and a snapshot to a peer behind it', () => {
    const tail = { payloadTailEntries: 1, payloadTailBytes: 1_000 };
    const h = new Harness(['n1', 'n2', 'n3'], { config: { ...RELEASE.config, ...tail } });
    h.elect('n1');
    h.propose('n1', 'a');
    h.stabilize();
    h.isolate('n3');
    commitEverywhere(h, 'n1', 'b', 'c');
    expect(h.appliedTexts('n2')).toEqual(['a', 'b', 'c']);
    expect(heldBytes(h, 'n2')).toEqual([0, 0, 1]);
    h.crash('n1');
    h.heal();
    // n3 lacks 'b' and 'c', so only n2 can win an election.
    for (let i = 0; i < 100 && h.leaders().length === 0; i += 1) {
      h.tickAll(1);
    }
    expect(h.leaders()).toEqual(['n2']);
    h.tickAll(3);
    // n3 lacks 'b', released on n2: nothing is sent until a snapshot covers it.
    expect(h.core('n2').snapshotWanted()).toBe(true);
    expect(emptySent(h, 'n3')).toBe(0);
    h.snapshot('n2');
    h.tickAll(3);
    expect(h.restoredFrom.get('n3')).toBe('a,b,c');
    commitEverywhere(h, 'n2', 'd');
    expect(h.appliedTexts('n3')).toEqual(['a', 'b', 'c', 'd']);
    expect(emptySent(h, 'n3')).toBe(0);
  });

  it('a member added later gets a snapshot the leader asks for, never an empty payload', () => {
    const h = new Harness(['n1'], { ...RELEASE, spares: ['n2'] });
    h.elect('n1');
    h.propose('n1', 'a', 'b');
    h.stabilize();
    const add = h.core('n1').proposeConfChange({ type: ConfChangeType.AddLearner, node: 'n2' });
    expect(add.ok).toBe(true);
    h.drain('n1');
    h.stabilize();
    h.tickAll(3);
    // n2 needs entries whose payloads are gone and no snapshot covers them: nothing is sent,
    // the leader asks its driver for a snapshot.
    expect(h.appliedTexts('n2')).toEqual([]);
    expect(h.core('n1').snapshotWanted()).toBe(true);
    expect(emptySent(h, 'n2')).toBe(0);
    h.snapshot('n1');
    expect(h.core('n1').snapshotWanted()).toBe(false);
    h.tickAll(3);
    expect(h.restoredFrom.get('n2')).toBe('a,b');
    commitEverywhere(h, 'n1', 'c');
    // The snapshot's texts, then 'c' from the log.
    expect(h.appliedTexts('n2')).toEqual(['a', 'b', 'c']);
    expect(h.core('n1').progressOf('n2')).toMatchObject({ state: 'replicate' });
    expect(emptySent(h, 'n2')).toBe(0);
  });
});
