import { describe, expect, it } from 'vitest';
import { bootstrapState } from '../../src/core/bootstrap.js';
import { RAFT_CONFIG_DEFAULTS } from '../../src/core/config.js';
import { RaftCore } from '../../src/core/raft.js';
import { EntryType, MessageType, type AppendEntries, type Message } from '../../src/types.js';
import { Harness, bytes, isType } from './harness.js';

const ids = ['n1', 'n2', 'n3'];

describe('RaftCore elections', () => {
  it('elects one leader that commits a Noop of its term (Raft 5.2, 5.4.2)', () => {
    const h = new Harness(ids);
    h.elect('n1');
    expect(h.leaders()).toEqual(['n1']);
    const term = h.core('n1').currentTerm();
    expect(term).toBe(2); // bootstrap is term 1
    for (const id of ids) {
      expect(h.core(id).currentTerm()).toBe(term);
      expect(h.core(id).leaderId()).toBe('n1');
    }
    // Bootstrap entries 1..3, then the Noop at 4, committed everywhere after a heartbeat.
    h.tickAll(1);
    for (const id of ids) expect(h.core(id).commitIndex()).toBe(4);
    expect(h.core('n1').entryAt(4).type).toBe(EntryType.Noop);
  });

  it('grants at most one vote per term and persists it before answering (Raft 5.2)', () => {
    const h = new Harness(ids, { config: { preVote: false } });
    h.hold('n2');
    while (h.core('n1').role() !== 'candidate') h.tick('n1'); // its timeout: campaigns, term 2
    h.deliverWhere((m) => m.to === 'n2');
    // n2 voted, but its vote is not durable: no response has left yet.
    expect(h.core('n2').votedFor()).toBe('n1');
    expect(h.pending().some((m) => m.from === 'n2')).toBe(false);
    h.release('n2');
    expect(h.disks.get('n2')!.hardState).toMatchObject({ term: 2, vote: 'n1' });
    expect(
      h.pending().some((m) => m.type === MessageType.RequestVoteResponse && m.from === 'n2'),
    ).toBe(true);
  });

  it('refuses a vote to a candidate whose log is behind (Raft 5.4.1)', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.isolate('n3');
    h.propose('n1', 'a');
    h.stabilize();
    h.heal();
    // n3 missed entry 'a'; once its leader stickiness ran out, it campaigns and loses.
    h.crash('n1');
    h.tick('n2', 10); // out of its leader stickiness, short of its own timeout (>= 13)
    h.tick('n3', 20); // n3 times out (timeouts < 20 ticks) and asks for pre-votes
    h.stabilize();
    const answers = h.delivered
      .filter(isType(MessageType.RequestVoteResponse))
      .filter((m) => m.from === 'n2' && m.to === 'n3');
    expect(answers.map((m) => [m.preVote, m.granted])).toEqual([[true, false]]);
    expect(h.core('n3').role()).toBe('pre-candidate');
    expect(h.core('n3').currentTerm()).toBe(2);
  });

  it('randomizes the election timeout in [T, 2T) from the injected source', () => {
    for (const [value, expected] of [
      [0.999, 19], // floor(10 + 0.999 * 10)
      [0, 10],
    ] as const) {
      const h = new Harness(['n1'], { config: { random: () => value }, ageTicks: 0 });
      const core = h.core('n1');
      // Single voter: campaigns when its timer fires, then is leader at once.
      let ticks = 0;
      while (!core.isLeader() && ticks < 100) {
        h.tick('n1');
        ticks += 1;
      }
      expect(ticks).toBe(expected);
    }
  });

  it('does not campaign when not a voter', () => {
    const core = new RaftCore(
      { ...RAFT_CONFIG_DEFAULTS, id: 'n9', random: () => 0 },
      { hardState: { term: 0, vote: null, commit: 0 }, snapshot: null, entries: [] },
    );
    for (let i = 0; i < 100; i += 1) core.tick();
    expect(core.role()).toBe('follower');
    expect(core.ready()).toBeNull();
  });
});

describe('RaftCore replication', () => {
  it('replicates proposals in order and applies them everywhere', () => {
    const h = new Harness(ids);
    h.elect('n1');
    const result = h.propose('n1', 'a', 'b');
    expect(result).toEqual({ ok: true, index: 5, term: 2 });
    h.stabilize();
    h.tickAll(1);
    for (const id of ids) expect(h.appliedTexts(id)).toEqual(['a', 'b']);
  });

  it('batches a proposal of many entries into one AppendEntries per follower', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    const before = h.delivered.length;
    h.propose('n1', 'a', 'b', 'c', 'd');
    h.stabilize();
    const appends = h.delivered
      .slice(before)
      .filter(isType(MessageType.AppendEntries))
      .filter((m) => m.entries.length > 0);
    expect(appends.map((m) => [m.to, m.entries.length])).toEqual([
      ['n2', 4],
      ['n3', 4],
    ]);
  });

  it('refuses proposals on a follower and names the leader', () => {
    const h = new Harness(ids);
    h.elect('n1');
    expect(h.core('n2').propose([bytes('x')])).toMatchObject({
      ok: false,
      reason: 'not_leader',
      leaderId: 'n1',
    });
  });

  it('commits only what a majority stored durably; the leader counts itself after fsync', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    h.isolate('n3');
    h.hold('n1'); // leader's disk is slow
    h.hold('n2');
    h.propose('n1', 'a');
    h.stabilize();
    // The leader sent before its own fsync (thesis 10.2.1) but nothing is durable anywhere.
    expect(h.core('n2').lastIndex()).toBe(5);
    expect(h.core('n1').commitIndex()).toBe(4);
    h.release('n2');
    h.stabilize();
    // n2 durable + n1 not yet: 1 of 3, no commit.
    expect(h.core('n1').commitIndex()).toBe(4);
    h.release('n1');
    h.stabilize();
    expect(h.core('n1').commitIndex()).toBe(5);
  });

  it('commits on two durable followers before the leader itself fsyncs', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    h.hold('n1');
    h.propose('n1', 'a');
    h.stabilize();
    expect(h.core('n1').commitIndex()).toBe(5);
    expect(h.core('n1').stableIndex()).toBe(4);
    h.release('n1');
  });

  it('bounds in-flight appends per follower and bytes per append', () => {
    const h = new Harness(ids, { config: { inflightMessagesMax: 2, appendBytesMax: 100 } });
    h.elect('n1');
    h.stabilize();
    h.hold('n2');
    h.hold('n3');
    // 60-byte entries (36 + 24 overhead): one per message under a 100-byte bound.
    for (let i = 0; i < 5; i += 1) h.propose('n1', 'x'.repeat(36));
    const toN2 = h.pending().filter(isType(MessageType.AppendEntries)).filter((m) => m.to === 'n2');
    expect(toN2.length).toBe(2);
    for (const m of toN2) expect(m.entries.length).toBe(1);
    h.release('n2');
    h.release('n3');
    h.stabilize();
    h.tickAll(1);
    for (const id of ids) expect(h.appliedTexts(id).length).toBe(5);
  });

  it('a lost pipeline append is repaired through the follower rejecting the gap', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    h.propose('n1', 'a');
    expect(h.dropWhere((m) => m.to === 'n3')).toBe(1);
    h.propose('n1', 'b');
    h.stabilize();
    // The pipelined append of 'b' names index 5 ('a') as previous; n3 rejects the gap and is
    // re-probed from there, without waiting for a heartbeat.
    expect(h.core('n3').lastIndex()).toBe(6);
    const rejections = h.delivered
      .filter(isType(MessageType.AppendEntriesResponse))
      .filter((m) => m.from === 'n3' && !m.success);
    expect(rejections.map((m) => [m.matchIndex, m.conflictIndex])).toEqual([[5, 5]]);
    h.tickAll(1);
    expect(h.appliedTexts('n3')).toEqual(['a', 'b']);
  });

  it('a lost last append is repaired by the next heartbeat', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    h.cutLink('n1', 'n3');
    h.propose('n1', 'a');
    h.stabilize();
    h.heal();
    expect(h.core('n3').lastIndex()).toBe(4);
    h.tickAll(1); // heartbeat with prev = 5: rejected, probe, resend
    expect(h.core('n3').lastIndex()).toBe(5);
    h.tickAll(1);
    expect(h.appliedTexts('n3')).toEqual(['a']);
  });

  it('answers a stale-term append so the old leader steps down', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    h.isolate('n1');
    h.tickSome(['n2', 'n3'], 40);
    expect(h.core('n2').isLeader() || h.core('n3').isLeader()).toBe(true);
    h.heal();
    h.propose('n1', 'stale');
    h.stabilize();
    expect(h.core('n1').isLeader()).toBe(false);
    h.tickAll(3);
    for (const id of ids) expect(h.appliedTexts(id)).not.toContain('stale');
  });
});

describe('RaftCore Ready contract', () => {
  it('hands out a hard state only when it changed, and onPersisted must go in order', () => {
    const config = { ...RAFT_CONFIG_DEFAULTS, id: 'n1', random: () => 0 };
    const core = new RaftCore(config, bootstrapState(['n1']));
    const first = core.ready();
    expect(first).not.toBeNull();
    expect(first!.hardState).toBeNull(); // loaded state unchanged
    expect(first!.committed.map((e) => e.index)).toEqual([1]);
    for (let i = 0; i < 10; i += 1) core.tick();
    const second = core.ready()!;
    expect(second.hardState).toEqual({ term: 2, vote: 'n1', commit: 1 });
    expect(() => core.onPersisted(second)).toThrow(/out of order/);
    core.onPersisted(first!);
    core.onPersisted(second);
    const third = core.ready()!;
    expect(third.committed.map((e) => e.type)).toEqual([EntryType.Noop]);
  });

  it('sends a leader append before persisting, a vote answer only after', () => {
    const h = new Harness(ids);
    h.elect('n1');
    h.stabilize();
    const core = h.core('n1');
    core.propose([bytes('a')]);
    const ready = core.ready()!;
    expect(ready.entries.length).toBe(1);
    expect(ready.messages.every((m: Message) => m.type === MessageType.AppendEntries)).toBe(true);
    expect(ready.messagesAfterPersist).toEqual([]);
    const append = ready.messages[0] as AppendEntries;
    h.core(append.to).step(append);
    const followerReady = h.core(append.to).ready()!;
    expect(followerReady.messages).toEqual([]);
    expect(followerReady.messagesAfterPersist.map((m) => m.type)).toEqual([
      MessageType.AppendEntriesResponse,
    ]);
  });
});
