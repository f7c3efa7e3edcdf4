#!/usr/bin/env node
// HTTP benchmark of the durable deployments: three `mq member` processes behind an `mq gateway`
// on loopback (every send replicated to a majority and fsynced before its 201), and `mq serve`
// (one member, fsynced). N concurrent keep-alive clients, fixed-size payloads, phases bounded in
// count and time:
//   1. send          closed loop: durable sends/s and per-request latency
//   2. receive+ack   closed loop over what phase 1 sent: cycles/s and cycle latency
//   3. paced send    sends issued at a fixed rate (default the 5,000/s target) by up to
//                    --paced-clients concurrent requests (256, so the client count is not what
//                    limits the rate): latency from the scheduled start, so queueing shows
// Flags (optional): --target cluster|serve|both (both) --clients 64 --payload 128 --count 200000
//   --seconds 10 --rate 5000 --paced-seconds 5 --paced-clients 256
//   --cpu-prof (profiles under bench-results/prof)
//   --keep (keep the data and logs directory)
//   --node-flags=F,G   node flags of the cluster's processes (default: those `npm run cluster`
//                      gives its co-located processes, scripts/colocated-node-flags.mjs;
//                      `--node-flags none` for V8's defaults). `mq serve` runs with none.
// Prints a table and writes bench-results/cluster.json.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { COLOCATED_NODE_FLAGS } from '../colocated-node-flags.mjs';
import { MQ_LAUNCHER, launcherEnv } from '../mq-launcher.mjs';
import { clusterCertFlags } from '../cluster-certs.mjs';
import { benchAdminToken, benchApiKey } from './lib/mq-accounts.mjs';
import {
  REPO_ROOT,
  Samples,
  machineInfo,
  machineLine,
  printTable,
  processCpuMs,
  spawnTracked,
  stopChild,
  summarize,
  writeResults,
} from './lib/index.mjs';

const TARGET_SENDS_PER_S = 5_000;
const TARGET_P99_MS = 50;
const WARMUP_MESSAGES = 5_000;
const PACED_WINDOW_MS = 100;
const PACED_WORST_WINDOWS = 5;
const READY_TIMEOUT_MS = 60_000;

export async function run({ flags = {} } = {}) {
  const config = {
    target: flags.target ?? 'both',
    clients: intFlag(flags, 'clients', 64, 1, 1024),
    payloadBytes: intFlag(flags, 'payload', 128, 8, 1_048_576),
    count: intFlag(flags, 'count', 200_000, 1, 10_000_000),
    seconds: intFlag(flags, 'seconds', 10, 1, 600),
    rate: intFlag(flags, 'rate', TARGET_SENDS_PER_S, 1, 1_000_000),
    pacedSeconds: intFlag(flags, 'paced-seconds', 5, 1, 600),
    pacedClients: intFlag(flags, 'paced-clients', 256, 1, 4096),
    clusterNodeFlags: nodeFlagsOf(flags['node-flags']),
    cpuProf: flags['cpu-prof'] === true,
    keep: flags.keep === true,
    // Mutual TLS between the members and the gateway, as deployed; --insecure-cluster to compare.
    insecureCluster: flags['insecure-cluster'] === true,
  };
  if (!['cluster', 'serve', 'both'].includes(config.target)) throw new Error('--target must be cluster, serve or both');
  const machine = machineInfo();
  const command = ['node', relative(REPO_ROOT, process.argv[1] ?? 'scripts/bench/cluster.mjs'), ...process.argv.slice(2)].join(' ');
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\n`);
  process.stdout.write(
    `clients ${config.clients}, payload ${config.payloadBytes} B, closed-loop phases bounded by ${config.count} messages and ${config.seconds} s, ` +
      `paced phase ${config.rate}/s for ${config.pacedSeconds} s by up to ${config.pacedClients} clients\n\n`,
  );
  const runs = [];
  for (const target of config.target === 'both' ? ['cluster', 'serve'] : [config.target]) {
    const deployment = target === 'cluster' ? await startCluster(config) : await startServe(config);
    process.stdout.write(`${target}: ${deployment.description} (data and logs in ${deployment.dir})\n`);
    try {
      runs.push({ target, description: deployment.description, phases: await runPhases(deployment, config) });
    } finally {
      await deployment.stop();
    }
  }
  report({ machine, command, config, runs });
}

// ---- deployments ----------------------------------------------------------------------------

async function freePorts(count) {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(servers.map((s) => new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s.address().port)))));
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** The admin token of the bench's deployments (they check API keys; see lib/mq-accounts.mjs). */
const ADMIN_TOKEN = benchAdminToken();

function spawnMq(name, args, cpuProf, nodeFlags = []) {
  const nodeArgs = [...nodeFlags];
  if (cpuProf) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${REPO_ROOT}bench-results/prof`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`);
  const child = spawnTracked(MQ_LAUNCHER, args, {
    env: launcherEnv({ ...process.env, MQ_LOG_LEVEL: 'warn', MQ_ADMIN_TOKEN: ADMIN_TOKEN }, nodeArgs),
  });
  // Keep the pipes drained; warnings and errors (MQ_LOG_LEVEL=warn) are printed when it stops.
  const log = [];
  const keep = (chunk) => {
    if (log.length < 1_000) log.push(chunk.toString('utf8'));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.logText = () => log.join('');
  child.benchName = name;
  return child;
}

async function waitReady(url, children) {
  const deadlineMs = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < deadlineMs) {
    const dead = children.find((child) => child.exitCode !== null || child.signalCode !== null);
    if (dead !== undefined) throw new Error(`${dead.benchName} exited before ready:\n${dead.logText()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (response.status === 200) return;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`not ready within ${READY_TIMEOUT_MS} ms: ${url}`);
}

function deploymentOf(dir, children, port, description, keep) {
  return {
    dir,
    port,
    description,
    pids: children.map((child) => ({ name: child.benchName, pid: child.pid })),
    stop: async () => {
      await Promise.all(children.map((child) => stopChild(child, 15_000)));
      for (const child of children) {
        const text = child.logText();
        if (text.trim() !== '') process.stderr.write(`--- ${child.benchName} log:\n${text.slice(-4_000)}\n`);
      }
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startCluster(config) {
  const dir = mkdtempSync(join(os.tmpdir(), 'mq-bench-cluster-'));
  const ports = await freePorts(10);
  const ids = ['n1', 'n2', 'n3'];
  const peers = ids.map((id, i) => `${id}=127.0.0.1:${ports[i]}`).join(',');
  const certs = await clusterCertFlags(join(dir, 'certs'), ids, ['gateway']);
  const tls = (name) => (config.insecureCluster ? ['--insecure-cluster'] : certs.get(name));
  const children = ids.map((id, i) =>
    spawnMq(id, ['member', ...tls(id), '--id', id, '--peers', peers, '--data', join(dir, id), '--port', String(ports[3 + i]), '--host', '127.0.0.1', '--admin-port', String(ports[7 + i])], config.cpuProf, config.clusterNodeFlags),
  );
  const gatewayPort = ports[6];
  children.push(spawnMq('gateway', ['gateway', ...tls('gateway'), '--members', peers, '--port', String(gatewayPort), '--host', '127.0.0.1'], config.cpuProf, config.clusterNodeFlags));
  try {
    for (let i = 0; i < 3; i += 1) await waitReady(`http://127.0.0.1:${ports[3 + i]}/readyz`, children);
    await waitReady(`http://127.0.0.1:${gatewayPort}/readyz`, children);
    apiKey = await benchApiKey(ports[7], ADMIN_TOKEN);
  } catch (error) {
    await deploymentOf(dir, children, gatewayPort, '', config.keep).stop();
    throw error;
  }
  const flags = config.clusterNodeFlags.length > 0 ? config.clusterNodeFlags.join(' ') : "V8's defaults";
  return deploymentOf(dir, children, gatewayPort, `three members behind a gateway, each write fsynced on a majority; node flags: ${flags}`, config.keep);
}

async function startServe(config) {
  const dir = mkdtempSync(join(os.tmpdir(), 'mq-bench-serve-'));
  const [port, adminPort] = await freePorts(2);
  const children = [spawnMq('serve', ['serve', '--data', join(dir, 'data'), '--port', String(port), '--host', '127.0.0.1', '--admin-port', String(adminPort)], config.cpuProf)];
  try {
    await waitReady(`http://127.0.0.1:${port}/readyz`, children);
    apiKey = await benchApiKey(adminPort, ADMIN_TOKEN);
  } catch (error) {
    await deploymentOf(dir, children, port, '', config.keep).stop();
    throw error;
  }
  return deploymentOf(dir, children, port, 'mq serve: one member with the gateway inside, each write fsynced', config.keep);
}

// ---- HTTP -----------------------------------------------------------------------------------

/** The key of the account `bench` on the deployment being measured (set when it starts). */
let apiKey = '';

class Api {
  constructor(agent, port) {
    this.agent = agent;
    this.port = port;
  }

  /** One request; resolves {status, headers, body: Buffer}. Rejects only on transport failure. */
  request(method, path, headers, body) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { agent: this.agent, host: '127.0.0.1', port: this.port, method, path, headers: { authorization: `Bearer ${apiKey}`, 'content-length': body === undefined ? 0 : body.length, ...headers } },
        (res) => {
          const chunks = [];
          res.on('data', (chunk) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  createQueue(name) {
    return this.request('PUT', `/v1/spools/default/queues/${name}`, { 'content-type': 'application/json' }, Buffer.from('{}'));
  }

  send(queue, payload) {
    return this.request('POST', `/v1/spools/default/queues/${queue}/send`, { 'content-type': 'application/octet-stream' }, payload);
  }

  receive(queue, waitSeconds) {
    return this.request('POST', `/v1/spools/default/queues/${queue}/recv?waitSeconds=${waitSeconds}`, {});
  }

  ack(lease) {
    return this.request('POST', '/v1/spools/default/ack', { 'svc-lease': lease });
  }
}

async function mustCreate(api, queue) {
  const answer = await api.createQueue(queue);
  if (answer.status !== 201) throw new Error(`create ${queue}: ${answer.status} ${answer.body}`);
}

// ---- phases ---------------------------------------------------------------------------------

async function runPhases(deployment, config) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.clients, maxFreeSockets: config.clients });
  const api = new Api(agent, deployment.port);
  try {
    await warmUp(api, config);
    const sendPhase = await withCpu(deployment.pids, () => phaseSend(api, 'bench', config));
    const cyclePhase = await withCpu(deployment.pids, () => phaseReceiveAck(api, 'bench', sendPhase.ops, config));
    const pacedAgent = new http.Agent({ keepAlive: true, maxSockets: config.pacedClients, maxFreeSockets: config.pacedClients });
    try {
      const pacedApi = new Api(pacedAgent, deployment.port);
      const pacedPhase = await withCpu(deployment.pids, () => phasePaced(pacedApi, 'bench-paced', config));
      return [sendPhase, cyclePhase, pacedPhase];
    } finally {
      pacedAgent.destroy();
    }
  } finally {
    agent.destroy();
  }
}

async function warmUp(api, config) {
  await mustCreate(api, 'warmup');
  const payload = Buffer.alloc(config.payloadBytes, 0x61);
  let sent = 0;
  await parallel(config.clients, async () => {
    while (sent < WARMUP_MESSAGES) {
      sent += 1;
      await api.send('warmup', payload);
    }
  });
  await parallel(config.clients, async () => {
    for (let i = 0; i < WARMUP_MESSAGES; i += 1) {
      const delivery = await api.receive('warmup', 0);
      if (delivery.status !== 200) return;
      await api.ack(delivery.headers['svc-lease']);
    }
  });
}

async function phaseSend(api, queue, config) {
  await mustCreate(api, queue);
  const payload = Buffer.alloc(config.payloadBytes, 0x62);
  const latencies = new Samples();
  const errors = new Errors();
  let issued = 0;
  let done = 0;
  const startMs = performance.now();
  const deadlineMs = startMs + config.seconds * 1000;
  await parallel(config.clients, async () => {
    while (issued < config.count && performance.now() < deadlineMs) {
      issued += 1;
      const t0 = performance.now();
      const answer = await api.send(queue, payload).catch((error) => ({ status: error.code ?? 'transport' }));
      if (answer.status === 201) {
        done += 1;
        latencies.add(performance.now() - t0);
      } else errors.add(answer.status);
    }
  });
  return phaseResult('send', done, performance.now() - startMs, latencies, errors);
}

async function phaseReceiveAck(api, queue, available, config) {
  const latencies = new Samples();
  const errors = new Errors();
  let claimed = 0;
  let done = 0;
  let drained = false;
  const startMs = performance.now();
  const deadlineMs = startMs + config.seconds * 1000;
  await parallel(config.clients, async () => {
    while (!drained && claimed < available && performance.now() < deadlineMs) {
      claimed += 1;
      const t0 = performance.now();
      const delivery = await api.receive(queue, 0).catch((error) => ({ status: error.code ?? 'transport' }));
      if (delivery.status === 204) {
        drained = true;
        return;
      }
      if (delivery.status !== 200) {
        errors.add(`recv ${delivery.status}`);
        continue;
      }
      const acked = await api.ack(delivery.headers['svc-lease']).catch((error) => ({ status: error.code ?? 'transport' }));
      if (acked.status === 204) {
        done += 1;
        latencies.add(performance.now() - t0);
      } else errors.add(`ack ${acked.status}`);
    }
  });
  return phaseResult('receive+ack', done, performance.now() - startMs, latencies, errors);
}

/**
 * Sends issued on a fixed schedule (`rate` per second) by up to `pacedClients` concurrent
 * requests. Latency runs from the scheduled start, so time a send waited for a free client counts.
 * One untimed round of `pacedClients` concurrent sends first opens the phase's connections, as
 * long-running clients hold them: TCP connects are not what the phase measures.
 */
async function phasePaced(api, queue, config) {
  await mustCreate(api, queue);
  const payload = Buffer.alloc(config.payloadBytes, 0x63);
  await parallel(config.pacedClients, () => api.send(queue, payload));
  const latencies = new Samples();
  const errors = new Errors();
  const total = config.rate * config.pacedSeconds;
  const intervalMs = 1000 / config.rate;
  const windows = new LatencyWindows(PACED_WINDOW_MS, config.pacedSeconds * 1000);
  let issued = 0;
  let done = 0;
  const startMs = performance.now();
  const startedAt = new Date().toISOString();
  await parallel(config.pacedClients, async () => {
    while (issued < total) {
      const scheduledMs = startMs + issued * intervalMs;
      issued += 1;
      const aheadMs = scheduledMs - performance.now();
      if (aheadMs > 1) await new Promise((resolve) => setTimeout(resolve, aheadMs));
      const answer = await api.send(queue, payload).catch((error) => ({ status: error.code ?? 'transport' }));
      if (answer.status === 201) {
        done += 1;
        const latencyMs = performance.now() - scheduledMs;
        latencies.add(latencyMs);
        windows.add(scheduledMs - startMs, latencyMs);
      } else errors.add(answer.status);
    }
  });
  const result = phaseResult(`paced send ${config.rate}/s`, done, performance.now() - startMs, latencies, errors);
  return { ...result, rate: config.rate, startedAt, worstWindows: windows.worst(PACED_WORST_WINDOWS) };
}

/**
 * The slowest answer per window of scheduled time: tells a tail spread over the run (queueing)
 * from one made of stalls (a pause of some process holds every request scheduled in it).
 */
class LatencyWindows {
  constructor(windowMs, spanMs) {
    this.windowMs = windowMs;
    this.maxMs = new Float64Array(Math.ceil(spanMs / windowMs) + 1);
    this.over = new Uint32Array(this.maxMs.length);
  }

  add(atMs, latencyMs) {
    const i = Math.min(this.maxMs.length - 1, Math.floor(atMs / this.windowMs));
    if (latencyMs > this.maxMs[i]) this.maxMs[i] = latencyMs;
    if (latencyMs >= TARGET_P99_MS) this.over[i] += 1;
  }

  /** The `count` windows with the slowest answers: start (ms into the phase), max latency, answers over the p99 target. */
  worst(count) {
    return [...this.maxMs.keys()]
      .sort((a, b) => this.maxMs[b] - this.maxMs[a])
      .slice(0, count)
      .map((i) => ({ atMs: i * this.windowMs, maxMs: Math.round(this.maxMs[i] * 100) / 100, overTarget: this.over[i] }));
  }
}

/** Runs a phase and adds the CPU each server process spent on it (ms, and µs per op summed). */
async function withCpu(pids, phase) {
  const before = pids.map(({ pid }) => processCpuMs(pid));
  const selfBefore = process.cpuUsage();
  const result = await phase();
  const after = pids.map(({ pid }) => processCpuMs(pid));
  const self = process.cpuUsage(selfBefore);
  const elapsedMs = result.seconds * 1000;
  const perProcess = {};
  let totalMs = 0;
  pids.forEach(({ name }, i) => {
    const spent = before[i] === undefined || after[i] === undefined ? null : after[i] - before[i];
    perProcess[name] = spent === null ? null : round((100 * spent) / elapsedMs);
    totalMs += spent ?? 0;
  });
  return {
    ...result,
    serverCpuPctByProcess: perProcess,
    serverCpuPct: round((100 * totalMs) / elapsedMs),
    serverCpuUsPerOp: result.ops === 0 ? null : round((1000 * totalMs) / result.ops),
    loadGenCpuPct: round((100 * (self.user + self.system)) / 1000 / elapsedMs),
  };
}

// ---- helpers --------------------------------------------------------------------------------

class Errors {
  constructor() {
    this.counts = {};
  }
  add(key) {
    this.counts[key] = (this.counts[key] ?? 0) + 1;
  }
}

function phaseResult(name, ops, elapsedMs, latencies, errors) {
  const latency = summarize(latencies.toArray());
  return {
    name,
    ops,
    seconds: Number((elapsedMs / 1000).toFixed(3)),
    opsPerS: Math.round(ops / (elapsedMs / 1000)),
    latencyMs: { p50: round(latency.p50), p90: round(latency.p90), p99: round(latency.p99), max: round(latency.max) },
    errors: errors.counts,
  };
}

function report({ machine, command, config, runs }) {
  process.stdout.write('\n');
  printTable(
    ['target', 'phase', 'ops', 'seconds', 'ops/s', 'p50 ms', 'p99 ms', 'server cpu %', 'server us/op', 'loadgen cpu %', 'errors'],
    runs.flatMap((r) =>
      r.phases.map((p) => [
        r.target,
        p.name,
        p.ops,
        p.seconds,
        p.opsPerS,
        p.latencyMs.p50,
        p.latencyMs.p99,
        p.serverCpuPct ?? '-',
        p.serverCpuUsPerOp ?? '-',
        p.loadGenCpuPct,
        Object.entries(p.errors).map(([k, v]) => `${k}:${v}`).join(' ') || '0',
      ]),
    ),
  );
  for (const r of runs) {
    for (const p of r.phases) {
      const shares = Object.entries(p.serverCpuPctByProcess).map(([name, pct]) => `${name} ${pct ?? '-'}%`).join(', ');
      process.stdout.write(`  ${r.target} ${p.name}: cpu by process: ${shares}\n`);
      if (p.worstWindows !== undefined) {
        const worst = p.worstWindows.map((w) => `${w.atMs} ms: ${w.maxMs} ms (${w.overTarget} over ${TARGET_P99_MS} ms)`).join(', ');
        process.stdout.write(`  ${r.target} ${p.name}: slowest ${PACED_WINDOW_MS} ms windows: ${worst}\n`);
      }
    }
  }
  process.stdout.write('ops: a durable send (201); a receive+ack cycle (two requests). Latency of the paced phase counts from the scheduled start.\n');
  process.stdout.write('server us/op: CPU of every server process per op, summed; 1e6 / it = ops/s the processes could do on one dedicated core.\n');
  const targets = {};
  const cluster = runs.find((r) => r.target === 'cluster');
  if (cluster !== undefined) {
    const [sendPhase, , pacedPhase] = cluster.phases;
    targets.clusterSendsPerS = { target: TARGET_SENDS_PER_S, measured: sendPhase.opsPerS, met: sendPhase.opsPerS >= TARGET_SENDS_PER_S };
    const pacedOk = pacedPhase.rate >= TARGET_SENDS_PER_S && pacedPhase.latencyMs.p99 < TARGET_P99_MS && pacedPhase.opsPerS >= 0.95 * TARGET_SENDS_PER_S;
    targets.clusterP99AtTargetRateMs = { target: TARGET_P99_MS, rate: pacedPhase.rate, achievedRate: pacedPhase.opsPerS, measured: pacedPhase.latencyMs.p99, met: pacedOk };
    process.stdout.write(
      `targets (cluster): durable sends/s ${sendPhase.opsPerS} (>= ${TARGET_SENDS_PER_S}: ${targets.clusterSendsPerS.met ? 'met' : 'NOT met'}), ` +
        `p99 at ${pacedPhase.rate}/s ${pacedPhase.latencyMs.p99} ms over an achieved ${pacedPhase.opsPerS}/s (< ${TARGET_P99_MS} ms: ${pacedOk ? 'met' : 'NOT met'})\n`,
    );
  }
  const loadAvg1mAtEnd = Number(os.loadavg()[0].toFixed(2));
  process.stdout.write(`load average (1 min): ${machine.loadAvg1m} at start, ${loadAvg1mAtEnd} at end, on ${machine.cores} cores\n`);
  const path = writeResults('cluster', { benchmark: 'cluster', startedAt: new Date().toISOString(), command, machine, loadAvg1mAtEnd, config, runs, targets });
  process.stdout.write(`wrote ${path}\n`);
}

function parallel(count, task) {
  return Promise.all(Array.from({ length: count }, () => task()));
}

/** `--node-flags`: absent means the co-located flags, `none` means none, else a comma list. */
function nodeFlagsOf(raw) {
  if (raw === undefined) return COLOCATED_NODE_FLAGS;
  if (raw === 'none') return [];
  if (raw === true || !String(raw).split(',').every((flag) => /^--[a-z0-9-]+(=[^\s,]+)?$/.test(flag))) {
    throw new Error('--node-flags takes none or a comma-separated list of --flag[=value]');
  }
  return String(raw).split(',');
}

function intFlag(flags, name, fallback, min, max) {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`--${name} must be an integer in ${min}..${max}`);
  return value;
}

function round(value) {
  return Number.isFinite(value) ? Number(value.toFixed(2)) : null;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flags = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 1) {
    const key = argv[i].replace(/^--/, '');
    if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags[key] = argv[++i];
    else flags[key] = true;
  }
  run({ flags }).then(
    () => process.exit(0),
    (error) => {
      process.stderr.write(`bench cluster failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
