import { MqError } from '@spoolmq/engine';
import { describe, expect, it } from 'vitest';
import { notPrimaryError, notPrimaryHint, withoutRoutingDetails } from '../../src/member/not-primary.js';

describe('not-primary answers', () => {
  it('are 503 unavailable carrying the hints', () => {
    const error = notPrimaryError('default', 'm2', ['m2', 'm3']);
    expect(error).toMatchObject({ kind: 'unavailable', status: 503 });
    expect(error.details).toStrictEqual({ notPrimary: true, leaderId: 'm2', replicas: 'm2,m3' });
    expect(notPrimaryHint(error)).toStrictEqual({ leaderId: 'm2', replicas: ['m2', 'm3'] });
    expect(notPrimaryHint(notPrimaryError('default'))).toStrictEqual({ leaderId: null, replicas: [] });
  });

  it('are told apart from other errors, 503s included', () => {
    expect(notPrimaryHint(new MqError('unavailable', 'busy'))).toBeUndefined();
    expect(notPrimaryHint(new MqError('gone', 'x', { notPrimary: true }))).toBeUndefined();
  });

  it('lose their routing details before reaching a client, and nothing else', () => {
    const stripped = withoutRoutingDetails(new MqError('unavailable', 'm', { notPrimary: true, leaderId: 'a', replicas: 'a', keep: 1 }));
    expect(stripped.details).toStrictEqual({ keep: 1 });
    expect(stripped.message).toBe('m');
    const plain = new MqError('gone', 'g', { reason: 'stale' });
    expect(withoutRoutingDetails(plain)).toBe(plain);
  });
});
