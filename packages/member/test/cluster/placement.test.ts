import { describe, expect, it } from 'vitest';
import { pickReplacement, placeReplicas } from '../../src/cluster/placement.js';

describe('placeReplicas', () => {
  it('gives a spool min(N, 3) distinct members', () => {
    expect(placeReplicas('default', ['n1'])).toEqual(['n1']);
    expect(placeReplicas('default', ['n2', 'n1']).sort()).toEqual(['n1', 'n2']);
    expect(placeReplicas('default', ['n1', 'n2', 'n3']).sort()).toEqual(['n1', 'n2', 'n3']);
    for (const name of ['a', 'b', 'orders', 'x:y']) {
      const replicas = placeReplicas(name, ['n1', 'n2', 'n3', 'n4', 'n5']);
      expect(replicas).toHaveLength(3);
      expect(new Set(replicas).size).toBe(3);
    }
    expect(placeReplicas('a', ['n1', 'n2', 'n3', 'n4'], 5)).toHaveLength(4);
  });

  it('is deterministic whatever the order the members are listed in', () => {
    const members = ['n3', 'n1', 'n5', 'n2', 'n4'];
    const again = [...members].reverse();
    for (const name of ['default', 'orders', 'billing']) {
      expect(placeReplicas(name, members)).toEqual(placeReplicas(name, again));
    }
  });

  it('spreads spools over the members', () => {
    const members = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const firsts = new Set<string>();
    for (let i = 0; i < 50; i++) firsts.add(placeReplicas(`spool-${i}`, members)[0]!);
    expect(firsts.size).toBe(5);
  });

  it('refuses no members or a bad count', () => {
    expect(() => placeReplicas('a', [])).toThrow(RangeError);
    expect(() => placeReplicas('a', ['n1'], 0)).toThrow(RangeError);
  });
});

describe('pickReplacement', () => {
  it('picks the least loaded member without a replica, never an excluded one', () => {
    const members = ['n1', 'n2', 'n3', 'n4', 'n5'];
    const hosting = new Map([['n4', 5], ['n5', 2]]);
    expect(pickReplacement('s', ['n1', 'n2', 'n3'], members, hosting)).toBe('n5');
    expect(pickReplacement('s', ['n1', 'n2', 'n3'], members, hosting, new Set(['n5']))).toBe('n4');
    expect(pickReplacement('s', ['n1', 'n2', 'n3'], ['n1', 'n2', 'n3'], hosting)).toBeNull();
  });

  it('spreads ties by a hash of the spool, the same on every member', () => {
    const picks = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const pick = pickReplacement(`s${i}`, ['n1'], ['n1', 'n2', 'n3', 'n4'], new Map());
      expect(pick).toBe(pickReplacement(`s${i}`, ['n1'], ['n4', 'n3', 'n2', 'n1'], new Map()));
      picks.add(pick!);
    }
    expect(picks.size).toBeGreaterThan(1);
  });
});
