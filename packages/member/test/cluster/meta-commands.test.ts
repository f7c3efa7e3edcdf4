import { describe, expect, it } from 'vitest';
import { MetaCodecError } from '../../src/cluster/meta-bytes.js';
import {
  type MetaCommand,
  accountSpool,
  decodeMetaCommand,
  encodeMetaCommand,
  keyIdOf,
  resolveAccountPlan,
  spoolAccount,
  spoolPlanOf,
} from '../../src/cluster/meta-commands.js';

const secret = new Uint8Array(32).map((_, i) => 255 - i);
const hash = new Uint8Array(32).fill(9);

const commands: MetaCommand[] = [
  {
    type: 'init',
    secret,
    members: ['n1', 'n2', 'n3'],
    spools: [{ name: 'default', replicas: ['n2', 'n3', 'n1'] }],
  },
  { type: 'createSpool', name: 'orders:eu', replicas: ['n1'] },
  { type: 'deleteSpool', name: 'orders:eu' },
  { type: 'putAccount', account: { id: 'acct-1', state: 'suspended', plan: 'pro' } },
  { type: 'putKey', key: { hash, accountId: 'acct-1', blocked: true } },
  { type: 'deleteKey', hash },
  { type: 'createAccount', account: { id: 'a', state: 'active', plan: 'default' }, defaultReplicas: ['n1', 'n3'] },
  { type: 'setKeyBlocked', hash, blocked: true },
  { type: 'putPlan', name: 'pro', plan: resolveAccountPlan({ queuesPerSpoolMax: 3, requestsPerSecond: 50 }) },
  { type: 'addMember', id: 'n4', address: '10.0.0.4:7001' },
  { type: 'removeMember', id: 'n4' },
  { type: 'moveReplica', spool: 'a/default', from: 'n1', to: 'n4' },
  { type: 'moveReplica', spool: 'a/default', from: 'n1', to: '' },
  { type: 'finishMove', spool: 'a/default', from: 'n1', to: 'n4' },
];

describe('metadata command codec', () => {
  it('round-trips every command', () => {
    for (const command of commands) {
      expect(decodeMetaCommand(encodeMetaCommand(command))).toEqual(command);
    }
  });

  it('refuses malformed input, foreign versions and bad lengths', () => {
    const good = encodeMetaCommand(commands[1]!);
    expect(() => decodeMetaCommand(good.subarray(0, good.length - 1))).toThrow(MetaCodecError);
    expect(() => decodeMetaCommand(new Uint8Array([...good, 0]))).toThrow(MetaCodecError);
    expect(() => decodeMetaCommand(new Uint8Array([2, ...good.subarray(1)]))).toThrow(MetaCodecError);
    expect(() => decodeMetaCommand(new Uint8Array([1, 99]))).toThrow(MetaCodecError);
    const shortSecret = encodeMetaCommand({ type: 'init', secret: new Uint8Array(16), members: [], spools: [] });
    expect(() => decodeMetaCommand(shortSecret)).toThrow(MetaCodecError);
    const shortHash = encodeMetaCommand({ type: 'deleteKey', hash: new Uint8Array(31) });
    expect(() => decodeMetaCommand(shortHash)).toThrow(MetaCodecError);
  });
});

describe('account helpers', () => {
  it('names an account spool <account>/<spool> and parses the account back', () => {
    expect(accountSpool('acme', 'default')).toBe('acme/default');
    expect(spoolAccount('acme/orders:eu')).toBe('acme');
    expect(spoolAccount('default')).toBeNull();
  });

  it('resolves plans: engine defaults, no request cap, burst defaults to the rate', () => {
    const plan = resolveAccountPlan({ requestsPerSecond: 20 });
    expect(plan).toMatchObject({ requestsPerSecond: 20, requestBurst: 20, queuesPerSpoolMax: 1000 });
    expect(spoolPlanOf(plan)).not.toHaveProperty('requestsPerSecond');
    expect(resolveAccountPlan()).toMatchObject({ requestsPerSecond: 0, requestBurst: 0 });
    expect(() => resolveAccountPlan({ requestsPerSecond: -1 })).toThrow(/requestsPerSecond/);
    expect(() => resolveAccountPlan({ requestsPerSecond: 5, requestBurst: 0 })).toThrow(/requestBurst/);
    expect(() => resolveAccountPlan({ queuesPerSpoolMax: 0 })).toThrow(/queuesPerSpoolMax/);
  });

  it('names a key by the first 8 bytes of its hash', () => {
    expect(keyIdOf(new Uint8Array(32).fill(0xab))).toBe('abababababababab');
  });
});
