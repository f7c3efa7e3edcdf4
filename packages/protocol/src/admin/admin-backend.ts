// What the admin HTTP API (admin-app.ts) does, implemented by a member (packages/member:
// MemberAdmin) over the metadata group. Every method rejects with an MqError: 400
// invalid_argument, 404 not_found, 409 conflict (a name taken, a table bound), 503 unavailable.

import type { Plan } from '@spoolmq/engine';

export type AdminAccountState = 'active' | 'suspended' | 'blocked';

/** A named plan: the spool limits every replica enforces, plus the gateways' request rate. */
export interface AdminPlan extends Plan {
  /** 0 = no cap. */
  readonly requestsPerSecond: number;
  readonly requestBurst: number;
}

export interface AdminKey {
  /** The key's public id (never the key). */
  readonly id: string;
  readonly accountId: string;
  readonly blocked: boolean;
}

export interface AdminAccount {
  readonly id: string;
  readonly state: AdminAccountState;
  readonly plan: string;
  /** The account's spool names (as its API keys name them). */
  readonly spools: readonly string[];
  readonly keys: readonly AdminKey[];
}

/** A new key: the only time the key itself is shown. */
export interface AdminNewKey extends AdminKey {
  readonly key: string;
}

export interface AdminSpool {
  readonly account: string | null;
  readonly name: string;
  readonly replicas: readonly string[];
  /** The member serving it now, when known. */
  readonly primary: string | null;
}

export interface AdminCluster {
  readonly members: readonly string[];
  readonly metaLeader: string | null;
  readonly spools: readonly AdminSpool[];
}

export interface AdminBackend {
  listAccounts(): Promise<readonly AdminAccount[]>;
  account(id: string): Promise<AdminAccount>;
  createAccount(id: string, plan: string | undefined): Promise<AdminAccount>;
  updateAccount(
    id: string,
    change: { readonly state?: AdminAccountState; readonly plan?: string },
  ): Promise<AdminAccount>;
  createKey(accountId: string): Promise<AdminNewKey>;
  setKeyBlocked(keyId: string, blocked: boolean): Promise<AdminKey>;
  revokeKey(keyId: string): Promise<void>;
  listPlans(): Promise<Readonly<Record<string, AdminPlan>>>;
  putPlan(name: string, plan: Partial<AdminPlan>): Promise<AdminPlan>;
  createSpool(accountId: string, spool: string): Promise<AdminSpool>;
  deleteSpool(accountId: string, spool: string): Promise<void>;
  cluster(): Promise<AdminCluster>;
  /** Moves the spool's primary to member `to` (a Raft leadership transfer). */
  moveSpool(accountId: string, spool: string, to: string): Promise<AdminSpool>;
  /**
   * Adds member `id`, started with `mq member --join` at gRPC `address`, as a voter of the
   * metadata group; new spools may be placed on it.
   */
  addMember(id: string, address: string): Promise<AdminCluster>;
  /**
   * Moves `from`'s replica of the spool to member `to` (`to` joins the spool's Raft group, catches
   * up, becomes a voter, then `from` leaves). Resolves once done; 503 when it takes too long (the
   * move goes on; a re-run waits for it).
   */
  moveReplica(accountId: string, spool: string, from: string, to: string): Promise<AdminSpool>;
  /**
   * Moves every spool replica off member `id`, then removes it from the metadata group. 409 when
   * some spool has no other member to go to, unless `allowShrink` (its replica set shrinks).
   */
  removeMember(id: string, options?: { readonly allowShrink?: boolean }): Promise<AdminCluster>;
}
