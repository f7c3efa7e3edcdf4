#!/usr/bin/env node
// HTTP benchmark of the in-memory local variant. Starts `mq local` as a child process (so the
// load generator does not share the server's event loop) and drives it with N concurrent
// keep-alive clients and fixed-size payloads, in phases bounded in count and in time:
//   1. send            sends/s and per-request latency
//   2. receive+ack     cycles/s (receive then ack of what phase 1 sent) and cycle latency
//   3. mixed           producers paced at a fixed rate while consumers receive and ack:
//                      end-to-end latency from send start to ack done
// Flags (all optional): --clients 64 --payload 128 --count 300000 --seconds 10
//   --mixed-rate <msgs/s> (default half the slower of phases 1 and 2) --mixed-count 60000
//   --cpu-prof (profile the server; .cpuprofile files under bench-results/prof)
// Prints a table and writes bench-results/local.json.
import http from 'node:http';
import os from 'node:os';
import { relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
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
  waitForLogLine,
  writeResults,
} from './lib/index.mjs';
import { MQ_LAUNCHER, launcherEnv } from '../mq-launcher.mjs';

const TARGET_SENDS_PER_S = 15_000;
const TARGET_CYCLES_PER_S = 7_000;
const WARMUP_MESSAGES = 5_000;

export async function run({ flags = {} } = {}) {
  const config = {
    clients: intFlag(flags, 'clients', 64, 1, 1024),
    payloadBytes: intFlag(flags, 'payload', 128, 8, 1_048_576),
    count: intFlag(flags, 'count', 300_000, 1, 10_000_000),
    seconds: intFlag(flags, 'seconds', 10, 1, 600),
    mixedCount: intFlag(flags, 'mixed-count', 60_000, 1, 10_000_000),
    mixedRate: flags['mixed-rate'] === undefined ? undefined : intFlag(flags, 'mixed-rate', 0, 1, 1_000_000),
    cpuProf: flags['cpu-prof'] === true,
  };
  const machine = machineInfo();
  const command = ['node', relative(REPO_ROOT, process.argv[1] ?? 'scripts/bench/local.mjs'), ...process.argv.slice(2)].join(' ');
  process.stdout.write(`${machineLine(machine)}\ncommand: ${command}\n`);
  process.stdout.write(`clients ${config.clients}, payload ${config.payloadBytes} B, phases bounded by ${config.count} messages and ${config.seconds} s\n\n`);

  const server = await startServer(config.cpuProf);
  const agent = new http.Agent({ keepAlive: true, maxSockets: config.clients, maxFreeSockets: config.clients });
  const api = new Api(agent, server.port);
  try {
    await warmUp(api, config);
    const pid = server.child.pid;
    const sendPhase = await withCpu(pid, () => phaseSend(api, 'bench', config));
    const cyclePhase = await withCpu(pid, () => phaseReceiveAck(api, 'bench', sendPhase.ops, config));
    const mixedRate = config.mixedRate ?? Math.max(100, Math.floor(Math.min(sendPhase.opsPerS, cyclePhase.opsPerS) / 2));
    const mixedPhase = await withCpu(pid, () => phaseMixed(api, 'bench-mixed', { ...config, rate: mixedRate }));
    report({ machine, command, config, phases: [sendPhase, cyclePhase, mixedPhase] });
  } finally {
    agent.destroy();
    const code = await stopChild(server.child);
    if (code !== 0) process.stderr.write(`mq local exited with ${code}\n`);
  }
}

// ---- server ---------------------------------------------------------------------------------

async function startServer(cpuProf) {
  const nodeArgs = cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${REPO_ROOT}bench-results/prof`] : [];
  const child = spawnTracked(MQ_LAUNCHER, ['local', '--port', '0', '--host', '127.0.0.1'], {
    env: launcherEnv({ ...process.env, MQ_LOG_LEVEL: 'info' }, nodeArgs),
  });
  const line = await waitForLogLine(child, (record) => typeof record.port === 'number' && typeof record.baseUrl === 'string');
  // Keep draining the child's output so a chatty server never blocks on a full pipe.
  child.stdout.resume();
  child.stderr.resume();
  return { child, port: line.port };
}

// ---- HTTP -----------------------------------------------------------------------------------

const AUTH = 'Bearer bench';

class Api {
  constructor(agent, port) {
    this.agent = agent;
    this.port = port;
  }

  /** One request; resolves {status, headers, body: Buffer}. Rejects only on transport failure. */
  request(method, path, headers, body) {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { agent: this.agent, host: '127.0.0.1', port: this.port, method, path, headers: { authorization: AUTH, 'content-length': body === undefined ? 0 : body.length, ...headers } },
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

async function phaseMixed(api, queue, config) {
  await mustCreate(api, queue);
  const producers = Math.max(1, Math.floor(config.clients / 2));
  const consumers = Math.max(1, config.clients - producers);
  const latencies = new Samples();
  const errors = new Errors();
  let issued = 0;
  let acked = 0;
  let producing = true;
  const startMs = performance.now();
  const deadlineMs = startMs + config.seconds * 1000;
  const intervalMs = 1000 / config.rate;
  const produce = async () => {
    while (issued < config.mixedCount && performance.now() < deadlineMs) {
      const scheduledMs = startMs + issued * intervalMs;
      issued += 1;
      const aheadMs = scheduledMs - performance.now();
      if (aheadMs > 1) await new Promise((resolve) => setTimeout(resolve, aheadMs));
      const payload = Buffer.alloc(config.payloadBytes, 0x63);
      payload.writeDoubleLE(performance.now(), 0);
      const answer = await api.send(queue, payload).catch((error) => ({ status: error.code ?? 'transport' }));
      if (answer.status !== 201) errors.add(`send ${answer.status}`);
    }
  };
  const consume = async () => {
    // Bounded: ends once producers finished and the queue answers empty, or at the deadline
    // plus the long-poll wait.
    while (performance.now() < deadlineMs + 2_000) {
      const delivery = await api.receive(queue, 1).catch((error) => ({ status: error.code ?? 'transport' }));
      if (delivery.status === 204) {
        if (!producing) return;
        continue;
      }
      if (delivery.status !== 200) {
        errors.add(`recv ${delivery.status}`);
        continue;
      }
      const sentAtMs = delivery.body.readDoubleLE(0);
      const answer = await api.ack(delivery.headers['svc-lease']).catch((error) => ({ status: error.code ?? 'transport' }));
      if (answer.status === 204) {
        acked += 1;
        latencies.add(performance.now() - sentAtMs);
      } else errors.add(`ack ${answer.status}`);
    }
  };
  const consuming = parallel(consumers, consume);
  await parallel(producers, produce);
  producing = false;
  await consuming;
  const result = phaseResult(`send->ack at ${config.rate}/s`, acked, performance.now() - startMs, latencies, errors);
  return { ...result, rate: config.rate, producers, consumers };
}

/**
 * Runs a phase and adds the CPU the server and this load generator spent on it: total ms,
 * percent of one core over the phase, and server microseconds per operation, which (unlike
 * ops/s) hardly depends on what else the shared cores are running.
 */
async function withCpu(serverPid, phase) {
  const serverBeforeMs = processCpuMs(serverPid);
  const selfBefore = process.cpuUsage();
  const result = await phase();
  const serverAfterMs = processCpuMs(serverPid);
  const self = process.cpuUsage(selfBefore);
  const elapsedMs = result.seconds * 1000;
  const serverCpuMs = serverBeforeMs === undefined || serverAfterMs === undefined ? null : serverAfterMs - serverBeforeMs;
  const loadCpuMs = (self.user + self.system) / 1000;
  return {
    ...result,
    serverCpuMs,
    serverCpuPct: serverCpuMs === null ? null : round((100 * serverCpuMs) / elapsedMs),
    serverCpuUsPerOp: serverCpuMs === null || result.ops === 0 ? null : round((1000 * serverCpuMs) / result.ops),
    loadGenCpuPct: round((100 * loadCpuMs) / elapsedMs),
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

function report({ machine, command, config, phases }) {
  printTable(
    ['phase', 'ops', 'seconds', 'ops/s', 'p50 ms', 'p99 ms', 'server cpu %', 'server us/op', 'loadgen cpu %', 'errors'],
    phases.map((p) => [
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
  );
  process.stdout.write('ops: a send; a receive+ack cycle (two requests); an acked message in the mixed phase.\n');
  process.stdout.write('server us/op: server CPU per op; 1e6 / it = ops/s one dedicated core could do.\n');
  const [sendPhase, cyclePhase] = phases;
  const targets = {
    sendsPerS: { target: TARGET_SENDS_PER_S, measured: sendPhase.opsPerS, met: sendPhase.opsPerS >= TARGET_SENDS_PER_S },
    cyclesPerS: { target: TARGET_CYCLES_PER_S, measured: cyclePhase.opsPerS, met: cyclePhase.opsPerS >= TARGET_CYCLES_PER_S },
  };
  process.stdout.write(
    `targets: sends/s ${targets.sendsPerS.measured} (>= ${TARGET_SENDS_PER_S}: ${targets.sendsPerS.met ? 'met' : 'NOT met'}), ` +
      `receive+ack/s ${targets.cyclesPerS.measured} (>= ${TARGET_CYCLES_PER_S}: ${targets.cyclesPerS.met ? 'met' : 'NOT met'})\n`,
  );
  const loadAvg1mAtEnd = Number(os.loadavg()[0].toFixed(2));
  process.stdout.write(`load average (1 min): ${machine.loadAvg1m} at start, ${loadAvg1mAtEnd} at end, on ${machine.cores} cores\n`);
  const path = writeResults('local', { benchmark: 'local', startedAt: new Date().toISOString(), command, machine, loadAvg1mAtEnd, config, phases, targets });
  process.stdout.write(`wrote ${path}\n`);
}

function parallel(count, task) {
  return Promise.all(Array.from({ length: count }, () => task()));
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
      process.stderr.write(`bench local failed: ${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}
