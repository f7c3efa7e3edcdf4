import { describe, expect, it } from 'vitest';
import { MetaCodecError } from '../../src/cluster/meta-bytes.js';
import type { MetaCommand } from '../../src/cluster/meta-commands.js';
import { KEYS_PER_ACCOUNT_MAX, SPOOLS_PER_ACCOUNT_MAX, resolveAccountPlan } from '../../src/cluster/meta-commands.js';
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
    expect(state.spools.get('default')).toEqual({ name: 'default', replicas: ['n1', 'n2', 'n3'], gen: 1, moving: null });
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
    const account = { id: 'a', state: 'active', plan: 'default' } as const;
    expect(state.apply({ type: 'putAccount', account })).toEqual({ kind: 'not_found' });
    expect(state.apply({ type: 'createAccount', account, defaultReplicas: ['n1'] })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'createAccount', account, defaultReplicas: ['n1'] })).toEqual({ kind: 'exists' });
    expect(state.spools.get('a/default')?.replicas).toEqual(['n1']);
    expect(state.apply({ type: 'putKey', key: { hash, accountId: 'a', blocked: false } })).toEqual({ kind: 'ok' });
    expect(state.keys.size).toBe(1);
    expect(state.apply({ type: 'deleteKey', hash })).toEqual({ kind: 'ok' });
    expect(state.keys.size).toBe(0);
  });

  it('encodes the same bytes on a replica restored from a snapshot as on one that applied the log', () => {
    const applied = new MetaState();
    applied.apply(init(secretA));
    for (const name of ['b', 'a']) applied.apply({ type: 'createSpool', name, replicas: ['n1', 'n2'] });
    const account = { id: 'acct', state: 'blocked', plan: 'default' } as const;
    applied.apply({ type: 'createAccount', account, defaultReplicas: ['n1'] });
    applied.apply({ type: 'putKey', key: { hash: new Uint8Array(32).fill(3), accountId: 'acct', blocked: true } });
    const restored = MetaState.decode(applied.encode());
    // Maps fill in another order after a restore; the encoding does not depend on it.
    for (const state of [applied, restored]) {
      state.apply({ type: 'createSpool', name: 'c', replicas: ['n3'] });
      state.apply({ type: 'createAccount', account: { ...account, id: 'aaa' }, defaultReplicas: ['n2'] });
    }
    expect(Buffer.from(restored.encode()).equals(Buffer.from(applied.encode()))).toBe(true);
    expect(restored.secret).toEqual(secretA);
    expect([...restored.spools.values()].sort((x, y) => x.gen - y.gen).map((spool) => [spool.name, spool.gen])).toEqual([
      ['default', 1],
      ['b', 2],
      ['a', 3],
      ['acct/default', 4],
      ['c', 5],
      ['aaa/default', 6],
    ]);
    expect(restored.accounts.get('acct')).toEqual(account);
    expect(restored.keys.size).toBe(1);
  });

  it('keeps plans, account states and key blocks; bounds keys and spools per account', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    const plan = resolveAccountPlan({ queuesPerSpoolMax: 2, requestsPerSecond: 10 });
    expect(state.apply({ type: 'createAccount', account: { id: 'a', state: 'active', plan: 'pro' }, defaultReplicas: ['n1'] })).toEqual({ kind: 'not_found' });
    expect(state.apply({ type: 'putPlan', name: 'pro', plan })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'createAccount', account: { id: 'a', state: 'active', plan: 'pro' }, defaultReplicas: ['n1'] })).toEqual({ kind: 'ok' });
    expect(state.planOfSpool('a/default')).toEqual(plan);
    expect(state.planOfSpool('default')).toBeNull();
    expect(state.apply({ type: 'putAccount', account: { id: 'a', state: 'suspended', plan: 'default' } })).toEqual({ kind: 'ok' });
    expect(state.planOfSpool('a/default')?.requestsPerSecond).toBe(0);
    expect(state.apply({ type: 'createSpool', name: 'ghost/x', replicas: ['n1'] })).toEqual({ kind: 'not_found' });
    for (let i = 1; i < SPOOLS_PER_ACCOUNT_MAX; i++) {
      expect(state.apply({ type: 'createSpool', name: `a/s${i}`, replicas: ['n1'] })).toEqual({ kind: 'ok' });
    }
    expect(state.apply({ type: 'createSpool', name: 'a/one-more', replicas: ['n1'] })).toEqual({ kind: 'limit', what: 'spools per account' });
    expect(state.apply({ type: 'deleteSpool', name: 'a/s1' })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'createSpool', name: 'a/one-more', replicas: ['n1'] })).toEqual({ kind: 'ok' });
    const hashes = Array.from({ length: KEYS_PER_ACCOUNT_MAX + 1 }, (_, i) => new Uint8Array(32).fill(0).map((_, j) => (j === 0 ? i & 255 : j === 1 ? i >> 8 : 7)));
    for (const hash of hashes.slice(0, -1)) {
      expect(state.apply({ type: 'putKey', key: { hash, accountId: 'a', blocked: false } })).toEqual({ kind: 'ok' });
    }
    expect(state.apply({ type: 'putKey', key: { hash: hashes.at(-1)!, accountId: 'a', blocked: false } })).toEqual({ kind: 'limit', what: 'keys per account' });
    expect(state.apply({ type: 'putKey', key: { hash: hashes[0]!, accountId: 'a', blocked: false } })).toEqual({ kind: 'exists' });
    expect(state.apply({ type: 'setKeyBlocked', hash: hashes[0]!, blocked: true })).toEqual({ kind: 'ok' });
    // putPlan, createAccount, putAccount: each a plan epoch (the version a spool's setPlan carries).
    expect(state.planEpoch).toBe(3);
    const restored = MetaState.decode(state.encode());
    expect(restored.planEpoch).toBe(3);
    // Decoded from the chunks a snapshot is stored in (values straddling them): the same state.
    const bytes = state.encode();
    for (const chunkBytes of [1, 7, 64, bytes.length - 1]) {
      const chunks: Uint8Array[] = [new Uint8Array(0)];
      for (let at = 0; at < bytes.length; at += chunkBytes) chunks.push(bytes.subarray(at, at + chunkBytes));
      expect(MetaState.decode(chunks).encode()).toEqual(bytes);
    }
    expect(() => MetaState.decode([bytes, new Uint8Array([0])])).toThrow(/trailing/);
    expect(() => MetaState.decode([bytes.subarray(0, 9), bytes.subarray(9, -1)])).toThrow(MetaCodecError);
    expect([...restored.keys.values()].filter((key) => key.blocked)).toHaveLength(1);
    expect(restored.plans.get('pro')).toEqual(plan);
    // Derived counts survive the restore: the bounds still hold.
    expect(restored.apply({ type: 'putKey', key: { hash: hashes.at(-1)!, accountId: 'a', blocked: false } })).toEqual({ kind: 'limit', what: 'keys per account' });
    expect(restored.apply({ type: 'createSpool', name: 'a/two-more', replicas: ['n1'] })).toEqual({ kind: 'limit', what: 'spools per account' });
  });

  it('round-trips an uninitialized state and refuses garbage', () => {
    const empty = MetaState.decode(new MetaState().encode());
    expect(empty.initialized).toBe(false);
    expect(() => MetaState.decode(new Uint8Array([1, 2, 3, 4, 5, 6]))).toThrow(MetaCodecError);
    const good = new MetaState().encode();
    expect(() => MetaState.decode(good.subarray(0, good.length - 2))).toThrow(MetaCodecError);
  });

  it('adds members with their addresses and removes one only while it holds no replica', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    expect(state.apply({ type: 'addMember', id: 'n4', address: 'h4:7001' })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'addMember', id: 'n4', address: 'h4:7001' })).toEqual({ kind: 'exists' });
    expect(state.members).toEqual(['n1', 'n2', 'n3', 'n4']);
    const restored = MetaState.decode(state.encode());
    expect(restored.addresses.get('n4')).toBe('h4:7001');
    state.apply({ type: 'createSpool', name: 'on4', replicas: ['n4'] });
    expect(state.apply({ type: 'removeMember', id: 'n4' })).toEqual({ kind: 'limit', what: 'replicas on n4' });
    state.apply({ type: 'deleteSpool', name: 'on4' });
    expect(state.apply({ type: 'removeMember', id: 'n4' })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'removeMember', id: 'n4' })).toEqual({ kind: 'not_found' });
    expect(state.members).toEqual(['n1', 'n2', 'n3']);
    expect(state.addresses.size).toBe(0);
  });

  it('remembers removed members (refused by name) until they are added again', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    state.apply({ type: 'addMember', id: 'n5', address: 'h5:7001' });
    state.apply({ type: 'addMember', id: 'n4', address: 'h4:7001' });
    expect(state.removed).toEqual([]);
    expect(state.apply({ type: 'removeMember', id: 'n5' })).toEqual({ kind: 'ok' });
    expect(state.apply({ type: 'removeMember', id: 'n4' })).toEqual({ kind: 'ok' });
    expect(state.removed).toEqual(['n4', 'n5']);
    expect(MetaState.decode(state.encode()).removed).toEqual(['n4', 'n5']);
    state.apply({ type: 'addMember', id: 'n4', address: 'h4:7002' });
    expect(state.removed).toEqual(['n5']);
  });

  it('reads a version 5 snapshot, which had no removed members', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    const v6 = state.encode();
    // Version 5 is version 6 without the removed list (an empty one: a u16 count of 0) before
    // the end marker.
    const v5 = new Uint8Array(v6.length - 2);
    v5.set(v6.subarray(0, v6.length - 6));
    v5.set(v6.subarray(v6.length - 4), v6.length - 6);
    new DataView(v5.buffer).setUint16(4, 5);
    const restored = MetaState.decode(v5);
    expect(restored.members).toEqual(state.members);
    expect(restored.removed).toEqual([]);
  });
});

describe('replica moves', () => {
  it('records a move, keeps the replica set until it finishes, and survives a snapshot', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    state.apply({ type: 'addMember', id: 'n4', address: 'h4:7001' });
    state.apply({ type: 'createSpool', name: 's', replicas: ['n1', 'n2', 'n3'] });
    const move = { type: 'moveReplica', spool: 's', from: 'n2', to: 'n4' } as const;
    expect(state.apply(move)).toEqual({ kind: 'ok' });
    expect(state.apply(move)).toEqual({ kind: 'exists' });
    expect(state.apply({ ...move, to: '' }).kind).toBe('conflict');
    expect(state.apply({ type: 'removeMember', id: 'n4' })).toEqual({ kind: 'limit', what: 'replicas on n4' });
    const restored = MetaState.decode(state.encode());
    expect(restored.spools.get('s')).toEqual(state.spools.get('s'));
    expect(Buffer.from(restored.encode()).equals(Buffer.from(state.encode()))).toBe(true);
    expect(state.spools.get('s')!.replicas).toEqual(['n1', 'n2', 'n3']);
    expect(state.apply({ type: 'finishMove', spool: 's', from: 'n2', to: 'n3' })).toEqual({ kind: 'not_found' });
    expect(state.apply({ type: 'finishMove', spool: 's', from: 'n2', to: 'n4' })).toEqual({ kind: 'ok' });
    expect(state.spools.get('s')).toMatchObject({ replicas: ['n1', 'n4', 'n3'], moving: null });
    expect(state.apply({ type: 'finishMove', spool: 's', from: 'n2', to: 'n4' })).toEqual({ kind: 'not_found' });
  });

  it('refuses moves that make no sense', () => {
    const state = new MetaState();
    state.apply(init(secretA));
    state.apply({ type: 'createSpool', name: 's', replicas: ['n1', 'n2'] });
    state.apply({ type: 'createSpool', name: 'one', replicas: ['n1'] });
    const move = (spool: string, from: string, to: string) => state.apply({ type: 'moveReplica', spool, from, to });
    expect(move('nope', 'n1', 'n3')).toEqual({ kind: 'not_found' });
    expect(move('s', 'n3', 'n1').kind).toBe('conflict'); // from holds none
    expect(move('s', 'n1', 'n2').kind).toBe('conflict'); // to holds one
    expect(move('s', 'n1', 'n9').kind).toBe('conflict'); // not a member
    expect(move('one', 'n1', '').kind).toBe('conflict'); // the only replica
    expect(move('s', 'n1', '')).toEqual({ kind: 'ok' }); // a shrink
    state.apply({ type: 'finishMove', spool: 's', from: 'n1', to: '' });
    expect(state.spools.get('s')!.replicas).toEqual(['n2']);
  });
});

