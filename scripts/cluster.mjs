#!/usr/bin/env node
// `npm run cluster`: three members and a gateway on loopback, for trying the cluster out.
//   members n1, n2, n3: gRPC (Raft + member RPC) on 127.0.0.1:7001-7003,
//                       their own HTTP (/healthz, /readyz, /metrics, /v1) on 127.0.0.1:8091-8093
//                       and their admin API on 127.0.0.1:8081-8083 (token in .cluster/admin-token)
//   gateway:            the API on 127.0.0.1:8080 (`--port N` or MQ_PORT=N to move it)
// Data lives in ./.cluster/<id>/ (kept between runs; delete .cluster/ to start afresh), each
// process's log in ./.cluster/logs/<id>.log. Ctrl-C (or SIGTERM) stops every process gracefully
// and waits for them; a second Ctrl-C kills them at once. Run after `npm run build` (the npm
// script does that first).
import { spawn } from 'node:child_process';
import { COLOCATED_NODE_FLAGS } from './colocated-node-flags.mjs';
import { MQ_LAUNCHER, launcherEnv } from './mq-launcher.mjs';
import { clusterCertFlags } from './cluster-certs.mjs';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CLI_MAIN = `${ROOT}packages/cli/dist/main.js`;
const STATE_DIR = `${ROOT}.cluster`;
const LOG_DIR = `${STATE_DIR}/logs`;
/**
 * Every port is the base port plus an offset: with the default base 7000, gRPC 7001-7003, admin
 * 8081-8083, member HTTP 8091-8093 and the API 8080 (`--base-port` moves them all at once).
 */
const BASE_PORT_DEFAULT = 7000;
const membersAt = (base) =>
  ['n1', 'n2', 'n3'].map((id, i) => ({
    id,
    grpcPort: base + 1 + i,
    adminPort: base + 1081 + i,
    httpPort: base + 1091 + i,
  }));
/** Where `npm run cluster` keeps the CA and each process's certificate (mutual TLS). */
const CERTS_DIR = `${STATE_DIR}/certs`;
/** The admin token every member shares (created with a random token when missing). */
const ADMIN_TOKEN_FILE = `${STATE_DIR}/admin-token`;
const API_PORT_OFFSET = 1080;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

const USAGE = `Usage: npm run cluster [-- --port PORT] [-- --base-port BASE]

Three members (gRPC 127.0.0.1:7001-7003, HTTP 127.0.0.1:8091-8093, admin API 127.0.0.1:8081-8083)
and a gateway serving the API on http://127.0.0.1:PORT/v1 (default 8080, or MQ_PORT). --base-port
moves every port by the same amount (default ${BASE_PORT_DEFAULT}: the ports above). Every link
between the processes is mutual TLS with certificates made in .cluster/certs on the first run.
Data in .cluster/, logs in .cluster/logs/, the admin token in .cluster/admin-token (make a key with
\`mq admin --token-file .cluster/admin-token accounts create NAME\`). Ctrl-C stops everything.`;

function parseCommandLine() {
  let values;
  try {
    ({ values } = parseArgs({
      options: { port: { type: 'string' }, 'base-port': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`cluster: ${error.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const baseText = values['base-port'] ?? String(BASE_PORT_DEFAULT);
  const base = Number(baseText);
  if (!/^\d{1,5}$/.test(baseText) || base < 1 || base + 1093 > 65_535) {
    process.stderr.write(`cluster: --base-port must be 1-${65_535 - 1093}, got '${baseText}'\n`);
    process.exit(2);
  }
  const members = membersAt(base);
  const text = values.port ?? process.env.MQ_PORT ?? String(base + API_PORT_OFFSET);
  const port = Number(text);
  const taken = members.flatMap((m) => [m.grpcPort, m.httpPort, m.adminPort]);
  if (!/^\d{1,5}$/.test(text) || port < 1 || port > 65_535 || taken.includes(port)) {
    process.stderr.write(`cluster: the API port must be 1-65535 and not one of ${taken.join(', ')}, got '${text}'\n`);
    process.exit(2);
  }
  return { apiPort: port, members };
}

const children = new Map(); // name -> ChildProcess
let stopping = false;

/** Starts `mq <args>` in its own process group (so Ctrl-C reaches only this script, once). */
function startChild(name, args) {
  const logPath = `${LOG_DIR}/${name}.log`;
  const log = openSync(logPath, 'a');
  const env = { ...process.env, MQ_LOG_LEVEL: process.env.MQ_LOG_LEVEL ?? 'info' };
  for (const key of ['MQ_ID', 'MQ_PEERS', 'MQ_LISTEN', 'MQ_DATA_DIR', 'MQ_PORT', 'MQ_HOST', 'MQ_MEMBERS', 'MQ_ADMIN_PORT', 'MQ_ADMIN_HOST', 'MQ_ADMIN_TOKEN', 'MQ_ADMIN_TOKEN_FILE', 'MQ_CLUSTER_CA', 'MQ_CLUSTER_CERT', 'MQ_CLUSTER_KEY', 'MQ_INSECURE_CLUSTER']) delete env[key];
  const child = spawn(MQ_LAUNCHER, args, { stdio: ['ignore', log, log], env: launcherEnv(env, COLOCATED_NODE_FLAGS), detached: true });
  closeSync(log);
  children.set(name, child);
  child.once('exit', (code, signal) => {
    children.delete(name);
    if (!stopping) {
      process.stderr.write(`cluster: ${name} exited (${signal ?? `code ${code}`}); last lines of ${logPath}:\n${tail(logPath, 10)}\n`);
    }
    if (children.size === 0) process.exit(stopping ? 0 : 1);
  });
  return child;
}

function tail(path, lines) {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** SIGTERM every child once; SIGKILL what is left after the grace period or a second signal. */
function stopAll() {
  if (stopping) {
    for (const child of children.values()) child.kill('SIGKILL');
    return;
  }
  stopping = true;
  process.stdout.write('cluster: stopping (Ctrl-C again to kill at once)...\n');
  for (const child of children.values()) child.kill('SIGTERM');
  setTimeout(() => {
    for (const child of children.values()) child.kill('SIGKILL');
  }, STOP_GRACE_MS).unref();
  if (children.size === 0) process.exit(0);
}

async function waitReady(url, deadlineMs) {
  while (Date.now() < deadlineMs && !stopping) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

async function main() {
  const { apiPort, members: MEMBERS } = parseCommandLine();
  if (!existsSync(CLI_MAIN)) {
    process.stderr.write(`cluster: ${CLI_MAIN} is missing; run \`npm run build\` first (npm run cluster does)\n`);
    process.exit(1);
  }
  mkdirSync(LOG_DIR, { recursive: true });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stopAll);
  // Whatever happens to this script, its children do not outlive it.
  process.on('exit', () => {
    for (const child of children.values()) child.kill('SIGKILL');
  });
  const peers = MEMBERS.map((m) => `${m.id}=127.0.0.1:${m.grpcPort}`).join(',');
  if (!existsSync(ADMIN_TOKEN_FILE)) {
    writeFileSync(ADMIN_TOKEN_FILE, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  }
  const certs = await clusterCertFlags(CERTS_DIR, MEMBERS.map((m) => m.id), ['gateway']);
  for (const m of MEMBERS) {
    startChild(m.id, [
      'member', ...certs.get(m.id), '--id', m.id, '--peers', peers, '--data', `${STATE_DIR}/${m.id}`,
      '--port', String(m.httpPort), '--host', '127.0.0.1',
      '--admin-port', String(m.adminPort), '--admin-token-file', ADMIN_TOKEN_FILE,
    ]);
  }
  startChild('gateway', [
    'gateway', '--members', peers, '--port', String(apiPort), '--host', '127.0.0.1', ...certs.get('gateway'),
  ]);
  process.stdout.write(
    [
      'cluster: starting 3 members and a gateway',
      ...MEMBERS.map((m) => `  ${m.id}: gRPC 127.0.0.1:${m.grpcPort}, HTTP http://127.0.0.1:${m.httpPort}, admin http://127.0.0.1:${m.adminPort} (data .cluster/${m.id}, log .cluster/logs/${m.id}.log)`),
      `  gateway: http://127.0.0.1:${apiPort}/v1 (log .cluster/logs/gateway.log)`,
      '',
    ].join('\n'),
  );
  const ready = await waitReady(`http://127.0.0.1:${apiPort}/readyz`, Date.now() + READY_TIMEOUT_MS);
  if (stopping) return;
  if (!ready) {
    process.stderr.write(`cluster: not ready within ${READY_TIMEOUT_MS / 1000} s; see .cluster/logs/. Stopping.\n`);
    stopAll();
    return;
  }
  process.stdout.write(`cluster: ready. API on http://127.0.0.1:${apiPort}/v1 (keys: mq admin --token-file .cluster/admin-token accounts create NAME). Ctrl-C to stop.\n`);
}

main().catch((error) => {
  process.stderr.write(`cluster: ${error?.stack ?? error}\n`);
  stopAll();
});
