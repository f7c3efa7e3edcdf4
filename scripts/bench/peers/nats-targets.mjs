// NATS JetStream targets: one nats-server or three in a cluster on loopback, file storage; the
// load generator makes work-queue streams (nats-driver.mjs). `syncAlways` asks for
// `jetstream { sync_interval: always }` (fsync every write before the PubAck), which nats-server
// added in 2.10. Every NATS target runs the binary nats-binary.mjs resolves (Debian's newer
// package when the installed one is too old); if that binary has no sync_interval the
// sync-always targets report themselves unsupported instead of running something else under
// that name.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killAndWait, spawnTracked, stopChild } from '../lib/index.mjs';
import { resolveNatsServer } from './nats-binary.mjs';
import { freePorts, removeDir, tempDir, waitForText } from './support.mjs';

const START_TIMEOUT_MS = 30_000;

/**
 * @param {{replicas: 1 | 3, syncAlways: boolean}} options
 */
export function natsTarget({ replicas, syncAlways }) {
  const servers = [];
  const confs = [];
  let dir;
  let connection;
  return {
    name: `nats-r${replicas}${syncAlways ? '-sync-always' : ''}`,
    family: 'nats',
    durability: syncAlways ? 'fsync every write before PubAck (sync_interval: always)' : 'default sync (fsync every 2 min; PubAck after write to page cache)',
    /** Null when runnable, else why not (an old nats-server without sync_interval). */
    unsupported() {
      const server = resolveNatsServer();
      if (!syncAlways || server.syncAlways.supported) return null;
      return server.syncAlways.detail;
    },
    /** What ran: the nats-server binary, its version and where it came from. */
    describe() {
      const server = resolveNatsServer();
      return { server: `nats-server ${server.version}`, version: server.version, path: server.path, source: server.source };
    },
    async start() {
      const server = resolveNatsServer();
      dir = tempDir(`nats-r${replicas}`);
      // One call for every port: the OS often hands a just-released port out again, so ports
      // from two calls can collide (a route listener on another server's client port leaves a
      // two-server cluster, where an R3 stream finds "no suitable peers for placement").
      const ports = await freePorts(replicas > 1 ? 2 * replicas : replicas);
      if (ports.length < (replicas > 1 ? 2 * replicas : replicas)) throw new Error(`could not find ${2 * replicas} distinct free ports`);
      const clientPorts = ports.slice(0, replicas);
      const routePorts = ports.slice(replicas);
      for (let i = 0; i < replicas; i += 1) {
        const conf = join(dir, `n${i + 1}.conf`);
        confs.push(conf);
        const lines = [
          `server_name: n${i + 1}`,
          `listen: 127.0.0.1:${clientPorts[i]}`,
          `jetstream { store_dir: "${dir}/n${i + 1}"${syncAlways ? ', sync_interval: always' : ''} }`,
        ];
        if (replicas > 1) {
          const routes = routePorts.filter((_, j) => j !== i).map((p) => `"nats-route://127.0.0.1:${p}"`);
          lines.push(`cluster { name: bench, listen: 127.0.0.1:${routePorts[i]}, routes: [${routes.join(', ')}] }`);
        }
        writeFileSync(conf, `${lines.join('\n')}\n`);
      }
      servers.push(...confs.map((conf, i) => spawnServer(server.path, conf, i)));
      await started(servers);
      connection = { kind: 'nats', servers: clientPorts.map((p) => `127.0.0.1:${p}`), replicas };
      return connection;
    },
    /** Stops every server with `signal`, starts them again on their stores (same ports). */
    async restart(signal, onStopped = () => {}) {
      await Promise.all(servers.map((s) => killAndWait(s.child, signal)));
      onStopped();
      const path = resolveNatsServer().path;
      servers.splice(0, servers.length, ...confs.map((conf, i) => spawnServer(path, conf, i)));
      await started(servers);
      return connection;
    },
    processes: () => servers.map((s) => ({ role: s.role, pid: s.child.pid })),
    dataDir: () => dir,
    metrics: async () => null,
    async stop() {
      await Promise.all(servers.map((s) => stopChild(s.child)));
      servers.length = 0;
      confs.length = 0;
      if (dir !== undefined) removeDir(dir);
      dir = undefined;
    },
  };
}

function spawnServer(path, conf, i) {
  const child = spawnTracked(path, ['-c', conf]);
  return { role: `n${i + 1}`, child, ready: waitForText(child, 'Server is ready', START_TIMEOUT_MS) };
}

async function started(servers) {
  await Promise.all(servers.map((s) => s.ready));
  for (const s of servers) {
    s.child.stdout.resume();
    s.child.stderr.resume();
  }
}
