// A small client of the admin API (accounts, keys, plans, spools) for tests and scripts, and the
// test account every harness deployment provisions on demand.

/** The account harness deployments create for tests (its spools are `test/<name>` inside). */
export const TEST_ACCOUNT = 'test';
const REQUEST_TIMEOUT_MS = 15_000;

export interface AdminAnswer {
  readonly status: number;
  readonly body: unknown;
}

export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`admin ${what}: ${status} ${JSON.stringify(body)}`);
    this.name = 'AdminError';
  }
}

export class AdminClient {
  /** `rootUrl`: `http://host:port` of an admin listener. */
  constructor(
    readonly rootUrl: string,
    /** The admin token (tests sign in to the console with it). */
    readonly token: string,
  ) {}

  /** Any admin call; resolves status and parsed body (never rejects on a status). */
  async request(method: string, path: string, body?: object): Promise<AdminAnswer> {
    const response = await fetch(`${this.rootUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
  }

  /** A call that must succeed (2xx); rejects with AdminError otherwise. */
  async ok(method: string, path: string, body?: object): Promise<unknown> {
    const answer = await this.request(method, path, body);
    if (answer.status >= 300) throw new AdminError(answer.status, answer.body, `${method} ${path}`);
    return answer.body;
  }

  createAccount(id: string, plan?: string): Promise<unknown> {
    return this.ok('POST', '/accounts', plan === undefined ? { id } : { id, plan });
  }

  /** A new key of `account`: its id and the key itself. */
  async createKey(account: string): Promise<{ readonly id: string; readonly key: string }> {
    return (await this.ok('POST', `/accounts/${account}/keys`)) as { id: string; key: string };
  }

  setAccountState(id: string, state: 'active' | 'suspended' | 'blocked'): Promise<unknown> {
    return this.ok('PATCH', `/accounts/${id}`, { state });
  }

  setAccountPlan(id: string, plan: string): Promise<unknown> {
    return this.ok('PATCH', `/accounts/${id}`, { plan });
  }

  putPlan(name: string, limits: Readonly<Record<string, number>>): Promise<unknown> {
    return this.ok('PUT', `/plans/${name}`, limits);
  }

  setKeyBlocked(keyId: string, blocked: boolean): Promise<unknown> {
    return this.ok('PATCH', `/keys/${keyId}`, { blocked });
  }

  revokeKey(keyId: string): Promise<unknown> {
    return this.ok('DELETE', `/keys/${keyId}`);
  }

  createSpool(account: string, spool: string): Promise<unknown> {
    return this.ok('PUT', `/accounts/${account}/spools/${spool}`);
  }

  /**
   * The key of the test account, creating the account first when missing (idempotent across
   * calls of several processes: an existing account just gets a new key).
   */
  async testKey(): Promise<string> {
    const created = await this.request('POST', '/accounts', { id: TEST_ACCOUNT });
    if (created.status !== 201 && created.status !== 409) {
      throw new AdminError(created.status, created.body, 'create the test account');
    }
    return (await this.createKey(TEST_ACCOUNT)).key;
  }
}

/** A random admin token for a harness deployment (hex, 32 characters). */
export function randomAdminToken(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString('hex');
}
