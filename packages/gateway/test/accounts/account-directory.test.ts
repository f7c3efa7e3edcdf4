import { describe, expect, it } from 'vitest';
import { MqError } from '@spoolmq/engine';
import { AccountDirectory, hashKey } from '../../src/accounts/account-directory.js';
import { type AuthAccount, type AuthTable, ManualClock } from '@spoolmq/protocol';

function account(id: string, overrides: Partial<AuthAccount> = {}): AuthAccount {
  return { id, state: 'active', messageSizeMaxBytes: 1024, requestsPerSecond: 0, requestBurst: 0, ...overrides };
}

function table(version: number, accounts: AuthAccount[], keys: [string, string, boolean?][]): AuthTable {
  return { version, accounts, keys: keys.map(([key, accountId, blocked]) => ({ hashHex: hashKey(key), accountId, blocked: blocked ?? false })) };
}

function kindOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof MqError) return error.kind;
    throw error;
  }
  return undefined;
}

describe('AccountDirectory', () => {
  it('is unavailable (503) until a table arrives', () => {
    const directory = new AccountDirectory();
    expect(directory.ready).toBe(false);
    expect(kindOf(() => directory.authenticate('k'))).toBe('unavailable');
  });

  it('maps a key to its account principal; unknown, blocked, suspended and held accounts refuse', () => {
    const directory = new AccountDirectory();
    directory.replace(
      table(1, [account('a'), account('s', { state: 'suspended' }), account('h', { state: 'blocked' })], [
        ['key-a', 'a'],
        ['key-a-blocked', 'a', true],
        ['key-s', 's'],
        ['key-h', 'h'],
        ['key-orphan', 'gone'],
      ]),
    );
    expect(directory.authenticate('key-a')).toEqual({ accountId: 'a', spoolPrefix: 'a/', messageSizeMaxBytes: 1024 });
    expect(kindOf(() => directory.authenticate('key-b'))).toBe('unauthenticated');
    expect(kindOf(() => directory.authenticate('key-orphan'))).toBe('unauthenticated');
    expect(kindOf(() => directory.authenticate('key-a-blocked'))).toBe('key_blocked');
    expect(kindOf(() => directory.authenticate('key-s'))).toBe('account_suspended');
    expect(kindOf(() => directory.authenticate('key-h'))).toBe('account_blocked');
  });

  it('a newer table replaces the keys at once; an older one is ignored', () => {
    const directory = new AccountDirectory();
    directory.replace(table(5, [account('a')], [['k', 'a']]));
    directory.replace(table(4, [account('a')], []));
    expect(directory.authenticate('k').accountId).toBe('a');
    directory.replace(table(6, [account('a')], []));
    expect(kindOf(() => directory.authenticate('k'))).toBe('unauthenticated');
  });

  it('rate-limits per account with a token bucket: burst, then one a 1/rate, with the wait', () => {
    const clock = new ManualClock(0);
    const directory = new AccountDirectory({ clock });
    directory.replace(table(1, [account('a', { requestsPerSecond: 10, requestBurst: 3 }), account('b')], [['ka', 'a'], ['kb', 'b']]));
    for (let i = 0; i < 3; i++) directory.authenticate('ka');
    let refused: MqError | undefined;
    try {
      directory.authenticate('ka');
    } catch (error) {
      refused = error as MqError;
    }
    expect(refused?.kind).toBe('rate_limited');
    expect(refused?.details['retryAfterMs']).toBeCloseTo(100, 5);
    for (let i = 0; i < 100; i++) directory.authenticate('kb'); // uncapped, and another account's
    clock.set(100);
    directory.authenticate('ka');
    expect(kindOf(() => directory.authenticate('ka'))).toBe('rate_limited');
    // A pushed table with the same rate keeps the bucket (no refill by a push).
    directory.replace(table(2, [account('a', { requestsPerSecond: 10, requestBurst: 3 })], [['ka', 'a']]));
    expect(kindOf(() => directory.authenticate('ka'))).toBe('rate_limited');
  });

  it('enforces its share of the rate (several gateways)', () => {
    const clock = new ManualClock(0);
    const directory = new AccountDirectory({ clock, rateShare: 0.5 });
    directory.replace(table(1, [account('a', { requestsPerSecond: 100, requestBurst: 10 })], [['ka', 'a']]));
    let admitted = 0;
    for (let now = 0; now < 1000; now += 1) {
      clock.set(now);
      if (kindOf(() => directory.authenticate('ka')) === undefined) admitted++;
    }
    // burst 5 + 50/s over one second
    expect(admitted).toBeGreaterThanOrEqual(54);
    expect(admitted).toBeLessThanOrEqual(55);
    expect(() => new AccountDirectory({ rateShare: 0 })).toThrow(RangeError);
  });

  it('a refused key spends no token', () => {
    const directory = new AccountDirectory({ clock: new ManualClock(0) });
    directory.replace(table(1, [account('a', { requestsPerSecond: 1, requestBurst: 1, state: 'suspended' })], [['ka', 'a']]));
    expect(kindOf(() => directory.authenticate('ka'))).toBe('account_suspended');
    directory.replace(table(2, [account('a', { requestsPerSecond: 1, requestBurst: 1 })], [['ka', 'a']]));
    expect(directory.authenticate('ka').accountId).toBe('a');
  });
});
