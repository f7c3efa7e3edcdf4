// A real cluster on loopback for tests: N `mq member` processes (ids n1..nN) and, by default, one
// `mq gateway`, each on ports chosen up front, each member's data in its own directory under a
// temp root, every process's output in <root>/logs/<id>.log. Processes can be killed (SIGKILL,
// SIGTERM), paused (SIGSTOP/SIGCONT), restarted on the same ports and data, and a member's data
// wiped. `stop()` leaves nothing running (and an exit hook SIGKILLs whatever a crashed test
// left).
//
// Members normally dial each other directly. `peersFor` replaces the addresses a member is given
// for its peers, so a fault-injecting proxy (chaos/ProxyMesh: `mesh.peersFor(id)`) can sit on
// every link; create the cluster first (ports known), start the mesh on `memberAddresses()`,
// then start the cluster.

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCa, makeLeaf } from '@spoolmq/raft';
import { AdminClient, TEST_ACCOUNT, randomAdminToken } from './admin-client.js';
import { ClusterNode } from './cluster-node.js';
import { freePorts } from './free-ports.js';
import { metricSamples } from './metrics-text.js';

export interface ProcessClusterOptions {
  /** Members, 1..9; default 3. Their ids are n1..nN. */
  readonly members?: number;
  /** Run a standalone `mq gateway` in front; default true. */
  readonly gateway?: boolean;
  /** Standalone gateways (each given `--gateways N`); default 1 when `gateway`, else 0. */
  readonly gateways?: number;
  /** Directory for data and logs; default a new temp directory (removed by `stop()`). */
  readonly rootDir?: string;
  /** Keep the root directory at `stop()` (logs and data for a post-mortem); default false. */
  readonly keepFiles?: boolean;
  /** Extra environment of every process (MQ_LOG_LEVEL...). */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags of every process (`--cpu-prof`...). */
  readonly nodeArgs?: readonly string[];
  /**
   * Run the gRPC links without TLS (`--insecure-cluster`); default false: a CA and every
   * process's certificate are made under `<root>/certs` and the links are mutual TLS.
   */
  readonly insecureCluster?: boolean;
}

/** The peers map member `id` is started with, given every member's real gRPC address. */
export type PeersFor = (id: string, addresses: Addresses) => Addresses;
/** Member id -> `host:port`. */
export type Addresses = Readonly<Record<string, string>>;

/** Members a harness cluster may have: a Raft group wants few voters, and ports add up. */
export const PROCESS_CLUSTER_MEMBERS_MAX = 9;
/** Default bound for `waitReady` and `waitPrimary`. */
export const CLUSTER_WAIT_MS_DEFAULT = 60_000;
const POLL_MS = 100;

/**
 * The MQ_CLUSTER_* environment of each process (members by id, gateways as `gateway`,
 * `gateway2`...): certificates made under `<rootDir>/certs`, or MQ_INSECURE_CLUSTER.
 */
async function clusterTlsEnv(
  rootDir: string,
  ids: readonly string[],
  gateways: number,
  insecure: boolean,
): Promise<Map<string, Record<string, string>>> {
  const gatewayIds = Array.from({ length: gateways }, (_, g) =>
    g === 0 ? 'gateway' : `gateway${g + 1}`,
  );
  const env = new Map<string, Record<string, string>>();
  if (insecure) {
    for (const id of [...ids, ...gatewayIds]) env.set(id, { MQ_INSECURE_CLUSTER: 'true' });
    return env;
  }
  const dir = join(rootDir, 'certs');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const nowMs = Date.now();
  const ca = await makeCa('mq test cluster', nowMs);
  await writeFile(join(dir, 'ca.crt'), ca.cert);
  const holders = [
    ...ids.map((id) => ({ id, role: 'member' as const })),
    ...gatewayIds.map((id) => ({ id, role: 'gateway' as const })),
  ];
  for (const { id, role } of holders) {
    const leaf = await makeLeaf(ca, { role, name: id }, [], nowMs);
    await writeFile(join(dir, `${id}.crt`), leaf.cert);
    await writeFile(join(dir, `${id}.key`), leaf.key, { mode: 0o600 });
    env.set(id, {
      MQ_CLUSTER_CA: join(dir, 'ca.crt'),
      MQ_CLUSTER_CERT: join(dir, `${id}.crt`),
      MQ_CLUSTER_KEY: join(dir, `${id}.key`),
    });
  }
  return env;
}

export class ProcessCluster {
  readonly rootDir: string;
  /** The admin token every member is started with (MQ_ADMIN_TOKEN). */
  readonly adminToken = randomAdminToken();
  private readonly membersValue: ClusterNode[] = [];
  private readonly adminPorts = new Map<string, number>();
  private gatewayValue: ClusterNode | null = null;
  private readonly gatewaysValue: ClusterNode[] = [];
  private testKey: Promise<string> | null = null;
  private readonly ownsRoot: boolean;
  private readonly keepFiles: boolean;
  private peersForValue: PeersFor | null = null;
  private gatewayMembersValue: PeersFor | null = null;
  private stopped = false;

  private constructor(rootDir: string, ownsRoot: boolean, keepFiles: boolean) {
    this.rootDir = rootDir;
    this.ownsRoot = ownsRoot;
    this.keepFiles = keepFiles;
  }

  /**
   * Chooses ports and directories; starts nothing. Throws RangeError for a member count outside
   * 1..PROCESS_CLUSTER_MEMBERS_MAX.
   */
  static async create(options: ProcessClusterOptions = {}): Promise<ProcessCluster> {
    const count = options.members ?? 3;
    if (!Number.isSafeInteger(count) || count < 1 || count > PROCESS_CLUSTER_MEMBERS_MAX) {
      throw new RangeError(`members must be 1..${PROCESS_CLUSTER_MEMBERS_MAX}, got ${count}`);
    }
    const rootDir = options.rootDir ?? (await mkdtemp(join(tmpdir(), 'mq-cluster-')));
    await mkdir(join(rootDir, 'logs'), { recursive: true });
    const ownsRoot = options.rootDir === undefined;
    const cluster = new ProcessCluster(rootDir, ownsRoot, options.keepFiles ?? false);
    const gateways = options.gateways ?? ((options.gateway ?? true) ? 1 : 0);
    if (!Number.isSafeInteger(gateways) || gateways < 0 || gateways > PROCESS_CLUSTER_MEMBERS_MAX) {
      throw new RangeError(`gateways must be 0..${PROCESS_CLUSTER_MEMBERS_MAX}, got ${gateways}`);
    }
    const ports = await freePorts(3 * count + gateways);
    const ids = Array.from({ length: count }, (_, i) => `n${i + 1}`);
    const addresses = Object.fromEntries(ids.map((id, i) => [id, `127.0.0.1:${ports[3 * i]}`]));
    const nodeArgs = options.nodeArgs === undefined ? {} : { nodeArgs: options.nodeArgs };
    const tls = await clusterTlsEnv(rootDir, ids, gateways, options.insecureCluster ?? false);
    for (const [i, id] of ids.entries()) {
      const memberEnv = { ...options.env, ...tls.get(id), MQ_ADMIN_TOKEN: cluster.adminToken };
      const dataDir = join(rootDir, id, 'data');
      const httpPort = ports[3 * i + 1]!;
      const adminPort = ports[3 * i + 2]!;
      cluster.adminPorts.set(id, adminPort);
      const node: ClusterNode = new ClusterNode({
        id,
        kind: 'member',
        httpPort,
        grpcAddress: addresses[id]!,
        dataDir,
        logPath: join(rootDir, 'logs', `${id}.log`),
        args: () => [
          'member',
          ...['--id', id, '--peers', memberList(cluster.peersOf(id, addresses))],
          ...['--listen', addresses[id]!, '--data', dataDir],
          ...['--port', String(httpPort), '--host', '127.0.0.1'],
          ...['--admin-port', String(adminPort), '--admin-host', '127.0.0.1'],
        ],
        env: memberEnv,
        admin: { port: adminPort, token: cluster.adminToken },
        ...nodeArgs,
      });
      cluster.membersValue.push(node);
    }
    for (let g = 0; g < gateways; g++) {
      const httpPort = ports[3 * count + g]!;
      const id = g === 0 ? 'gateway' : `gateway${g + 1}`;
      const node = new ClusterNode({
        id,
        kind: 'gateway',
        httpPort,
        logPath: join(rootDir, 'logs', `${id}.log`),
        args: () => [
          'gateway',
          ...['--members', memberList(cluster.gatewayMembersOf(addresses))],
          ...['--port', String(httpPort), '--host', '127.0.0.1'],
          ...['--gateways', String(gateways)],
        ],
        env: { ...options.env, ...tls.get(id) },
        ...nodeArgs,
      });
      cluster.gatewaysValue.push(node);
    }
    cluster.gatewayValue = cluster.gatewaysValue[0] ?? null;
    return cluster;
  }

  /** `create(options)` then `start()`. */
  static async start(options: ProcessClusterOptions = {}): Promise<ProcessCluster> {
    const cluster = await ProcessCluster.create(options);
    try {
      await cluster.start();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /**
   * Starts every member (in parallel), then the gateway, each once its /healthz answers. Does not
   * wait for readiness (`waitReady`). Rejects with the log tail of a process that did not start.
   */
  async start(): Promise<void> {
    await Promise.all(this.membersValue.map((member) => member.start()));
    await Promise.all(this.gatewaysValue.map((gateway) => gateway.start()));
  }

  /** Every standalone gateway (the first is `gateway()`). */
  get gateways(): readonly ClusterNode[] {
    return this.gatewaysValue;
  }

  /** The admin API of member `i` (0-based). */
  admin(i = 0): AdminClient {
    const id = this.member(i).id;
    return new AdminClient(`http://127.0.0.1:${this.adminPorts.get(id)!}`, this.adminToken);
  }

  /**
   * An API key of the test account (created once, through the first live member's admin API,
   * after the cluster is ready). Spool names the harness takes without an account (`primaryOf`,
   * `waitPrimary`) are this account's.
   */
  apiKey(): Promise<string> {
    if (this.testKey === null) {
      const live = this.membersValue.findIndex((member) => member.alive && !member.paused);
      this.testKey = this.admin(Math.max(0, live)).testKey();
      this.testKey.catch(() => {
        this.testKey = null;
      });
    }
    return this.testKey;
  }

  /** Replaces the peers members are given at their next (re)start (a ProxyMesh's peersFor). */
  setPeersFor(peersFor: PeersFor | null): void {
    this.peersForValue = peersFor;
  }

  /** Replaces the member addresses the gateway is given at its next (re)start. */
  setGatewayMembers(members: PeersFor | null): void {
    this.gatewayMembersValue = members;
  }

  /** Every member's real gRPC address (what a ProxyMesh forwards to), in id order. */
  memberAddresses(): { readonly id: string; readonly address: string }[] {
    return this.membersValue.map((member) => ({ id: member.id, address: member.grpcAddress! }));
  }

  get members(): readonly ClusterNode[] {
    return this.membersValue;
  }

  get ids(): readonly string[] {
    return this.membersValue.map((member) => member.id);
  }

  /** Member `i` (0-based: member(0) is n1). Throws RangeError out of range. */
  member(i: number): ClusterNode {
    const member = this.membersValue[i];
    if (member === undefined) {
      throw new RangeError(`no member ${i} (0..${this.membersValue.length - 1})`);
    }
    return member;
  }

  /** The member with id `id`. Throws RangeError for an unknown id. */
  memberById(id: string): ClusterNode {
    const member = this.membersValue.find((m) => m.id === id);
    if (member === undefined) throw new RangeError(`no member ${id}`);
    return member;
  }

  /** The standalone gateway. Throws when the cluster was created without one. */
  gateway(): ClusterNode {
    if (this.gatewayValue === null) throw new Error('this cluster has no gateway');
    return this.gatewayValue;
  }

  /** The API the tests use: the gateway's `/v1`, or n1's embedded gateway without one. */
  get baseUrl(): string {
    return (this.gatewayValue ?? this.member(0)).baseUrl;
  }

  /**
   * Resolves once every running, unpaused process answers /readyz 200 (members: ready and the
   * primary of `default` known; gateway: primaries known). Rejects after `timeoutMs` with the
   * processes that were not ready and their log tails.
   */
  async waitReady(timeoutMs = CLUSTER_WAIT_MS_DEFAULT): Promise<void> {
    const deadlineMs = performance.now() + timeoutMs;
    let waiting: ClusterNode[] = [];
    while (performance.now() < deadlineMs) {
      const nodes = this.nodes().filter((node) => node.alive && !node.paused);
      const ready = await Promise.all(nodes.map((node) => node.isReady()));
      waiting = nodes.filter((_, i) => !ready[i]);
      if (waiting.length === 0) return;
      await sleep(POLL_MS);
    }
    const names = waiting.map((node) => node.label).join(', ');
    throw new Error(`not ready within ${timeoutMs} ms: ${names}\n${this.logTails(20, waiting)}`);
  }

  /**
   * The member serving as `spool`'s primary now, by the running members' /metrics
   * (`mq_member_spool_serving`); if two claim it (an old primary not yet aware of a new term),
   * the one of the higher term. Null when none does.
   */
  async primaryOf(spool = 'default'): Promise<string | null> {
    spool = spoolIdentity(spool);
    const live = this.membersValue.filter((member) => member.alive && !member.paused);
    const claims = await Promise.all(live.map((member) => servingTerm(member, spool)));
    let best: { id: string; term: number } | null = null;
    for (const [i, term] of claims.entries()) {
      if (term !== null && (best === null || term > best.term)) best = { id: live[i]!.id, term };
    }
    return best?.id ?? null;
  }

  /**
   * Polls `primaryOf(spool)` until a member other than those in `except` serves it; resolves its
   * id. Rejects after `timeoutMs` with the members' log tails.
   */
  async waitPrimary(
    spool = 'default',
    except: readonly string[] = [],
    timeoutMs = CLUSTER_WAIT_MS_DEFAULT,
  ): Promise<string> {
    const deadlineMs = performance.now() + timeoutMs;
    while (performance.now() < deadlineMs) {
      const primary = await this.primaryOf(spool);
      if (primary !== null && !except.includes(primary)) return primary;
      await sleep(POLL_MS);
    }
    const other = except.length === 0 ? '' : ` other than ${except.join(', ')}`;
    throw new Error(`no primary of ${spool}${other} within ${timeoutMs} ms\n${this.logTails(20)}`);
  }

  /** The last `lines` log lines of each process (default all), labelled, for failure output. */
  logTails(lines = 40, nodes: readonly ClusterNode[] = this.nodes()): string {
    return nodes
      .map((node) => `----- ${node.label} (${node.logPath})\n${node.tail(lines)}`)
      .join('\n');
  }

  /**
   * Stops every process (SIGTERM, SIGKILL after the grace period; paused ones are continued so
   * they can act on it), then removes the temp root unless `keepFiles`. Idempotent.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.nodes().map((node) => node.stop()));
    if (this.ownsRoot && !this.keepFiles) await rm(this.rootDir, { recursive: true, force: true });
  }

  private nodes(): ClusterNode[] {
    return [...this.membersValue, ...this.gatewaysValue];
  }

  private peersOf(id: string, addresses: Addresses): Addresses {
    return this.peersForValue === null ? addresses : this.peersForValue(id, addresses);
  }

  private gatewayMembersOf(addresses: Addresses): Addresses {
    const members = this.gatewayMembersValue;
    return members === null ? addresses : members('gateway', addresses);
  }
}

/** A spool's cluster identity: a name without an account is the test account's. */
export function spoolIdentity(spool: string): string {
  return spool.includes('/') ? spool : `${TEST_ACCOUNT}/${spool}`;
}

/** `id=address,...` as the CLI takes it. */
function memberList(members: Readonly<Record<string, string>>): string {
  return Object.entries(members)
    .map(([id, address]) => `${id}=${address}`)
    .join(',');
}

/** The term of `spool`'s group if `member` is its serving primary, else null (or unreachable). */
async function servingTerm(member: ClusterNode, spool: string): Promise<number | null> {
  let text: string;
  try {
    text = await member.metrics();
  } catch {
    return null;
  }
  const serving = metricSamples(text, 'mq_member_spool_serving').find(
    (sample) => sample.labels['spool'] === spool && sample.value === 1,
  );
  if (serving === undefined) return null;
  const group = serving.labels['group'];
  const terms = metricSamples(text, 'mq_member_raft_term');
  const term = terms.find((sample) => sample.labels['group'] === group);
  return term?.value ?? 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
