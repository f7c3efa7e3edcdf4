// Leader lease (thesis 6.4.1) and the leader stickiness it rests on (thesis 4.2.3).

import { describe, expect, it } from 'vitest';
import { MessageType } from '../../src/types.js';
import { Harness, isType } from './harness.js';

const ids = ['n1', 'n2', 'n3'];

describe('leader lease', () => {
  it('holds once a quorum acknowledged a recent heartbeat and the Noop committed', () => {
    const h = new Harness(ids);
    h.elect('n1');
    expect(h.core('n1').hasLeaderLease()).toBe(true);
    expect(h.core('n2').hasLeaderLease()).toBe(false);
  });

  it('runs out leaseTicks after the last acknowledged send, before anyone may be elected', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.tickAll(1);
    h.isolate('n1');
    let held = 0;
    while (h.core('n1').hasLeaderLease() && held < 100) {
      h.tick('n1');
      held += 1;
    }
    // Acked sends are from the last round (tick t); the lease lasts while now - t < 8.
    expect(held).toBe(8);
    expect(h.core('n1').isLeader()).toBe(true); // still leader, just no lease
  });

  it('is dropped while leadership is being transferred', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.cutLink('n1', 'n3'); // keep n3 behind so the transfer waits
    h.propose('n1', 'a');
    h.stabilize();
    expect(h.core('n1').transferLeadership('n3').ok).toBe(true);
    expect(h.core('n1').hasLeaderLease()).toBe(false);
  });

  it('stickiness: followers of a live leader ignore campaigns, even in a later term', () => {
    const h = new Harness(ids);
    h.elect('n1');
    // n3 stops hearing from n1 (one-way cut) but still reaches n2; logs are equal.
    h.cutLink('n1', 'n3');
    for (let round = 0; round < 40; round += 1) {
      h.tickAll(1);
      // Election safety plus the lease: nobody leads a later term while n1 holds its lease.
      if (h.core('n1').hasLeaderLease()) {
        for (const id of ['n2', 'n3']) expect(h.core(id).isLeader()).toBe(false);
      }
    }
    // n2 keeps hearing from n1, so it ignores n3's campaigns: n1 stays leader throughout.
    expect(h.core('n1').isLeader()).toBe(true);
    expect(h.core('n2').leaderId()).toBe('n1');
    const grants = h.delivered
      .filter(isType(MessageType.RequestVoteResponse))
      .filter((m) => m.from === 'n2' && m.to === 'n3' && m.granted);
    expect(grants).toEqual([]);
  });

  it('a restarted follower refuses votes for an election timeout (it may have acked)', () => {
    const h = new Harness(ids, { config: { preVote: false } });
    h.elect('n1');
    h.crash('n2');
    h.restart('n2');
    h.isolate('n1');
    // n3 campaigns at once (no pre-vote): n2 just restarted and must not help it yet.
    h.tick('n3', 20);
    h.stabilize();
    expect(h.core('n3').isLeader()).toBe(false);
    expect(h.core('n2').currentTerm()).toBe(2);
  });
});
