import { describe, expect, it } from 'vitest';
import { MetaCodecError } from '../../src/cluster/meta-bytes.js';
import type { MetaCommand } from '../../src/cluster/meta-commands.js';
import { MetaState } from '../../src/cluster/meta-state.js';

const secretA = new Uint8Array(32).fill(1);
const secretB = new Uint8Array(32).fill(2);
const init = (secret: Uint8Array): MetaCommand => ({
  type: 'init',
  secret,
  members: ['n3', 'n1', 'n2'],
  spools: [{ name: 'default', replicas: ['n1', 'n2', 'n3'] }],
});

describe('MetaState', () => {
  it('takes the first init only, with its secret, members and default spool', () => {
    const state = new MetaState();
    expect(state.initialized).toBe(false);
    expect(state.apply(init(secretA))).toEqual({ kind: 'ok' });
    expect(state.apply(init(secretB))).toEqual({ kind: 'exists' });
    expect(state.secret).toEqual(secretA);
    expect(state.members).toEqual(['n1', 'n2', 'n3']);
    expect(state.spools.get('default')).toEqual({ name: 'default', replicas: ['n1', 'n2', 'n3'], gen: 1 });
  });

  it('refuses everything but init before init', () => {
    const state = new MetaState();
    expect(state.apply({ type: 'createSpool', name: 's', replicas: ['n1'] })).toEqual({ kind: 'not_initialized' });
    expect(state.spools.size).toBe(0);
  });

  it('creates and deletes spools, accounts and keys', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    expect(state.apply({ type: 'createSpool', name: 'default', replicas: ['n1'] })).toEqual({ kind: 'exists' });
    expect(state.apply({ type: 'createSpool', name: 's', replicas: ['n2'] })).toEqual({ kind: 'ok' });
    expect(state.spools.get('s')?.gen).toBe(2);
    expect(state.apply({ type: 'deleteSpool', name: 's' })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'deleteSpool', name: 's' })).toEqual({ kind: 'not_found' });
    // A new incarnation under the same name gets a new generation.
    state.apply({ type: 'createSpool', name: 's', replicas: ['n2'] });
    expect(state.spools.get('s')?.gen).toBe(3);
    const hash = new Uint8Array(32).fill(5);
    expect(state.apply({ type: 'putKey', key: { hash, accountId: 'a', blocked: false } })).toEqual({ kind: 'not_found' });
    const account = { id: 'a', state: 'active', plan: 'free', spools: ['default'] } as const;
    expect(state.apply({ type: 'putAccount', account })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'putKey', key: { hash, accountId: 'a', blocked: false } })).toEqual({ kind: 'ok' });
    expect(state.keys.size).toBe(1);
    expect(state.apply({ type: 'deleteKey', hash })).toEqual({ kind: 'ok' });
    expect(state.keys.size).toBe(0);
  });

  it('encodes the same bytes on a replica restored from a snapshot as on one that applied the log', () => {
    const applied = new MetaState();
    applied.apply(init(secretA));
    for (const name of ['b', 'a']) applied.apply({ type: 'createSpool', name, replicas: ['n1', 'n2'] });
    const account = { id: 'acct', state: 'blocked', plan: 'p', spools: [] } as const;
    applied.apply({ type: 'putAccount', account });
    applied.apply({ type: 'putKey', key: { hash: new Uint8Array(32).fill(3), accountId: 'acct', blocked: true } });
    const restored = MetaState.decode(applied.encode());
    // Maps fill in another order after a restore; the encoding does not depend on it.
    for (const state of [applied, restored]) {
      state.apply({ type: 'createSpool', name: 'c', replicas: ['n3'] });
      state.apply({ type: 'putAccount', account: { ...account, id: 'aaa' } });
    }
    expect(Buffer.from(restored.encode()).equals(Buffer.from(applied.encode()))).toBe(true);
    expect(restored.secret).toEqual(secretA);
    expect([...restored.spools.values()].sort((x, y) => x.gen - y.gen).map((spool) => [spool.name, spool.gen])).toEqual([
      ['default', 1],
      ['b', 2],
      ['a', 3],
      ['c', 4],
    ]);
    expect(restored.accounts.get('acct')).toEqual(account);
    expect(restored.keys.size).toBe(1);
  });

  it('round-trips an uninitialized state and refuses garbage', () => {
    const empty = MetaState.decode(new MetaState().encode());
    expect(empty.initialized).toBe(false);
    expect(() => MetaState.decode(new Uint8Array([1, 2, 3, 4, 5, 6]))).toThrow(MetaCodecError);
    const good = new MetaState().encode();
    expect(() => MetaState.decode(good.subarray(0, good.length - 2))).toThrow(MetaCodecError);
  });
});
