import { MqError } from '@spoolmq/engine';
import { NotPrimaryError } from '@spoolmq/protocol';
import { RaftError } from '@spoolmq/raft';
import { describe, expect, it } from 'vitest';
import { notPrimary, proposalError } from '../../src/cluster/cluster-errors.js';

describe('cluster errors', () => {
  it('notPrimary is a 503 with the hint when known', () => {
    const withLeader = notPrimary('default', 'n2');
    expect(withLeader.kind).toBe('unavailable');
    expect(withLeader.status).toBe(503);
    expect(withLeader).toBeInstanceOf(NotPrimaryError);
    expect(withLeader).toMatchObject({ leaderId: 'n2', replicas: [], details: {} });
    expect(notPrimary('default', null)).toMatchObject({ leaderId: null, replicas: [] });
    expect(notPrimary('s', null, ['n1', 'n4'])).toMatchObject({ leaderId: null, replicas: ['n1', 'n4'] });
  });

  it('maps RaftError kinds: nothing appended -> 503, outcome unknown -> 500 operation_unconfirmed', () => {
    const cases: [RaftError, boolean, string, boolean][] = [
      [new RaftError('not_leader', 'x', 'n3'), true, 'unavailable', true],
      [new RaftError('busy', 'x'), true, 'unavailable', false],
      [new RaftError('leadership_lost', 'x'), true, 'operation_unconfirmed', false],
      [new RaftError('closed', 'x'), false, 'unavailable', false],
      [new RaftError('closed', 'x'), true, 'operation_unconfirmed', false],
    ];
    for (const [error, accepted, kind, hinted] of cases) {
      const mapped = proposalError('default', error, accepted);
      expect(mapped.kind, error.kind).toBe(kind);
      expect(mapped instanceof NotPrimaryError, error.kind).toBe(hinted);
    }
    expect(proposalError('default', new RaftError('not_leader', 'x', 'n3'), true)).toMatchObject({ leaderId: 'n3' });
  });

  it('passes MqError through and turns other failures into internal or unconfirmed', () => {
    const own = new MqError('spool_full', 'full');
    expect(proposalError('default', own, true)).toBe(own);
    expect(proposalError('default', new Error('disk'), false).kind).toBe('internal');
    expect(proposalError('default', new Error('disk'), true).kind).toBe('operation_unconfirmed');
  });
});
