import { describe, expect, it } from 'vitest';
import { RaftConfigError } from '../../src/core/config.js';
import {
  RAFT_NODE_DEFAULTS,
  resolveOptions,
  type RaftNodeOptions,
} from '../../src/node/options.js';
import { MemoryStorageEngine } from '../../src/storage/memory-storage.js';
import { MemoryNetwork } from '../../src/transport/memory-transport.js';
import { KvStore } from './cluster.js';

const base: RaftNodeOptions = {
  id: 'n1',
  group: 'g',
  storage: new MemoryStorageEngine().group('g'),
  transport: new MemoryNetwork().transport('n1'),
  stateMachine: new KvStore(),
};

describe('resolveOptions', () => {
  it('fills defaults and keeps what was given (undefined means default)', () => {
    const resolved = resolveOptions({ ...base, tickMs: 20, snapshotEntries: undefined });
    expect(resolved.tickMs).toBe(20);
    expect(resolved.snapshotEntries).toBe(RAFT_NODE_DEFAULTS.snapshotEntries);
    expect(resolved.snapshotSliceBytes).toBe(256 * 1024);
    expect(resolved.retainBytes).toBe(8 * 1024 * 1024);
    expect(resolved.electionTicks).toBe(10);
    expect(resolved.bootstrap).toBeNull();
  });

  it.each([
    { tickMs: 0 },
    { snapshotEntries: 1.5 },
    { snapshotSliceBytes: 0 },
    { proposalsPendingMax: -1 },
    { retainEntries: -1 },
    { retainBytes: 0.5 },
    { catchUpRoundsMax: 0 },
  ])(
    'refuses %j',
    (patch) => {
      expect(() => resolveOptions({ ...base, ...patch })).toThrow(RaftConfigError);
    },
  );
});
