// A replica whose storage found some of its entries unreadable (a flipped bit, a torn record)
// drops them on load and restarts with `damage` in its hard state: it may have acknowledged them
// and a leader may have counted those acknowledgements. These scripts show the core's rules:
// while damaged it grants no vote and never campaigns, so a candidate lacking an entry it lost
// cannot win with its help; it catches up from the leader, and the damage ends (and is cleared
// durably) once it holds again what it had acknowledged, or has caught up with a newer leader.

import { describe, expect, it } from 'vitest';
import { ConfChangeType } from '../../src/core/conf-change.js';
import { MessageType, type StorageDamage } from '../../src/types.js';
import { Harness, commitWithoutN3 } from './harness.js';

const VOTERS = ['n1', 'n2', 'n3'];

/** Crash `id`, drop its entries from `fromIndex` on as a load of bad bytes would, restart it. */
function corrupt(h: Harness, id: string, fromIndex: number): StorageDamage {
  h.crash(id);
  const disk = h.disks.get(id)!;
  const last = disk.entries[disk.entries.length - 1]!;
  const damage = { lastIndex: last.index, lastTerm: last.term };
  disk.entries = disk.entries.filter((e) => e.index < fromIndex);
  const commit = Math.min(disk.hardState.commit, fromIndex - 1);
  disk.hardState = { ...disk.hardState, commit, damage };
  h.restart(id);
  return damage;
}

describe('a replica that lost entries to bad bytes', () => {
  it('does not elect a candidate that lacks an entry it acknowledged before the damage', () => {
    const { h, index } = commitWithoutN3();
    corrupt(h, 'n2', index);
    expect(h.core('n2').storageDamage()).not.toBeNull();
    h.crash('n1');
    h.heal();
    // n3 (missing 'x') campaigns for many election timeouts; the damaged n2 is its only voter,
    // and n2 itself (also missing 'x' now) never campaigns.
    h.tickSome(['n2', 'n3'], 10 * h.electionTicks('n3'));
    expect(h.leaders()).toEqual([]);
    // n1 comes back: it holds 'x' and wins; n2 is repaired from it and 'x' survives everywhere.
    h.restart('n1');
    for (let i = 0; i < 200 && h.leaders().length === 0; i += 1) h.tickAll(1);
    h.tickAll(3);
    expect(h.leaders()).toEqual(['n1']);
    for (const id of VOTERS) {
      expect(h.core(id).termAt(index)).toBe(h.core('n1').termAt(index));
      expect(h.appliedTexts(id)).toContain('x');
    }
    expect(h.core('n2').storageDamage()).toBeNull();
  });

  it('clears the damage durably once repaired, and votes again in a later failover', () => {
    const { h, index } = commitWithoutN3();
    h.heal();
    corrupt(h, 'n2', index);
    h.tickAll(3); // n1 (same term as the damage) sends 'x' back to n2
    expect(h.core('n2').lastIndex()).toBeGreaterThanOrEqual(index);
    expect(h.core('n2').storageDamage()).toBeNull();
    expect(h.disks.get('n2')!.hardState.damage ?? null).toBeNull();
    h.crash('n1');
    for (let i = 0; i < 200 && h.leaders().length === 0; i += 1) h.tickSome(['n2', 'n3'], 1);
    expect(h.leaders()).toHaveLength(1);
    expect(h.appliedTexts(h.leaders()[0]!)).toContain('x');
  });

  it('lost its snapshot and whole log with guardLostStorage: votes under the damage rule', () => {
    // Storage drops a corrupt snapshot with every entry (LevelGroupStorage.load): the log is as
    // empty as a wiped replica's, but the hard state (its vote) and the damage mark are kept,
    // so it votes for a candidate that covers the lost log instead of waiting, as a wiped one
    // must, for a leader that may never come (here the old leader is gone for good).
    const h = new Harness(VOTERS, { config: { guardLostStorage: true } });
    h.elect('n1');
    const proposed = h.propose('n1', 'x');
    if (!proposed.ok) throw new Error('n1 refused the proposal');
    h.stabilize();
    h.snapshot('n3');
    h.crash('n3');
    const disk = h.disks.get('n3')!;
    const meta = disk.snapshot!.meta;
    const last = disk.entries[disk.entries.length - 1] ?? meta;
    const damage = { lastIndex: last.index, lastTerm: last.term };
    disk.snapshot = null;
    disk.entries = [];
    disk.hardState = { ...disk.hardState, commit: 0, damage };
    h.restart('n3');
    h.crash('n1');
    for (let i = 0; i < 200 && h.leaders().length === 0; i += 1) h.tickSome(['n2', 'n3'], 1);
    expect(h.leaders()).toEqual(['n2']);
    h.tickSome(['n2', 'n3'], 3);
    expect(h.appliedTexts('n3')).toContain('x');
    expect(h.core('n3').storageDamage()).toBeNull();
  });

  it('goes on at once as a sole member (mq serve): no peer could repair it', () => {
    const h = new Harness(['solo'], { config: { soleMember: true } });
    h.elect('solo');
    const proposed = h.propose('solo', 'x');
    if (!proposed.ok) throw new Error('solo refused the proposal');
    h.stabilize();
    corrupt(h, 'solo', proposed.index);
    expect(h.core('solo').storageDamage()).toBeNull();
    for (let i = 0; i < 200 && h.leaders().length === 0; i += 1) h.tickAll(1);
    expect(h.leaders()).toEqual(['solo']);
  });

  it('does not take a log cut back to its first entries for a one-voter group', () => {
    // Simulation seed 713: the founding entries that named the other voters were among the
    // lost ones, so the log left names n1 alone; n1 must not lead that one-voter group.
    const { h } = commitWithoutN3();
    corrupt(h, 'n1', 2);
    h.crash('n2');
    h.crash('n3');
    h.tickSome(['n1'], 10 * h.electionTicks('n1'));
    expect(h.leaders()).toEqual([]);
    expect(h.core('n1').storageDamage()).not.toBeNull();
  });

  it('stays damaged across a restart until repaired (the mark is durable)', () => {
    const { h, index } = commitWithoutN3();
    const damage = corrupt(h, 'n2', index);
    h.crash('n2');
    h.restart('n2');
    expect(h.core('n2').storageDamage()).toEqual(damage);
  });

  describe('with no leader electable without it (simulation seed 696573)', () => {
    /**
     * Voters n1-n3 and learner n4; 'x' is committed by n1, n2 and held by n4, never by n3.
     * Then n1 is gone for good and n2 loses 'x' to bad bytes: n3 cannot win without n2's vote
     * (n2 must refuse it: n3 lacks 'x'), and n2 may not campaign; only n4 holds 'x' still.
     */
    function learnerHoldsTheOnlyCopy(): { h: Harness; index: number } {
      const h = new Harness(['n1', 'n2', 'n3'], { spares: ['n4'] });
      h.elect('n1');
      h.tickAll(1);
      const add = h.core('n1').proposeConfChange({ type: ConfChangeType.AddLearner, node: 'n4' });
      if (!add.ok) throw new Error('n1 refused the learner');
      h.stabilize();
      h.tickAll(1);
      h.cutLink('n1', 'n3');
      const proposed = h.propose('n1', 'x');
      if (!proposed.ok) throw new Error('n1 refused the proposal');
      h.stabilize();
      expect(h.core('n4').termAt(proposed.index)).toBe(h.core('n1').termAt(proposed.index));
      expect(h.core('n3').lastIndex()).toBeLessThan(proposed.index);
      h.crash('n1');
      h.heal();
      return { h, index: proposed.index };
    }

    it('takes its lost tail from the learner, then leads with it', () => {
      const { h, index } = learnerHoldsTheOnlyCopy();
      corrupt(h, 'n2', index);
      const alive = ['n2', 'n3', 'n4'];
      for (let i = 0; i < 500 && h.leaders().length === 0; i += 1) h.tickSome(alive, 1);
      expect(h.leaders()).toEqual(['n2']);
      const repairs = h.delivered.filter(
        (m) => m.type === MessageType.AppendEntries && m.repair === true && m.from === 'n4',
      );
      expect(repairs.length).toBeGreaterThan(0);
      h.tickSome(alive, 5);
      for (const id of alive) expect(h.appliedTexts(id)).toContain('x');
      expect(h.core('n2').storageDamage()).toBeNull();
      expect(h.disks.get('n2')!.hardState.damage ?? null).toBeNull();
    });

    it('lost its snapshot and log too: learns of the learner through a peer, takes its snapshot', () => {
      const { h, index } = learnerHoldsTheOnlyCopy();
      h.snapshot('n4');
      h.crash('n2');
      const disk = h.disks.get('n2')!;
      const last = disk.entries[disk.entries.length - 1]!;
      expect(last.index).toBe(index);
      disk.snapshot = null;
      disk.entries = [];
      disk.hardState = { ...disk.hardState, commit: 0, damage: { lastIndex: index, lastTerm: last.term } };
      h.restart('n2');
      // n2's log no longer names anyone: it hears of n3 from n3's campaigns, and n3 passes its
      // request on to n4, whose log holds the damaged end and whose snapshot covers it.
      const alive = ['n2', 'n3', 'n4'];
      for (let i = 0; i < 500 && h.leaders().length === 0; i += 1) h.tickSome(alive, 1);
      expect(h.leaders()).toEqual(['n2']);
      const relayed = h.delivered.filter(
        (m) => m.type === MessageType.RepairRequest && m.from === 'n3' && m.to === 'n4',
      );
      expect(relayed.length).toBeGreaterThan(0);
      const chunks = h.delivered.filter(
        (m) => m.type === MessageType.InstallSnapshot && m.repair === true && m.from === 'n4',
      );
      expect(chunks.length).toBeGreaterThan(0);
      h.tickSome(alive, 5);
      for (const id of alive) expect(h.appliedTexts(id)).toContain('x');
    });

    it('takes nothing from a replica whose log lacks the damaged end', () => {
      const { h, index } = learnerHoldsTheOnlyCopy();
      corrupt(h, 'n2', index);
      h.crash('n4');
      h.tickSome(['n2', 'n3'], 20 * h.electionTicks('n2'));
      expect(h.leaders()).toEqual([]);
      expect(h.core('n2').storageDamage()).not.toBeNull();
      expect(h.core('n2').lastIndex()).toBeLessThan(index);
      const asked = h.delivered.filter((m) => m.type === MessageType.RepairRequest && m.to === 'n3');
      expect(asked.length).toBeGreaterThan(0);
    });
  });
});
