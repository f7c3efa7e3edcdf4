// The three mq targets as processes: `mq local` (memory), `mq serve` (one durable member) and a
// three-member cluster with a standalone gateway (its four processes with the node flags
// `npm run cluster` gives co-located processes). Each start() spawns tracked children, waits
// until the API answers, and resolves the connection the load generator needs.
import { createWriteStream } from 'node:fs';
import { COLOCATED_NODE_FLAGS } from '../../colocated-node-flags.mjs';
import { MQ_LAUNCHER, launcherEnv } from '../../mq-launcher.mjs';
import { clusterCertFlags } from '../../cluster-certs.mjs';
import { killAndWait, spawnTracked, stopChild, waitForLogLine } from '../lib/index.mjs';
import { freePorts, removeDir, removeDirAsync, tempDir, waitForHttp200 } from './support.mjs';
import { benchAdminToken, benchApiKey } from '../lib/mq-accounts.mjs';
import { ProxyMesh } from '../../../packages/testkit/dist/chaos/proxy-mesh.js';

const START_TIMEOUT_MS = 60_000;

function spawnMq(args, nodeArgs = [], env = {}) {
  const child = spawnTracked(MQ_LAUNCHER, args, { env: launcherEnv({ ...process.env, MQ_LOG_LEVEL: 'info', ...env }, nodeArgs) });
  return child;
}

/**
 * Waits for the JSON log line carrying the HTTP port, then keeps draining the child's pipes
 * (into MQ_BENCH_LOG_DIR/<pid>.log when that is set).
 */
async function listeningPort(child) {
  const line = await waitForLogLine(child, (record) => typeof record.port === 'number' && typeof record.baseUrl === 'string', START_TIMEOUT_MS);
  const logDir = process.env.MQ_BENCH_LOG_DIR;
  if (logDir === undefined) {
    child.stdout.resume();
    child.stderr.resume();
  } else {
    // Kept for a failure's post-mortem: every process's output, one file per process.
    const out = createWriteStream(`${logDir}/${child.pid}.log`);
    child.stdout.pipe(out);
    child.stderr.pipe(out);
  }
  return line.port;
}

/** @param {{cpuProfDir?: string}} options */
export function mqLocalTarget(options = {}) {
  let child;
  return {
    name: 'mq-local',
    family: 'mq',
    durability: 'memory only (no disk)',
    async start() {
      child = spawnMq(['local', '--port', '0', '--host', '127.0.0.1'], profArgs(options));
      const port = await listeningPort(child);
      await waitForHttp200(port, '/readyz', START_TIMEOUT_MS);
      return { kind: 'mq-http', port };
    },
    processes: () => [{ role: 'local', pid: child.pid }],
    metrics: async () => null,
    async stop() {
      if (child !== undefined) await stopChild(child);
    },
  };
}

/**
 * `mq serve` on a temporary data directory. `options.plan` gives the bench account a plan of its
 * own (see benchApiKey). restart(signal, onStopped) stops the process with `signal`, calls
 * onStopped once it exited, and starts it again on
 * the same data; it resolves the new connection (the API port is chosen anew) once /readyz
 * answers 200.
 * @param {{cpuProfDir?: string, plan?: object}} options
 */
export function mqServeTarget(options = {}) {
  let child;
  let dir;
  let port;
  let apiKey;
  let adminPort;
  const token = benchAdminToken();
  const spawnServe = async () => {
    const args = ['serve', '--data', dir, '--port', '0', '--host', '127.0.0.1', '--admin-port', String(adminPort)];
    child = spawnMq(args, profArgs(options), { MQ_ADMIN_TOKEN: token });
    port = await listeningPort(child);
    await waitForHttp200(port, '/readyz', START_TIMEOUT_MS);
    return { kind: 'mq-http', port, apiKey };
  };
  return {
    name: 'mq-serve',
    family: 'mq',
    durability: 'fsync before 201 (one member)',
    async start() {
      dir = tempDir('serve');
      [adminPort] = await freePorts(1);
      const connection = await spawnServe();
      apiKey = await benchApiKey(adminPort, token, options.plan ?? null);
      return { ...connection, apiKey };
    },
    async restart(signal, onStopped = () => {}) {
      await killAndWait(child, signal);
      onStopped();
      return spawnServe();
    },
    processes: () => [{ role: 'n1', pid: child.pid }],
    dataDir: () => dir,
    metrics: async () => ({ n1: await scrapeStorage(port) }),
    async stop() {
      if (child !== undefined) await stopChild(child);
      if (dir !== undefined) removeDir(dir);
    },
  };
}

/**
 * Three members (`mq member`, gRPC on free loopback ports) and a standalone `mq gateway`.
 * restart(signal) stops all three members with `signal` (the gateway stays) and starts them
 * again on their data; it resolves once every member listens and the gateway's /readyz is 200.
 * With `options.proxyDelayMs` the members reach one another through the chaos harness's TCP
 * proxies (packages/testkit ProxyMesh), which deliver each chunk that many ms late (0: no delay,
 * the proxies' own cost only), as in a chaos run; the gateway dials the members directly.
 * @param {{cpuProfDir?: string, insecureCluster?: boolean, plan?: object, proxyDelayMs?: number}} options
 */
export function mqClusterTarget(options = {}) {
  const members = [];
  let gateway;
  let dir;
  let spawnMember;
  let gatewayPort;
  let adminPorts;
  let token;
  let mesh;
  return {
    name: 'mq-cluster',
    family: 'mq',
    durability: 'fsync on a majority of 3 before 201',
    async start() {
      dir = tempDir('cluster');
      const ids = ['n1', 'n2', 'n3'];
      const ports = await freePorts(6);
      const grpcPorts = ports.slice(0, 3);
      adminPorts = ports.slice(3);
      token = benchAdminToken();
      const peers = ids.map((id, i) => `${id}=127.0.0.1:${grpcPorts[i]}`).join(',');
      const certs = await clusterCertFlags(`${dir}/certs`, ids, ['gateway']);
      const tls = (name) => (options.insecureCluster ? ['--insecure-cluster'] : certs.get(name));
      let peersOf = () => peers;
      if (options.proxyDelayMs !== undefined) {
        mesh = await ProxyMesh.start(ids.map((id, i) => ({ id, address: `127.0.0.1:${grpcPorts[i]}` })));
        if (options.proxyDelayMs > 0) mesh.delay(options.proxyDelayMs);
        peersOf = (id) => Object.entries(mesh.peersFor(id)).map(([peer, address]) => `${peer}=${address}`).join(',');
      }
      spawnMember = (id, i) =>
        spawnMq(
          ['member', ...tls(id), '--id', id, '--peers', peersOf(id), '--listen', `127.0.0.1:${grpcPorts[i]}`, '--data', `${dir}/${id}`, '--port', '0', '--host', '127.0.0.1', '--admin-port', String(adminPorts[i])],
          [...COLOCATED_NODE_FLAGS, ...profArgs(options)],
          { MQ_ADMIN_TOKEN: token },
        );
      for (const [i, id] of ids.entries()) members.push({ id, child: spawnMember(id, i), port: undefined });
      for (const m of members) m.port = await listeningPort(m.child);
      gateway = spawnMq(['gateway', ...tls('gateway'), '--members', peers, '--port', '0', '--host', '127.0.0.1'], [...COLOCATED_NODE_FLAGS, ...profArgs(options)]);
      gatewayPort = await listeningPort(gateway);
      await waitForHttp200(gatewayPort, '/readyz', START_TIMEOUT_MS);
      return { kind: 'mq-http', port: gatewayPort, apiKey: await benchApiKey(adminPorts[0], token, options.plan ?? null) };
    },
    async restart(signal, onStopped = () => {}) {
      await Promise.all(members.map((m) => killAndWait(m.child, signal)));
      onStopped();
      for (const [i, m] of members.entries()) m.child = spawnMember(m.id, i);
      for (const m of members) m.port = await listeningPort(m.child);
      await waitForHttp200(gatewayPort, '/readyz', START_TIMEOUT_MS);
      return null;
    },
    /**
     * SIGKILLs member `id`, deletes its data directory (as a lost disk) and starts it again on
     * an empty one; resolves once it listens. The others and the gateway keep running.
     */
    async wipe(id) {
      const i = members.findIndex((m) => m.id === id);
      if (i < 0) throw new Error(`no member ${id}`);
      const m = members[i];
      await killAndWait(m.child, 'SIGKILL');
      // Not rmSync: deleting gigabytes blocked this process's proxies (--proxy-delay-ms) for
      // about a second, and the leaders, hearing no quorum, stepped down.
      await removeDirAsync(`${dir}/${id}`);
      m.child = spawnMember(id, i);
      m.port = await listeningPort(m.child);
    },
    /**
     * By member id, its /metrics: the open one on `port`, and the one with its Raft groups and
     * spool replicas on `adminPort`, behind `token`.
     */
    memberPorts: () => new Map(members.map((m, i) => [m.id, { port: m.port, adminPort: adminPorts[i], token }])),
    processes: () => [...members.map((m) => ({ role: m.id, pid: m.child.pid })), { role: 'gateway', pid: gateway.pid }],
    dataDir: () => dir,
    async metrics() {
      const out = {};
      for (const m of members) out[m.id] = await scrapeStorage(m.port);
      return out;
    },
    async stop() {
      await Promise.all([gateway, ...members.map((m) => m.child)].filter(Boolean).map((c) => stopChild(c)));
      members.length = 0;
      gateway = undefined;
      await mesh?.close();
      mesh = undefined;
      if (dir !== undefined) removeDir(dir);
      dir = undefined;
    },
  };
}

function profArgs(options) {
  return options.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`];
}

/**
 * The storage counters a member exports on /metrics (packages/cli/src/status-metrics.ts): fsyncs
 * (synced batches), log entries and bytes written, and the fsync latency histogram's sum, each
 * summed over the member's samples. Null fields when the member does not export them.
 */
export async function scrapeStorage(port) {
  const out = { fsyncs: null, entriesWritten: null, bytesWritten: null, fsyncSeconds: null };
  let text;
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    text = await res.text();
  } catch {
    return out;
  }
  const fields = {
    mq_member_storage_fsyncs_total: 'fsyncs',
    mq_member_storage_entries_written_total: 'entriesWritten',
    mq_member_storage_bytes_written_total: 'bytesWritten',
    mq_member_storage_fsync_seconds_sum: 'fsyncSeconds',
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line === '') continue;
    const m = line.match(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/);
    if (m === null || fields[m[1]] === undefined) continue;
    const value = Number(m[3]);
    if (Number.isFinite(value)) out[fields[m[1]]] = (out[fields[m[1]]] ?? 0) + value;
  }
  return out;
}
