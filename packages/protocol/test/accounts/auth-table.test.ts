import { describe, expect, it } from 'vitest';
import { AuthTableError, decodeAuthTable, encodeAuthTable, type AuthTable } from '../../src/accounts/auth-table.js';

const table: AuthTable = {
  version: 7,
  accounts: [{ id: 'a', state: 'suspended', messageSizeMaxBytes: 10, requestsPerSecond: 5, requestBurst: 5 }],
  keys: [{ hashHex: 'ab'.repeat(32), accountId: 'a', blocked: true }],
};

describe('auth table codec', () => {
  it('round-trips', () => {
    expect(decodeAuthTable(encodeAuthTable(table))).toEqual(table);
  });

  it('refuses malformed tables', () => {
    const bad = [
      'nope',
      '[]',
      JSON.stringify({ ...table, version: -1 }),
      JSON.stringify({ ...table, accounts: [{ ...table.accounts[0], state: 'zombie' }] }),
      JSON.stringify({ ...table, keys: [{ ...table.keys[0], hashHex: 'AB' }] }),
      JSON.stringify({ ...table, keys: 3 }),
    ];
    for (const text of bad) expect(() => decodeAuthTable(new TextEncoder().encode(text))).toThrow(AuthTableError);
  });
});
