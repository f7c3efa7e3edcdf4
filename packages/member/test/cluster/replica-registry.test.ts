// The replica registry on fake replicas: a spool is starting, running or stopping, never two at
// once; a stop closes the replica before its storage is dropped; reconciliation starts what the
// metadata places here and drops what it placed elsewhere only once the metadata caught up;
// stale incarnations in storage are dropped; pause, resume and close.

import { describe, expect, it } from 'vitest';
import type { PlacedSpool } from '../../src/cluster/meta-state.js';
import { type RegistryHost, ReplicaRegistry } from '../../src/cluster/replica-registry.js';
import { spoolGroup } from '../../src/cluster/spool-replica.js';

interface FakeReplica {
  readonly group: string;
  readonly gen: number;
  closed: boolean;
  close(): Promise<void>;
}

interface Opening {
  readonly spool: string;
  readonly gen: number;
  readonly bootstrap: readonly string[] | undefined;
  readonly resolve: (replica: FakeReplica) => void;
  readonly reject: (error: Error) => void;
}

function fixture() {
  const log: string[] = [];
  const openings: Opening[] = [];
  const state = { closing: false };
  const errors: Error[] = [];
  const host: RegistryHost<FakeReplica> = {
    id: 'n1',
    isClosing: () => state.closing,
    open: (spool, gen, bootstrap) =>
      new Promise((resolve, reject) => openings.push({ spool, gen, bootstrap, resolve, reject })),
    drop: async (group) => void log.push(`drop ${group}`),
    onOpened: (spool) => void log.push(`opened ${spool}`),
    onDropped: (spool) => void log.push(`dropped ${spool}`),
    onError: (error) => void errors.push(error),
  };
  const replica = (spool: string, gen: number): FakeReplica => ({
    group: spoolGroup(spool, gen),
    gen,
    closed: false,
    async close() {
      this.closed = true;
      log.push(`close ${this.group}`);
    },
  });
  const registry = new ReplicaRegistry(host);
  /** Opens the replica of the oldest pending opening and lets the registry see it. */
  const finishOpen = async (): Promise<FakeReplica> => {
    const opening = openings.shift()!;
    const opened = replica(opening.spool, opening.gen);
    opening.resolve(opened);
    await settle();
    return opened;
  };
  return { log, openings, state, errors, registry, replica, finishOpen };
}

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function placed(name: string, gen: number, replicas: string[], to?: string): PlacedSpool {
  return { name, gen, replicas, moving: to === undefined ? null : { from: replicas[0]!, to } };
}

describe('ReplicaRegistry', () => {
  it('opens a spool once, registers it, and ignores starts while starting or running', async () => {
    const f = fixture();
    f.registry.start('a', 1, ['n1', 'n2']);
    f.registry.start('a', 1, ['n1', 'n2']);
    expect(f.openings.map((o) => [o.spool, o.gen, o.bootstrap])).toEqual([['a', 1, ['n1', 'n2']]]);
    expect(f.registry.get('a')).toBeUndefined();
    const replica = await f.finishOpen();
    expect(f.log).toEqual(['opened a']);
    expect(f.registry.get('a')).toBe(replica);
    expect(f.registry.ofGroup(spoolGroup('a', 1))).toBe(replica);
    expect(f.registry.ofGroup(spoolGroup('a', 2))).toBeUndefined();
    f.registry.start('a', 1, undefined);
    expect(f.openings).toHaveLength(0);
  });

  it('reports a failed open and lets the spool start again', async () => {
    const f = fixture();
    f.registry.start('a', 1, undefined);
    f.openings.shift()!.reject(new Error('disk full'));
    await settle();
    expect(f.errors.map((e) => e.message)).toEqual(['disk full']);
    f.registry.start('a', 1, undefined);
    expect(f.openings).toHaveLength(1);
  });

  it('stops by closing, then dropping, and starts nothing of the spool meanwhile', async () => {
    const f = fixture();
    f.registry.start('a', 1, undefined);
    await f.finishOpen();
    f.registry.stop('a');
    expect(f.registry.get('a')).toBeUndefined();
    f.registry.start('a', 2, undefined); // the earlier incarnation is still stopping
    expect(f.openings).toHaveLength(0);
    await settle();
    expect(f.log).toEqual(['opened a', 'close spool:a#1', 'drop spool:a#1', 'dropped a']);
    f.registry.start('a', 2, undefined);
    expect(f.openings).toHaveLength(1);
  });

  it('reconciles: starts what is placed here, drops moved-away ones once caught up', async () => {
    const f = fixture();
    const spools = new Map([
      ['a', placed('a', 1, ['n1', 'n2'])],
      ['b', placed('b', 1, ['n2', 'n3'], 'n1')], // joining by a move: no founders
      ['c', placed('c', 1, ['n2', 'n3'])],
    ]);
    f.registry.reconcile(spools, () => true);
    expect(f.openings.map((o) => [o.spool, o.bootstrap])).toEqual([
      ['a', ['n1', 'n2']],
      ['b', undefined],
    ]);
    await f.finishOpen();
    await f.finishOpen();
    spools.set('a', placed('a', 1, ['n2', 'n3']));
    f.registry.reconcile(spools, () => false);
    expect(f.registry.get('a')).toBeDefined(); // metadata maybe in the past: kept
    f.registry.reconcile(spools, () => true);
    expect(f.registry.get('a')).toBeUndefined();
    spools.set('b', placed('b', 2, ['n1', 'n2']));
    f.registry.reconcile(spools, () => true);
    expect(f.registry.get('b')).toBeUndefined(); // an earlier incarnation: stopped first
    await settle();
    expect(f.log.filter((line) => line.startsWith('drop '))).toEqual([
      'drop spool:a#1',
      'drop spool:b#1',
    ]);
  });

  it('starts the latest incarnation found in storage and drops the stale ones', async () => {
    const f = fixture();
    const stored = ['meta', spoolGroup('a', 3), spoolGroup('a', 1), spoolGroup('b', 2)];
    await f.registry.startStored(stored);
    expect(f.log).toEqual(['drop spool:a#1']);
    expect(f.openings.map((o) => [o.spool, o.gen, o.bootstrap])).toEqual([
      ['a', 3, undefined],
      ['b', 2, undefined],
    ]);
  });

  it('pauses (closing every replica, starting none) until resumed', async () => {
    const f = fixture();
    f.registry.start('a', 1, undefined);
    const a = await f.finishOpen();
    await f.registry.pause();
    expect(a.closed).toBe(true);
    expect(f.registry.all().size).toBe(0);
    f.registry.start('a', 1, undefined);
    expect(f.openings).toHaveLength(0);
    f.registry.resume();
    f.registry.start('a', 1, undefined);
    expect(f.openings).toHaveLength(1);
  });

  it('closes the running replicas, and one that opens while the member closes', async () => {
    const f = fixture();
    f.registry.start('a', 1, undefined);
    const a = await f.finishOpen();
    f.registry.start('b', 1, undefined);
    f.state.closing = true;
    const closed = f.registry.close();
    const b = f.replica('b', 1);
    f.openings.shift()!.resolve(b);
    await closed;
    expect([a.closed, b.closed]).toEqual([true, true]);
    expect(f.log).not.toContain('opened b');
    expect(f.registry.all().size).toBe(0);
  });
});
