// What a gateway needs to know to authenticate and limit a request: every account's state and
// request-relevant limits, and every key by its hash. The metadata group is the source; a
// gateway inside a member builds this from its own replica, a standalone gateway receives it on
// the accounts watch stream (JSON: a control-plane message, sent only when the tables change).

/** Accounts and keys a table may hold (the metadata group bounds its tables to these). */
export const AUTH_ACCOUNTS_MAX = 10_000;
export const AUTH_KEYS_MAX = 100_000;
/** Largest encoded table accepted from the watch stream (~100 bytes a key or account). */
export const AUTH_TABLE_BYTES_MAX = 32 * 1024 * 1024;

export type AuthAccountState = 'active' | 'suspended' | 'blocked';

export interface AuthAccount {
  readonly id: string;
  readonly state: AuthAccountState;
  /** The plan's message size limit (413 above it), bytes. */
  readonly messageSizeMaxBytes: number;
  /** The plan's request rate, 0 = no cap. */
  readonly requestsPerSecond: number;
  /** Requests an idle account may make at once. */
  readonly requestBurst: number;
}

export interface AuthKey {
  /** sha256 of the key, lower-case hex (64 chars). */
  readonly hashHex: string;
  readonly accountId: string;
  readonly blocked: boolean;
}

export interface AuthTable {
  /** The metadata log index the table reflects (later tables replace earlier ones). */
  readonly version: number;
  readonly accounts: readonly AuthAccount[];
  readonly keys: readonly AuthKey[];
}

export class AuthTableError extends Error {
  constructor(message: string) {
    super(`auth table: ${message}`);
    this.name = 'AuthTableError';
  }
}

const STATES: ReadonlySet<string> = new Set(['active', 'suspended', 'blocked']);
const HASH_HEX = /^[0-9a-f]{64}$/;

export function encodeAuthTable(table: AuthTable): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(table));
}

/** Decodes and checks `encodeAuthTable` bytes. Throws AuthTableError for anything else. */
export function decodeAuthTable(bytes: Uint8Array): AuthTable {
  if (bytes.byteLength > AUTH_TABLE_BYTES_MAX) throw new AuthTableError('too large');
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new AuthTableError('not JSON');
  }
  const table = value as Partial<AuthTable> | null;
  if (table === null || typeof table !== 'object') throw new AuthTableError('not an object');
  const { version, accounts, keys } = table;
  if (!isCount(version)) throw new AuthTableError('version');
  if (!Array.isArray(accounts) || accounts.length > AUTH_ACCOUNTS_MAX) {
    throw new AuthTableError('accounts');
  }
  if (!Array.isArray(keys) || keys.length > AUTH_KEYS_MAX) throw new AuthTableError('keys');
  for (const account of accounts as AuthAccount[]) checkAccount(account);
  for (const key of keys as AuthKey[]) checkKey(key);
  return { version, accounts, keys };
}

function checkAccount(account: AuthAccount): void {
  if (
    typeof account !== 'object' ||
    account === null ||
    typeof account.id !== 'string' ||
    !STATES.has(account.state) ||
    !isCount(account.messageSizeMaxBytes) ||
    !isCount(account.requestsPerSecond) ||
    !isCount(account.requestBurst)
  ) {
    throw new AuthTableError('malformed account');
  }
}

function checkKey(key: AuthKey): void {
  if (
    typeof key !== 'object' ||
    key === null ||
    typeof key.hashHex !== 'string' ||
    !HASH_HEX.test(key.hashHex) ||
    typeof key.accountId !== 'string' ||
    typeof key.blocked !== 'boolean'
  ) {
    throw new AuthTableError('malformed key');
  }
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
