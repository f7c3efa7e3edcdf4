import { describe, expect, it } from 'vitest';
import { MetaCodecError } from '../../src/cluster/meta-bytes.js';
import { type MetaCommand, decodeMetaCommand, encodeMetaCommand } from '../../src/cluster/meta-commands.js';

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
  { type: 'putAccount', account: { id: 'acct-1', state: 'suspended', plan: 'pro', spools: ['default', 'ünïcode'] } },
  { type: 'putKey', key: { hash, accountId: 'acct-1', blocked: true } },
  { type: 'deleteKey', hash },
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
