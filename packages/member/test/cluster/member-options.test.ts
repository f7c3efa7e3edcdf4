import { INSECURE_CLUSTER } from '@spoolmq/raft';
import { describe, expect, it } from 'vitest';
import { checkOptions } from '../../src/cluster/member-options.js';
import { Member } from '../../src/cluster/member.js';

describe('member options', () => {
  it('accepts a member listed in its peers with one storage', () => {
    const options = { id: 'n1', peers: { n1: 'h:1', n2: 'h:2' }, dataDir: '/d' };
    expect(() => checkOptions({ ...options, security: INSECURE_CLUSTER })).not.toThrow();
  });

  it('wants the security of its gRPC port said, insecure included: there is no default', () => {
    const options = { id: 'n1', peers: { n1: 'h:1' }, dataDir: '/d' };
    expect(() => checkOptions(options)).toThrow(/security is required with a gRPC port/);
  });

  it('refuses bad ids, a member missing from its peers, storage ambiguity, a bad replica count', () => {
    const peers = { n1: 'h:1' };
    expect(() => checkOptions({ id: 'n 1', peers: { 'n 1': 'h:1' }, dataDir: '/d' })).toThrow(/invalid id/);
    expect(() => checkOptions({ id: 'n1', peers: { n2: 'h:2' }, dataDir: '/d' })).toThrow(/include/);
    expect(() => checkOptions({ id: 'n1', peers: { ...peers, 'a/b': 'h:2' }, dataDir: '/d' })).toThrow(/peer id/);
    expect(() => checkOptions({ id: 'n1', peers })).toThrow(/exactly one/);
    const replicas = { id: 'n1', peers, dataDir: '/d', replicasPerSpool: 0, security: INSECURE_CLUSTER };
    expect(() => checkOptions(replicas)).toThrow(/replicasPerSpool/);
  });

  it('refuses a disk reserve that is not a non-negative integer and a poll interval below 1 ms', () => {
    const base = { id: 'n1', peers: { n1: 'h:1' }, dataDir: '/d', security: INSECURE_CLUSTER };
    expect(() => checkOptions({ ...base, diskReserveBytes: 0, diskPollMs: 1 })).not.toThrow();
    expect(() => checkOptions({ ...base, diskReserveBytes: -1 })).toThrow(/diskReserveBytes/);
    expect(() => checkOptions({ ...base, diskReserveBytes: 0.5 })).toThrow(/diskReserveBytes/);
    expect(() => checkOptions({ ...base, diskPollMs: 0 })).toThrow(/diskPollMs/);
  });

  it('refuses a memory high mark outside 11-99 and a memory poll interval below 1 ms', () => {
    const base = { id: 'n1', peers: { n1: 'h:1' }, dataDir: '/d', security: INSECURE_CLUSTER };
    expect(() => checkOptions({ ...base, memoryHighPercent: 11, memoryPollMs: 1 })).not.toThrow();
    expect(() => checkOptions({ ...base, memoryHighPercent: 99 })).not.toThrow();
    for (const bad of [10, 100, 80.5]) {
      expect(() => checkOptions({ ...base, memoryHighPercent: bad })).toThrow(/memoryHighPercent/);
    }
    expect(() => checkOptions({ ...base, memoryPollMs: 0 })).toThrow(/memoryPollMs/);
  });

  it('Member.start checks them before opening anything', async () => {
    await expect(Member.start({ id: 'n1', peers: { n2: 'x:1' }, dataDir: '/nonexistent' })).rejects.toThrow(/include/);
  });
});
