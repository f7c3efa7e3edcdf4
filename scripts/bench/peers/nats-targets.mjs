// NATS JetStream targets: Debian's nats-server, one server or three in a cluster on loopback,
// file storage; the load generator makes work-queue streams (nats-driver.mjs). `syncAlways`
// asks for `jetstream { sync_interval: always }` (fsync every write before the PubAck), which
// nats-server added in 2.10: on an older server the target reports itself unsupported instead
// of running something else under that name.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnTracked, stopChild } from '../lib/index.mjs';
import { ensureInstalled, freePorts, removeDir, tempDir, waitForText } from './support.mjs';

const START_TIMEOUT_MS = 30_000;

/** `nats-server --version` as text, e.g. "v2.9.10". */
export function natsVersion() {
  const result = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  return (result.stdout ?? '').trim().replace(/^nats-server:\s*/, '');
}

/**
 * Whether the installed nats-server accepts `sync_interval: always` (asks it with -t, which
 * only checks the configuration). Returns {supported, detail}.
 */
export function natsSyncAlwaysSupport() {
  const dir = tempDir('nats-check');
  try {
    const conf = join(dir, 'check.conf');
    writeFileSync(conf, `listen: 127.0.0.1:-1\njetstream { store_dir: "${dir}/js", sync_interval: always }\n`);
    const result = spawnSync('nats-server', ['-c', conf, '-t'], { encoding: 'utf8', timeout: 10_000 });
    const output = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().replace(conf, 'conf');
    return { supported: result.status === 0, detail: output };
  } finally {
    removeDir(dir);
  }
}

/**
 * @param {{replicas: 1 | 3, syncAlways: boolean}} options
 */
export function natsTarget({ replicas, syncAlways }) {
  const servers = [];
  let dir;
  return {
    name: `nats-r${replicas}${syncAlways ? '-sync-always' : ''}`,
    family: 'nats',
    durability: syncAlways ? 'fsync every write before PubAck (sync_interval: always)' : 'default sync (fsync every 2 min; PubAck after write to page cache)',
    /** Null when runnable, else why not (an old nats-server without sync_interval). */
    unsupported() {
      ensureInstalled('nats-server', 'nats-server');
      if (!syncAlways) return null;
      const support = natsSyncAlwaysSupport();
      return support.supported ? null : `nats-server ${natsVersion()} has no sync_interval (2.10+)`;
    },
    async start() {
      ensureInstalled('nats-server', 'nats-server');
      dir = tempDir(`nats-r${replicas}`);
      const clientPorts = await freePorts(replicas);
      const routePorts = replicas > 1 ? await freePorts(replicas) : [];
      for (let i = 0; i < replicas; i += 1) {
        const conf = join(dir, `n${i + 1}.conf`);
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
        const child = spawnTracked('nats-server', ['-c', conf]);
        servers.push({ role: `n${i + 1}`, child, ready: waitForText(child, 'Server is ready', START_TIMEOUT_MS) });
      }
      await Promise.all(servers.map((s) => s.ready));
      for (const s of servers) {
        s.child.stdout.resume();
        s.child.stderr.resume();
      }
      return { kind: 'nats', servers: clientPorts.map((p) => `127.0.0.1:${p}`), replicas };
    },
    processes: () => servers.map((s) => ({ role: s.role, pid: s.child.pid })),
    metrics: async () => null,
    async stop() {
      await Promise.all(servers.map((s) => stopChild(s.child)));
      if (dir !== undefined) removeDir(dir);
    },
  };
}
