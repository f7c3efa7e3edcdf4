// A replica whose storage is lost (a wiped data directory) comes back with the founding state
// only, as a member with empty storage bootstraps. It may have acknowledged entries that a leader
// then counted as committed: if it voted like a replica that never held anything, a candidate
// lacking those entries could win with its vote and erase them. The chaos harness's `wipe` fault
// does this to real members; these scripts show the core rules at the lowest level: the leader
// rebuilds a follower that lost acknowledged entries (Progress lowers `match`), and with
// `guardLostStorage` (what members run with) the wiped replica votes for no log past founding
// until it has caught up.

import { describe, expect, it } from 'vitest';
import { bootstrapState } from '../../src/core/bootstrap.js';
import { Harness, commitWithoutN3 } from './harness.js';

const VOTERS = ['n1', 'n2', 'n3'];

/** Crash `id`, replace its disk with the founding state (storage lost), start it again. */
function wipe(h: Harness, id: string): void {
  h.crash(id);
  const disk = h.disks.get(id)!;
  const founding = bootstrapState(VOTERS);
  disk.snapshot = null;
  disk.entries = [];
  disk.save(founding.hardState, founding.entries);
  h.restart(id);
}

describe('a replica whose storage was wiped', () => {
  it('does not elect a candidate that lacks an entry it acknowledged before the wipe', () => {
    const { h, index } = commitWithoutN3({ guardLostStorage: true });
    wipe(h, 'n2');
    h.crash('n1');
    h.heal();
    // n3 (missing 'x') campaigns for many election timeouts; the wiped n2 is its only voter.
    h.tickSome(['n2', 'n3'], 10 * h.electionTicks('n3'));
    expect(h.leaders()).toEqual([]);
    // n1 comes back: it holds 'x' and wins; n2 is rebuilt from it and 'x' survives everywhere.
    h.restart('n1');
    for (let i = 0; i < 200 && h.leaders().length === 0; i += 1) h.tickAll(1);
    h.tickAll(2);
    expect(h.leaders()).toEqual(['n1']);
    for (const id of VOTERS) {
      expect(h.core(id).termAt(index)).toBe(h.core('n1').termAt(index));
      expect(h.appliedTexts(id)).toContain('x');
    }
  });

  it('votes again once rebuilt from a leader: a later failover still elects', () => {
    const { h } = commitWithoutN3({ guardLostStorage: true });
    h.heal();
    wipe(h, 'n2');
    h.tickAll(3); // n1 rebuilds n2 (and catches n3 up)
    expect(h.appliedTexts('n2')).toContain('x');
    h.crash('n1');
    for (let i = 0; i < 200 && h.leaders().length === 0; i += 1) h.tickSome(['n2', 'n3'], 1);
    expect(h.leaders()).toHaveLength(1);
    const leader = h.leaders()[0]!;
    expect(h.appliedTexts(leader)).toContain('x');
  });

  it('lets a founding cluster elect its first leader (every log holds the founding entries)', () => {
    const h = new Harness(VOTERS, { config: { guardLostStorage: true } });
    h.elect('n2');
    expect(h.leaders()).toEqual(['n2']);
  });
});
