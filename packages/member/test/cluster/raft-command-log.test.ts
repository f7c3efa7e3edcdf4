import { type ApplyResult, type Command, MqError } from '@spoolmq/engine';
import { NotPrimaryError, ManualClock } from '@spoolmq/protocol';
import { type Proposed, RaftError } from '@spoolmq/raft';
import { describe, expect, it } from 'vitest';
import { entryCommand, entryTimeMs } from '../../src/cluster/entry-codec.js';
import { type ProposalTarget, RaftCommandLog } from '../../src/cluster/raft-command-log.js';

/** A node that records proposals and answers each with what the test scripts. */
class FakeNode implements ProposalTarget {
  leading = true;
  currentTerm = 4;
  leader: string | null = 'n1';
  readonly proposed: Uint8Array[] = [];
  answer: () => Promise<Proposed> = () =>
    Promise.resolve({ index: this.proposed.length, term: this.currentTerm, result: { kind: 'ok' } satisfies ApplyResult });

  propose(data: Uint8Array): Promise<Proposed> {
    this.proposed.push(data);
    return this.answer();
  }
  isLeader(): boolean {
    return this.leading;
  }
  term(): number {
    return this.currentTerm;
  }
  leaderId(): string | null {
    return this.leader;
  }
}

const ack: Command = { type: 'ack', queueGen: 1, seq: 5, gen: 0 };

async function rejection(promise: Promise<unknown>): Promise<MqError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(MqError);
    return error as MqError;
  }
  throw new Error('expected a rejection');
}

describe('RaftCommandLog', () => {
  it('proposes [entry time | command] and resolves with the apply result', async () => {
    const clock = new ManualClock(10_000);
    const node = new FakeNode();
    const log = new RaftCommandLog('default', node, 4, clock, 0);
    expect(log.term).toBe(4);
    expect(await log.append(ack)).toEqual({ kind: 'ok' });
    expect(entryTimeMs(node.proposed[0]!)).toBe(10_000);
    expect(entryCommand(node.proposed[0]!)).toEqual(ack);
  });

  it('keeps entry times monotonic: never below the last applied or proposed time', async () => {
    const clock = new ManualClock(5_000);
    const node = new FakeNode();
    const log = new RaftCommandLog('default', node, 4, clock, 8_000);
    await log.append(ack);
    clock.set(9_000);
    await log.append(ack);
    clock.set(7_000); // a clock step backwards
    await log.append(ack);
    expect(node.proposed.map(entryTimeMs)).toEqual([8_000, 9_000, 9_000]);
  });

  it('answers notPrimary without proposing when the node no longer leads in its term', async () => {
    const node = new FakeNode();
    const log = new RaftCommandLog('default', node, 4, new ManualClock(), 0);
    node.currentTerm = 5;
    const newer = await rejection(log.append(ack));
    expect(newer).toBeInstanceOf(NotPrimaryError);
    node.leading = false;
    node.leader = 'n2';
    const follower = await rejection(log.append(ack));
    expect(follower).toMatchObject({ leaderId: 'n2' });
    expect(follower).toBeInstanceOf(NotPrimaryError);
    node.leading = true;
    node.currentTerm = 4;
    log.close();
    expect((await rejection(log.append(ack))).kind).toBe('unavailable');
    expect(node.proposed).toHaveLength(0);
  });

  it('maps a proposal that cannot be confirmed to operation_unconfirmed', async () => {
    const node = new FakeNode();
    const log = new RaftCommandLog('default', node, 4, new ManualClock(), 0);
    node.answer = () => Promise.reject(new RaftError('leadership_lost', 'lost'));
    expect((await rejection(log.append(ack))).kind).toBe('operation_unconfirmed');
    node.answer = () => Promise.reject(new RaftError('not_leader', 'no', 'n3'));
    expect(await rejection(log.append(ack))).toMatchObject({ leaderId: 'n3', kind: 'unavailable' });
    node.answer = () => Promise.reject(new RaftError('busy', 'full'));
    expect((await rejection(log.append(ack))).kind).toBe('unavailable');
    node.answer = () => Promise.resolve({ index: 1, term: 5, result: { kind: 'ok' } });
    expect((await rejection(log.append(ack))).kind).toBe('operation_unconfirmed');
  });
});
