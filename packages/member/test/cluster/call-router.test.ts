// The call router on a fake member: a call runs on the local host, or is forwarded to the
// primary named by the replica or by the metadata's replica set, as a typed route; hostFor turns
// a forward into the wire's not-primary error. A spool whose engine lags its plan is forwarded
// to this member itself (retry here) while the plan is proposed.

import { describe, expect, it } from 'vitest';
import { MqError, SpoolEngine } from '@spoolmq/engine';
import { NotPrimaryError } from '@spoolmq/protocol';
import { CallRouter, type RouterHost } from '../../src/cluster/call-router.js';
import type { MetaState } from '../../src/cluster/meta-state.js';
import type { ReplicaRoute } from '../../src/cluster/spool-replica.js';
import type { SpoolHost } from '../../src/host/spool-host.js';

const HOST = { name: 'a host' } as unknown as SpoolHost;

function fixture(replicaRoute: ReplicaRoute | null, behind = false) {
  const reconciled: string[] = [];
  const state = { closing: false, initialized: true };
  const host: RouterHost = {
    id: 'n1',
    isClosing: () => state.closing,
    replica: (spool) =>
      spool === 'a' && replicaRoute !== null ? { route: () => replicaRoute, engine: new SpoolEngine() } : undefined,
    metaState: () => ({
      initialized: state.initialized,
      spools: new Map([
        ['a', { replicas: ['n1', 'n2'] }],
        ['b', { replicas: ['n2', 'n3'] }],
      ]) as unknown as MetaState['spools'],
    }),
    plans: { behind: () => behind, reconcile: (spool) => void reconciled.push(spool) },
  };
  return { router: new CallRouter(host), reconciled, state };
}

describe('CallRouter', () => {
  it('routes to the local host while this member serves the spool', () => {
    const { router } = fixture({ kind: 'local', host: HOST });
    expect(router.route('a')).toEqual({ kind: 'local', host: HOST });
    expect(router.hostFor('a')).toBe(HOST);
  });

  it('forwards to the leader the replica knows, or to the replica set the metadata lists', () => {
    const { router } = fixture({ kind: 'forward', member: 'n2' });
    expect(router.route('a')).toEqual({ kind: 'forward', member: 'n2', replicas: [] });
    expect(router.route('b')).toEqual({ kind: 'forward', member: null, replicas: ['n2', 'n3'] });
    const error = (() => {
      try {
        router.hostFor('b');
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(NotPrimaryError);
    expect(error).toMatchObject({ kind: 'unavailable', leaderId: null, replicas: ['n2', 'n3'] });
  });

  it('sends a call for a spool whose plan is not logged yet back here, and proposes the plan', () => {
    const { router, reconciled } = fixture({ kind: 'local', host: HOST }, true);
    expect(router.route('a')).toEqual({ kind: 'forward', member: 'n1', replicas: [] });
    expect(reconciled).toEqual(['a']);
  });

  it('answers with an error where a call runs nowhere', () => {
    const f = fixture(null);
    expect(() => f.router.route('zzz')).toThrow(expect.objectContaining({ kind: 'spool_not_found' }));
    expect(() => f.router.route('a')).toThrow(/spool a is starting/);
    f.state.initialized = false;
    expect(() => f.router.route('b')).toThrow(/metadata is not loaded/);
    f.state.closing = true;
    expect(() => f.router.route('b')).toThrow(MqError);
    expect(() => f.router.route('b')).toThrow(/member n1 is closing/);
  });
});
