// Readable scenario scripts for the Raft core, each tied to the paper or thesis section it
// exercises. Indexes: the founding configuration occupies entries 1..n (term 1).

import { describe, expect, it } from 'vitest';
import { ConfChangeType } from '../../src/core/conf-change.js';
import { MessageType, type Message } from '../../src/types.js';
import { Harness, isType } from './harness.js';

const carries = (index: number) => (m: Message) =>
  m.type === MessageType.AppendEntries && m.entries.some((e) => e.index === index);

/** Delivers everything except what `blocked` matches (dropped), until the network is quiet. */
function settleWithout(h: Harness, blocked: (m: Message) => boolean): void {
  for (let round = 0; round < 1000; round += 1) {
    h.dropWhere(blocked);
    if (h.pending().length === 0) return;
    h.deliverWhere(() => true);
  }
  throw new Error('did not settle');
}

describe('Raft figure 8: no commit of an earlier term\'s entry by counting replicas', () => {
  it('leaves index 7 uncommitted on a majority, and why: a later leader overwrites it', () => {
    // Reference: Raft 5.4.2 and figure 8. One entry per AppendEntries so delivery is precise.
    const h = new Harness(['n1', 'n2', 'n3', 'n4', 'n5'], { config: { appendBytesMax: 1 } });

    // (a) n1 leads term 2 and replicates 'x' (index 7, term 2) to n2 only.
    h.elect('n1');
    h.tickAll(1);
    for (const id of ['n3', 'n4', 'n5']) h.cutLink('n1', id);
    h.propose('n1', 'x');
    h.stabilize();
    expect(h.core('n2').termAt(7)).toBe(2);
    expect(h.core('n3').lastIndex()).toBe(6);

    // (b) n1 crashes; n5 wins term 3 with n3 and n4, appends its Noop at 7 locally, crashes.
    h.crash('n1');
    h.heal();
    for (const id of ['n2', 'n3', 'n4']) h.tick(id, 10); // their leader stickiness runs out
    h.tick('n5', 20);
    expect(h.stabilizeUntil(() => h.core('n5').isLeader())).toBe(true);
    expect(h.core('n5').currentTerm()).toBe(3);
    expect(h.core('n5').termAt(7)).toBe(3);
    h.crash('n5'); // its appends never left

    // (c) n1 restarts and wins term 4; it brings 'x' (term 2) to a majority but its own term-4
    // entry (index 8) is lost on the way. 'x' is on n1, n2, n3, n4 and still not committed.
    h.restart('n1');
    for (let i = 0; i < 40 && !h.core('n1').isLeader(); i += 1) {
      h.tick('n1');
      h.stabilizeUntil(() => h.core('n1').isLeader());
    }
    expect(h.core('n1').currentTerm()).toBe(4);
    settleWithout(h, carries(8)); // the first appends carry 8: lost
    h.tick('n1'); // heartbeats re-probe; followers missing 7 get it, alone
    settleWithout(h, carries(8));
    for (const id of ['n1', 'n2', 'n3', 'n4']) expect(h.core(id).termAt(7)).toBe(2);
    expect(h.core('n1').commitIndex()).toBe(6);

    // (d) n1 crashes before index 8 spreads; n5 returns and wins: its last entry (7, term 3)
    // is more up to date than (7, term 2). It overwrites index 7 everywhere. Had n1 committed
    // 'x' in (c), a committed entry would now be lost.
    h.crash('n1');
    h.restart('n5');
    for (const id of ['n2', 'n3', 'n4']) h.tick(id, 10);
    for (let i = 0; i < 60 && !h.core('n5').isLeader(); i += 1) {
      h.tick('n5');
      h.stabilize();
    }
    expect(h.core('n5').isLeader()).toBe(true);
    h.tickSome(['n2', 'n3', 'n4', 'n5'], 2);
    for (const id of ['n2', 'n3', 'n4', 'n5']) {
      expect(h.core(id).termAt(7)).toBe(3);
      expect(h.appliedTexts(id)).not.toContain('x');
    }
  });

  it('(e) commits both once the leader\'s own term-4 entry reaches a majority', () => {
    const h = new Harness(['n1', 'n2', 'n3', 'n4', 'n5'], { config: { appendBytesMax: 1 } });
    h.elect('n1');
    h.tickAll(1);
    for (const id of ['n3', 'n4', 'n5']) h.cutLink('n1', id);
    h.propose('n1', 'x');
    h.stabilize();
    h.crash('n1');
    h.heal();
    h.restart('n1');
    h.tick('n2', 10);
    h.tick('n3', 10);
    h.elect('n1'); // term 3: its Noop at 8 reaches everyone this time
    h.tickAll(1);
    for (const id of ['n1', 'n2', 'n3', 'n4', 'n5']) {
      expect(h.core(id).commitIndex()).toBe(8);
      expect(h.appliedTexts(id)).toEqual(['x']);
    }
  });
});

describe('pre-vote (thesis 9.6)', () => {
  function partitionAndRejoin(preVote: boolean): Harness {
    const h = new Harness(['n1', 'n2', 'n3'], { config: { preVote } });
    h.elect('n1');
    h.tickAll(1);
    h.isolate('n3');
    h.tick('n3', 100); // n3 times out again and again while cut off
    h.heal();
    h.tickAll(3);
    return h;
  }

  it('keeps a rejoining partitioned node from disrupting the leader', () => {
    const h = partitionAndRejoin(true);
    expect(h.core('n3').currentTerm()).toBe(2); // pre-votes never raised its term
    expect(h.core('n1').isLeader()).toBe(true);
    expect(h.core('n1').currentTerm()).toBe(2);
    expect(h.core('n3').leaderId()).toBe('n1');
  });

  it('without pre-vote, the same node inflates its term and forces the leader down', () => {
    const h = partitionAndRejoin(false);
    expect(h.core('n1').currentTerm()).toBeGreaterThan(2);
    expect(h.leaders().length).toBeLessThanOrEqual(1);
  });
});

describe('check-quorum (thesis 6.2)', () => {
  it('makes an isolated leader step down within an election timeout', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    h.isolate('n1');
    h.tick('n1', 10);
    expect(h.core('n1').role()).toBe('follower');
    expect(
      h.core('n1').propose([new Uint8Array(1)]),
    ).toMatchObject({ ok: false, reason: 'not_leader' });
  });

  it('keeps leading when one follower stops and the other writes slower than a timeout', () => {
    // A rolling restart on a loaded machine: n3 stops in order while n2, alive and hearing
    // every heartbeat, takes longer than an election timeout to make its writes durable.
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    const term = h.core('n1').currentTerm();
    h.crash('n3');
    h.hold('n2');
    const proposed = h.propose('n1', 'x');
    if (!proposed.ok) throw new Error('n1 refused the proposal');
    h.stabilize();
    h.tickSome(['n1', 'n2'], 3 * h.electionTicks('n1'));
    expect(h.core('n1').isLeader()).toBe(true);
    expect(h.core('n1').hasLeaderLease()).toBe(true);
    // What n2 has not made durable counts toward no commit.
    expect(h.core('n1').commitIndex()).toBeLessThan(proposed.index);
    h.release('n2');
    h.stabilize();
    expect(h.core('n1').commitIndex()).toBe(proposed.index);
    expect(h.core('n1').currentTerm()).toBe(term);
  });

  it('a heartbeat answered at once names only what the follower holds durably', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    const durable = h.core('n2').stableIndex();
    h.hold('n2');
    h.propose('n1', 'x');
    h.stabilize();
    const before = h.delivered.length;
    h.tick('n1');
    h.stabilize();
    const acks = h.delivered
      .slice(before)
      .filter(isType(MessageType.AppendEntriesResponse))
      .filter((m) => m.from === 'n2');
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.success).toBe(true);
      expect(ack.matchIndex).toBe(durable);
    }
  });

  it('without check-quorum the isolated leader believes it leads forever', () => {
    const h = new Harness(['n1', 'n2', 'n3'], { config: { checkQuorum: false } });
    h.elect('n1');
    h.isolate('n1');
    h.tick('n1', 100);
    expect(h.core('n1').isLeader()).toBe(true);
    expect(h.core('n1').hasLeaderLease()).toBe(false);
  });
});

describe('log conflicts and fast backtracking (Raft 5.3)', () => {
  it('repairs a follower with a long divergent tail in a few round trips', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    // n1 appends 50 entries nobody else gets, then is replaced by n2.
    h.isolate('n1');
    for (let i = 0; i < 50; i += 1) h.propose('n1', `lost${i}`);
    h.tick('n1', 10); // steps down (check quorum)
    h.tickSome(['n2', 'n3'], 20);
    const leader = h.leaders()[0]!;
    expect(leader).not.toBe('n1');
    h.propose(leader, 'kept');
    h.stabilize();
    h.heal();
    const before = h.delivered.length;
    h.tickAll(3);
    const rejections = h.delivered
      .slice(before)
      .filter(isType(MessageType.AppendEntriesResponse))
      .filter((m) => m.from === 'n1' && !m.success);
    // One rejection names the divergent term; the leader skips all 50 entries at once.
    expect(rejections.length).toBeLessThanOrEqual(2);
    expect(h.appliedTexts('n1')).toEqual(['kept']);
    expect(h.core('n1').lastIndex()).toBe(h.core(leader).lastIndex());
  });
});

describe('snapshots and chunked InstallSnapshot (Raft 7)', () => {
  function laggingFollower(chunkBytes: number): Harness {
    const h = new Harness(['n1', 'n2', 'n3'], { config: { snapshotChunkBytes: chunkBytes } });
    h.elect('n1');
    h.tickAll(1);
    h.isolate('n3');
    for (let i = 0; i < 20; i += 1) h.propose('n1', `v${i}`);
    h.stabilize();
    h.tickSome(['n1', 'n2'], 1);
    h.snapshot('n1'); // compacts everything n3 is missing
    h.heal();
    return h;
  }

  it('sends a lagging follower the snapshot in chunks and it restores from it', () => {
    const h = laggingFollower(16);
    const size = h.core('n1').latestSnapshot()!.data.dataBytes;
    expect(h.core('n1').logBaseIndex()).toBe(h.core('n1').appliedIndex());
    h.tickAll(1);
    h.stabilize();
    const chunks = h.delivered
      .filter(isType(MessageType.InstallSnapshot))
      .filter((m) => m.to === 'n3');
    expect(chunks.length).toBe(Math.ceil(size / 16));
    expect(chunks.map((m) => m.offset)).toEqual(chunks.map((_, i) => i * 16));
    expect(chunks.at(-1)!.done).toBe(true);
    expect(h.restoredFrom.get('n3')).toBe(h.appliedTexts('n1').join(','));
    h.propose('n1', 'after');
    h.stabilize();
    h.tickAll(1);
    expect(h.appliedTexts('n3')).toEqual(h.appliedTexts('n1'));
    expect(h.disks.get('n3')!.snapshot!.meta.index).toBe(h.core('n1').latestSnapshot()!.meta.index);
  });

  it('resumes from the lost chunk\'s offset, not from the start', () => {
    const h = laggingFollower(16);
    h.tick('n1'); // heartbeat: n3 needs what was compacted, so the snapshot starts
    // Let two chunks through, then lose the third.
    let seen = 0;
    h.stabilizeUntil(() => {
      seen = h
        .pending()
        .filter(isType(MessageType.InstallSnapshot))
        .filter((m) => m.offset === 32).length;
      return seen > 0;
    });
    expect(h.dropWhere((m) => m.type === MessageType.InstallSnapshot && m.offset === 32)).toBe(1);
    h.stabilize();
    expect(h.restoredFrom.has('n3')).toBe(false);
    const sentBefore = h.delivered.filter(isType(MessageType.InstallSnapshot)).length;
    h.tickAll(10); // the stall timer (an election timeout) resends
    const resent = h.delivered.filter(isType(MessageType.InstallSnapshot)).slice(sentBefore);
    expect(resent[0]!.offset).toBe(32);
    expect(h.restoredFrom.get('n3')).toBe(h.appliedTexts('n1').join(','));
  });

  it('keeps trailing entries after a snapshot so a slightly lagging follower needs none', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    h.isolate('n3');
    for (let i = 0; i < 5; i += 1) h.propose('n1', `v${i}`);
    h.stabilize();
    h.tickSome(['n1', 'n2'], 1);
    h.snapshot('n1', 10);
    h.heal();
    h.tickAll(2);
    expect(h.delivered.some((m) => m.type === MessageType.InstallSnapshot)).toBe(false);
    expect(h.appliedTexts('n3')).toEqual(['v0', 'v1', 'v2', 'v3', 'v4']);
  });

  it('a leader retains behind a snapshot only what a follower lacks; a follower its bounds', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.propose('n1', 'a', 'b', 'c');
    h.stabilize();
    h.tickAll(1);
    const n3Has = h.core('n3').lastIndex();
    expect(h.core('n3').appliedIndex()).toBe(n3Has);
    h.isolate('n3');
    h.propose('n1', 'd', 'e', 'f', 'g');
    h.stabilize();
    h.tickSome(['n1', 'n2'], 1);
    expect(h.core('n1').appliedIndex()).toBeGreaterThan(n3Has);
    h.snapshot('n1', 100);
    expect(h.core('n1').logBaseIndex()).toBe(n3Has); // kept from n3's match on, not 100
    h.heal();
    h.tickAll(2);
    expect(h.delivered.some((m) => m.type === MessageType.InstallSnapshot)).toBe(false);
    expect(h.appliedTexts('n3')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);

    h.propose('n1', 'h');
    h.stabilize();
    h.tickAll(1);
    const applied = h.core('n1').appliedIndex();
    expect(h.core('n3').appliedIndex()).toBe(applied);
    h.snapshot('n1', 100);
    expect(h.core('n1').logBaseIndex()).toBe(applied); // every follower holds it all
    h.snapshot('n2', 2);
    expect(h.core('n2').logBaseIndex()).toBe(applied - 2); // n2 may lead the others next
  });

  it('a sole member retains nothing behind its snapshot', () => {
    const h = new Harness(['n1']);
    h.elect('n1');
    h.propose('n1', 'a', 'b');
    h.stabilize();
    h.snapshot('n1', 10);
    expect(h.core('n1').logBaseIndex()).toBe(h.core('n1').appliedIndex());
  });
});

describe('restart from disk', () => {
  it('recovers term, vote, log and state after every replica crashes', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.propose('n1', 'a', 'b');
    h.stabilize();
    h.tickAll(1);
    h.snapshot('n2');
    h.propose('n1', 'c');
    h.stabilize();
    h.tickAll(1);
    for (const id of ['n1', 'n2', 'n3']) h.crash(id);
    for (const id of ['n1', 'n2', 'n3']) h.restart(id);
    // Before any leader exists, each replays what its disk says is committed.
    expect(h.appliedTexts('n1')).toEqual(['a', 'b', 'c']);
    expect(h.appliedTexts('n2')).toEqual(['a', 'b', 'c']); // snapshot 'a,b' + entry 'c'
    expect(h.core('n2').logBaseIndex()).toBeGreaterThan(0);
    expect(h.core('n1').currentTerm()).toBe(2);
    expect(h.core('n2').votedFor()).toBe('n1');
    h.tickAll(20);
    expect(h.leaders().length).toBe(1);
    h.propose(h.leaders()[0]!, 'd');
    h.stabilize();
    h.tickAll(1);
    for (const id of ['n1', 'n2', 'n3']) expect(h.appliedTexts(id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('loses nothing acknowledged when a follower crashes before its fsync', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.hold('n2');
    h.propose('n1', 'a');
    h.stabilize();
    expect(h.core('n1').commitIndex()).toBe(5); // n1 + n3
    h.crash('n2'); // its copy of 'a' was never durable
    h.restart('n2');
    expect(h.core('n2').lastIndex()).toBe(4);
    h.tickAll(2);
    expect(h.appliedTexts('n2')).toEqual(['a']);
  });
});

describe('leadership transfer (thesis 3.10)', () => {
  it('hands leadership to an up-to-date voter without waiting for a timeout', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    expect(h.core('n1').transferLeadership('n2')).toMatchObject({ ok: true });
    h.stabilize();
    expect(h.leaders()).toEqual(['n2']);
    expect(h.core('n2').currentTerm()).toBe(3);
  });

  it('catches a lagging target up first and refuses proposals meanwhile', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    h.cutLink('n1', 'n3');
    h.propose('n1', 'a');
    h.stabilize();
    h.core('n1').transferLeadership('n3');
    expect(h.core('n1').propose([new Uint8Array(1)])).toMatchObject({
      ok: false,
      reason: 'transferring',
      leaderId: 'n3',
    });
    h.heal();
    h.tickAll(1);
    expect(h.leaders()).toEqual(['n3']);
    expect(h.appliedTexts('n3')).toEqual(['a']);
  });

  it('gives up after an election timeout if the target never catches up', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    h.cutLink('n1', 'n3');
    h.propose('n1', 'a');
    h.stabilize();
    h.core('n1').transferLeadership('n3');
    h.tickSome(['n1', 'n2'], 10);
    expect(h.core('n1').isLeader()).toBe(true);
    expect(h.core('n1').transferTarget()).toBeNull();
    expect(h.propose('n1', 'b').ok).toBe(true);
  });
});

describe('leadership transfer abandoned after TimeoutNow left', () => {
  it('steps down: the target may still campaign with it, past every follower\'s stickiness', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    h.core('n1').transferLeadership('n2');
    h.drain('n1');
    // TimeoutNow is in flight (delayed); the transfer times out first.
    expect(h.pending().filter(isType(MessageType.TimeoutNow)).length).toBe(1);
    h.dropWhere((m) => m.type === MessageType.TimeoutNow);
    expect(h.core('n1').hasLeaderLease()).toBe(false);
    h.tickSome(['n1', 'n2', 'n3'], 10);
    expect(h.core('n1').isLeader()).toBe(false);
    expect(h.core('n1').currentTerm()).toBe(2); // stepped down in its own term
  });
});

describe('membership changes (thesis 4.1-4.2)', () => {
  it('adds a learner, catches it up, promotes it, then removes the leader', () => {
    const h = new Harness(['n1', 'n2', 'n3'], { spares: ['n4'] });
    h.elect('n1');
    h.propose('n1', 'a');
    h.stabilize();
    h.tickAll(1);
    const add = h.core('n1').proposeConfChange({ type: ConfChangeType.AddLearner, node: 'n4' });
    expect(add.ok).toBe(true);
    // One change at a time: the next is refused until this one commits.
    expect(
      h.core('n1').proposeConfChange({ type: ConfChangeType.PromoteLearner, node: 'n4' }),
    ).toMatchObject({
      ok: false,
      reason: 'conf_change_pending',
    });
    h.drain('n1');
    h.stabilize();
    h.tickAll(2);
    expect(h.core('n1').config()).toEqual({ voters: ['n1', 'n2', 'n3'], learners: ['n4'] });
    expect(h.appliedTexts('n4')).toEqual(['a']); // caught up from the log, as a learner
    expect(h.core('n1').progressOf('n4')).toMatchObject({ state: 'replicate', learner: true });

    expect(
      h.core('n1').proposeConfChange({ type: ConfChangeType.PromoteLearner, node: 'n4' }).ok,
    ).toBe(true);
    h.drain('n1');
    h.stabilize();
    h.tickAll(1);
    expect(h.core('n4').config()).toEqual({ voters: ['n1', 'n2', 'n3', 'n4'], learners: [] });

    expect(
      h.core('n1').proposeConfChange({ type: ConfChangeType.RemoveMember, node: 'n1' }).ok,
    ).toBe(true);
    h.drain('n1');
    h.stabilize();
    // Once its removal commits, the old leader steps down and never campaigns again (4.2.2).
    expect(h.core('n1').isLeader()).toBe(false);
    h.tickAll(40);
    const leaders = h.leaders();
    expect(leaders.length).toBe(1);
    expect(leaders[0]).not.toBe('n1');
    expect(h.core('n1').role()).toBe('follower');
    h.propose(leaders[0]!, 'b');
    h.stabilize();
    h.tickAll(1);
    for (const id of ['n2', 'n3', 'n4']) expect(h.appliedTexts(id)).toEqual(['a', 'b']);
  });

  it('a learner gets the log, never campaigns, and is not promoted while behind', () => {
    const h = new Harness(['n1', 'n2', 'n3'], { spares: ['n4'] });
    h.elect('n1');
    h.tickAll(1);
    h.isolate('n4');
    h.core('n1').proposeConfChange({ type: ConfChangeType.AddLearner, node: 'n4' });
    h.drain('n1');
    h.stabilize();
    h.tickSome(['n1', 'n2', 'n3'], 1);
    expect(
      h.core('n1').proposeConfChange({ type: ConfChangeType.PromoteLearner, node: 'n4' }),
    ).toMatchObject({
      ok: false,
      reason: 'invalid_conf_change',
    });
    h.heal();
    h.tickAll(2);
    expect(h.core('n4').config().learners).toEqual(['n4']);
    // Learners never campaign, however long they wait.
    h.isolate('n4');
    h.tick('n4', 100);
    expect(h.core('n4').role()).toBe('follower');
    expect(
      h.delivered.filter(isType(MessageType.RequestVote)).some((m) => m.from === 'n4'),
    ).toBe(false);
  });

  it('a removed follower is no longer counted: two voters left commit on their own', () => {
    const h = new Harness(['n1', 'n2', 'n3']);
    h.elect('n1');
    h.tickAll(1);
    h.core('n1').proposeConfChange({ type: ConfChangeType.RemoveMember, node: 'n3' });
    h.drain('n1');
    h.stabilize();
    h.tickAll(1);
    h.crash('n3');
    h.propose('n1', 'a');
    h.stabilize();
    h.tickAll(1);
    expect(h.appliedTexts('n2')).toEqual(['a']);
  });
});
