import { MqError } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { NotPrimaryError, isNotPrimary, notPrimaryError } from '../../src/member/not-primary.js';

describe('not-primary answers', () => {
  it('are 503 unavailable carrying the hint as typed fields, not as details', () => {
    const error = notPrimaryError('default', 'm2', ['m2', 'm3']);
    expect(error).toBeInstanceOf(MqError);
    expect(error).toMatchObject({ kind: 'unavailable', status: 503, leaderId: 'm2' });
    expect(error.replicas).toStrictEqual(['m2', 'm3']);
    expect(error.details).toStrictEqual({});
    expect(error.message).toBe('this member is not the primary of spool default (primary is m2)');
    const unknown = notPrimaryError('default', null);
    expect([unknown.leaderId, unknown.replicas]).toStrictEqual([null, []]);
    expect(unknown.message).toBe('this member is not the primary of spool default (primary unknown)');
    expect(notPrimaryError('s').leaderId).toBeNull();
  });

  it('are told apart from other errors, 503s included', () => {
    expect(isNotPrimary(notPrimaryError('s', 'a'))).toBe(true);
    expect(isNotPrimary(new NotPrimaryError('m', null, []))).toBe(true);
    expect(isNotPrimary(new MqError('unavailable', 'busy'))).toBe(false);
    // The details form of earlier versions is no routing hint: nothing parses it back.
    expect(isNotPrimary(new MqError('unavailable', 'x', { notPrimary: true, leaderId: 'a' }))).toBe(false);
  });
});
